"""Claude Code's dialogs read off real screens (captured from 2.1.330 in tmux, 120×40)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.claude.dialogs import keys_for, read_dialog

SCREENS = Path(__file__).parent / "screens"


def screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text()


def labels(name: str) -> list[str]:
    dialog = read_dialog(screen(name))
    assert dialog is not None
    return [o.label for o in dialog.options]


def test_folder_trust() -> None:
    dialog = read_dialog(screen("trust"))
    assert dialog is not None
    assert dialog.question.startswith("Accessing workspace:\n\n/tmp/scr/trust/proj\n")
    assert "Is this a project you created or one you trust?" in dialog.question
    assert dialog.question.endswith("Security guide")
    assert labels("trust") == ["No, exit", "Yes, I trust this folder"]
    assert dialog.selected == 0 and not dialog.numbered
    assert keys_for(dialog, 1) == ["Down", "Enter"]  # digits do nothing on this screen
    assert keys_for(dialog, 0) == ["Enter"]


def test_bypass_warning() -> None:
    dialog = read_dialog(screen("bypass"))
    assert dialog is not None
    assert dialog.question.startswith("WARNING: Claude Code running in Bypass Permissions mode")
    assert dialog.question.endswith("https://code.claude.com/docs/en/security")
    assert labels("bypass") == ["No, exit", "Yes, I accept"]
    assert keys_for(dialog, 1) == ["Down", "Enter"]


def test_api_key_approval_highlights_no() -> None:
    dialog = read_dialog(screen("apikey"))
    assert dialog is not None
    assert dialog.question.endswith("Do you want to use this API key?")
    assert labels("apikey") == ["Yes", "No (recommended)"]
    assert dialog.selected == 1
    assert keys_for(dialog, 0) == ["Up", "Enter"]


def test_numbered_permission_dialog() -> None:
    dialog = read_dialog(screen("permission"))
    assert dialog is not None and dialog.numbered
    assert dialog.question.splitlines()[0] == "Bash command"
    assert "touch perm-x.txt" in dialog.question and "╌" not in dialog.question
    assert dialog.question.endswith("Do you want to proceed?")
    assert [o.number for o in dialog.options] == [1, 2, 3, 4]
    assert dialog.options[3].label == "No"
    assert keys_for(dialog, 3) == ["4"]


def test_switch_model_below_a_panel_edge_not_the_history() -> None:
    dialog = read_dialog(screen("switch-model"))
    assert dialog is not None
    assert dialog.question.startswith("Switch model?")
    assert "❯ hi" not in dialog.question and "first answer" not in dialog.question
    assert labels("switch-model") == ["Yes, switch to Haiku 5.5", "No, go back"]
    assert keys_for(dialog, 0) == ["1"]


def test_mcp_multi_select_keeps_its_fingerprint_when_ticked() -> None:
    ticked, unticked = (
        read_dialog(screen("mcp-servers")),
        read_dialog(screen("mcp-servers-unchecked")),
    )
    at_end = read_dialog(screen("mcp-servers-enable"))
    assert ticked and unticked and at_end
    assert labels("mcp-servers") == ["[✔] demo", "[✔] other", "Enable selected"]
    assert labels("mcp-servers-unchecked") == ["[ ] demo", "[ ] other", "Enable selected"]
    assert ticked.options[0].toggles and not ticked.options[2].toggles
    assert ticked.fingerprint == unticked.fingerprint == at_end.fingerprint
    assert at_end.selected == 2 and keys_for(at_end, 0) == ["Up", "Up", "Enter"]


def test_different_dialogs_differ() -> None:
    prints = {
        read_dialog(screen(n)).fingerprint for n in ("trust", "bypass", "apikey", "permission")
    }  # type: ignore[union-attr]
    assert len(prints) == 4


def test_the_selection_is_not_part_of_the_fingerprint() -> None:
    moved = (
        screen("trust")
        .replace(" ❯ No, exit", "   No, exit")
        .replace("   Yes, I trust this folder", " ❯ Yes, I trust this folder")
    )
    dialog = read_dialog(moved)
    assert dialog is not None and dialog.selected == 1
    assert dialog.fingerprint == read_dialog(screen("trust")).fingerprint  # type: ignore[union-attr]
    assert keys_for(dialog, 1) == ["Enter"]


RULE = "─" * 40


@pytest.mark.parametrize(
    "text",
    [
        f"history\n{RULE}\n❯ \n{RULE}\n  ⏸ manual mode on",  # the input box
        f"{RULE}\n❯ typed but not sent\n{RULE}\n",
        "no dialog here at all",
        f"{RULE}\n Question?\n ❯ Only one option\n",
    ],
)
def test_no_dialog(text: str) -> None:
    assert read_dialog(text) is None


def test_a_wrapped_numbered_option_is_one_option() -> None:
    text = (
        f"{RULE}\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access to\n"
        "      /a/very/long/path\n   3. No\n\n Esc to cancel"
    )
    dialog = read_dialog(text)
    assert dialog is not None
    assert [o.label for o in dialog.options] == [
        "Yes",
        "Yes, and always allow access to /a/very/long/path",
        "No",
    ]


def test_a_dialog_without_a_list_offers_the_keys_its_last_line_names() -> None:
    """2.1.332's "Auto mode can't check actions in this session" (a gateway that drops the
    safety check): no ❯ list, its keys named below it; Esc is every screen prompt's own."""
    dialog = read_dialog(screen("auto-mode-unchecked"))
    assert dialog is not None
    assert dialog.question.startswith("Auto mode can't check actions in this session")
    assert dialog.question.endswith("permission-modes#server-side-classifier-review")
    assert labels("auto-mode-unchecked") == [
        "Enter: stay in auto mode",
        "shift+Tab: leave for accept edits mode and stop",
    ]
    assert keys_for(dialog, 0) == ["Enter"] and keys_for(dialog, 1) == ["BTab"]


def test_a_line_of_hints_under_the_input_box_is_no_dialog() -> None:
    hints = "  enter to return · space to reply · ctrl+x to remove · ? for shortcuts"
    box = f"────\n❯ \n────\n{hints}\n"
    assert read_dialog(box) is None
    text_only = "Claude Code\n\n  Press Enter to continue\n"
    assert read_dialog(text_only) is None
