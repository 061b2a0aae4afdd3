"""The bot's features are found, not listed: every room module with ``register(bot)``."""

from __future__ import annotations

import ast
import doctest
from pathlib import Path

import bridge.bot
from bridge.bot import features

BOT = Path(bridge.bot.__file__).parent


def modules_defining_register() -> set[str]:
    """Read from the sources: the room modules with a top-level ``def register``."""
    found = set()
    for path in BOT.glob("*/*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(node, ast.FunctionDef) and node.name == "register" for node in tree.body):
            found.add(f"bridge.bot.{path.parent.name}.{path.stem}")
    return found


def test_every_room_module_with_register_is_a_feature_and_nothing_else() -> None:
    names = [module.__name__ for module in features.feature_modules()]
    assert set(names) == modules_defining_register()
    assert len(names) == len(set(names))
    assert "bridge.bot.turn.catchup" in names and "bridge.bot.control.commands" in names


def test_the_order_is_room_by_room_then_by_name() -> None:
    names = [module.__name__ for module in features.feature_modules()]
    assert names == sorted(names, key=lambda name: name.split(".")[2:])


def test_the_docstring_example_holds() -> None:
    assert doctest.testmod(features).failed == 0
