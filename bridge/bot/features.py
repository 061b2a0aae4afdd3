"""The bot's features, found rather than listed.

A feature is a module of one of the bot's rooms (the packages of ``bridge/bot/``) that has a
``register(bot)`` function, as a discord.py extension has ``setup(bot)``: it adds its
persistent items (buttons and selects that match custom ids posted before a restart), its
slash commands and its listeners, once ``BridgeBot`` has built the parts they reach. A new
feature is a new module in its room; there is no list to keep in step.

>>> names = [module.__name__ for module in feature_modules()]
>>> "bridge.bot.turn.catchup" in names, "bridge.bot.turn.relay" in names
(True, False)
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import bridge.bot


def feature_modules() -> list[ModuleType]:
    """Every room's modules that have ``register(bot)``, room by room, each in name order (an
    order that does not change with the file system's)."""
    found = []
    for room in _packages(bridge.bot):
        for module in _modules(room):
            if callable(getattr(module, "register", None)):
                found.append(module)
    return found


def _packages(package: ModuleType) -> list[ModuleType]:
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__) if info.ispkg)
    return [importlib.import_module(f"{package.__name__}.{name}") for name in names]


def _modules(package: ModuleType) -> list[ModuleType]:
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__))
    return [importlib.import_module(f"{package.__name__}.{name}") for name in names]
