"""``/keys``: words between key names are typed as one text with their spaces; key names (and
their aliases, any case) are pressed as keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.agents import agent_for
from bridge.sessions.pane_ops import opens_agent_view, parse_keys


@pytest.mark.parametrize(
    ("keys", "steps"),
    [
        ("hello there", [("text", "hello there")]),
        ("hello there Enter", [("text", "hello there"), ("key", "Enter")]),
        ("2 Enter", [("text", "2"), ("key", "Enter")]),
        ("  a   b  ", [("text", "a   b")]),
        (
            "esc hi\tyou C-c x",
            [("key", "Escape"), ("text", "hi you"), ("key", "C-c"), ("text", "x")],
        ),
        ("down DOWN enter", [("key", "Down"), ("key", "Down"), ("key", "Enter")]),
        ("say \x1b[31mred\x07 Enter", [("text", "say red"), ("key", "Enter")]),
        ("", []),
    ],
)
def test_parse_keys(keys: str, steps: list[tuple[str, str]]) -> None:
    assert parse_keys(keys) == steps


BOX = "────\n❯ {}\n────\n  ⏸ manual mode on\n"
DIALOG = "────\n  Do you want to proceed?\n  ❯ 1. Yes\n    2. No\n\n  Esc to cancel\n"


@pytest.mark.parametrize(
    ("screen", "keys", "opens"),
    [
        (BOX.format(""), "Left", True),  # the agent view
        (BOX.format(""), "left", True),
        (BOX.format(""), "abc Left", False),  # moves the cursor in the text
        (BOX.format("draft"), "Left Left", False),
        (BOX.format("draft"), "C-u Left", True),  # the box is empty again
        (BOX.format("draft"), "Enter Left", True),
        (BOX.format(""), "x Escape Left", True),
        (DIALOG, "Left", False),  # a dialog's own ←
        (DIALOG, "Enter Left", True),  # the dialog may be gone by then
        (BOX.format(""), "Right Down", False),
    ],
)
def test_left_into_an_empty_box_opens_the_agent_view(screen: str, keys: str, opens: bool) -> None:
    assert opens_agent_view(parse_keys(keys), screen) is opens


CODEX_SCREENS = Path(__file__).parents[1] / "codex" / "screens"


@pytest.mark.parametrize(
    ("captured", "keys", "opens"),
    [
        ("0.171.0-idle.txt", "Left", True),  # its agent command center
        ("0.171.0-idle.txt", "abc Left", False),
        ("0.171.0-typed.txt", "Left", False),  # moves the cursor in the text
        ("0.171.0-typed.txt", "C-u Left", True),
        ("0.171.0-trust.txt", "Left", False),  # a dialog's own ←
    ],
)
def test_left_into_codexs_empty_box_is_read_off_codexs_screen(
    captured: str, keys: str, opens: bool
) -> None:
    """Codex's box (`› Ask Codex to do anything`, "← for agents" below) read with Codex's
    screen reader: Claude Code's reads no box there and let the ← through."""
    screen = (CODEX_SCREENS / captured).read_text()
    assert opens_agent_view(parse_keys(keys), screen, agent_for("codex").screen) is opens
