"""Codex's screen read off captures of the real TUI (0.171.0 in tmux 160×45): its input box
(empty with a placeholder, holding text, while a turn runs), its busy marker, and the "Hooks
need review" dialog that replaces the box, read as options the bridge answers with keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.claude.dialogs import keys_for
from bridge.codex import screen

SCREENS = Path(__file__).parent / "screens"


def captured(name: str) -> str:
    return (SCREENS / f"0.171.0-{name}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "box", "busy"),
    [("idle", "", False), ("typed", "hello there", False), ("busy", "", True)],
)
def test_the_input_box_and_the_busy_marker(name: str, box: str, busy: bool) -> None:
    shown = captured(name)
    assert screen.input_box(shown) == box
    assert screen.is_busy(shown) is busy
    assert screen.read_dialog(shown) is None
    assert screen.is_prompt_ready(shown) is (box == "")


def test_the_hooks_trust_dialog_is_no_input_box_and_reads_as_a_plain_list() -> None:
    shown = captured("trust")
    assert screen.input_box(shown) is None  # nothing is ever typed into it
    dialog = screen.read_dialog(shown)
    assert dialog is not None
    assert dialog.question.splitlines()[0] == "Hooks need review"
    assert [o.label for o in dialog.options] == [
        "Review hooks",
        "Trust all and continue",
        "Continue without trusting (hooks won't run)",
    ]
    assert dialog.selected == 0
    # a digit only moves Codex's ›: arrows to the option, then Enter (checked before Enter)
    assert keys_for(dialog, 1) == ["Down", "Enter"]


def test_a_prompt_of_several_lines_is_read_whole() -> None:
    shown = "\n› first line\n  second line\n\n  gpt-5 default · /home/dev/proj\n"
    assert screen.input_box(shown) == "first line\nsecond line"


def test_a_history_line_above_a_dialog_is_not_taken_for_the_box() -> None:
    above = "› an earlier prompt\n\n  Hooks need review"
    shown = captured("trust").replace("  Hooks need review", above)
    assert screen.input_box(shown) is None
    assert screen.read_dialog(shown) is not None


def test_the_agent_command_center_is_no_input_box() -> None:
    """← in the empty box opens it (0.171.0): its `› ○ task` line is no box, so nothing is
    typed there (its keys: `n` new, enter open)."""
    shown = captured("agent-command-center")
    assert "Agent command center" in shown
    assert screen.input_box(shown) is None and screen.read_dialog(shown) is None
