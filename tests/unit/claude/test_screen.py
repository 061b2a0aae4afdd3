"""Reading Claude Code's screen on both tested versions (bridge.claude.versions.TESTED).

The screens are real captures (tmux capture-pane, trimmed to their last lines and rules
shortened) of 2.1.330 and 2.1.197, both with the bridge's statusLine ("Opus ctx 2%").
"""

from __future__ import annotations

import pytest

from bridge.claude.screen import (
    holds_queued,
    input_box,
    is_busy,
    is_prompt_ready,
    mode_on_screen,
    signature,
)

RULE = "─" * 60


def screen(*lines: str) -> str:
    return "\n".join(lines) + "\n"


BOX = (RULE, "❯ ", RULE)

# 2.1.330: the footer always names the mode and says "esc to interrupt" while a turn runs.
NEW_IDLE = screen(
    "● Model saw: hello",
    "",
    *BOX,
    "  Opus ctx 2%",
    "  ⏸ manual mode on · ? for shortcuts · ← for agents",
)
NEW_BUSY = screen(
    "✻ Metamorphosing…",
    "",
    *BOX,
    "  Opus ctx 2%",
    "  ⏸ manual mode on · esc to interrupt · ← for agents",
)
NEW_PLAN_BUSY = screen(
    "* Precipitating… (3s · ↓ 36 tokens)",
    "  ⎿  Tip: Start small, ask Claude for a plan, and check its edits",
    "",
    *BOX,
    "  Opus ctx 2%",
    "  ⏸ plan mode on (shift+tab to cycle) · esc to interrupt",
)
# 2.1.197: no marker in the default mode, and with a statusLine no "esc to interrupt" either.
OLD_IDLE = screen(
    "● Model saw: hello", "", "✻ Crunched for 0s", "", *BOX, "  Opus ctx 2%", "  ← for agents"
)
OLD_IDLE_NO_STATUSLINE = screen(
    "● Model saw: hello", "", *BOX, "  ? for shortcuts · ← for agents     ● high"
)
OLD_BUSY = screen("❯ slow one", "", "✢ Swooping…", "", *BOX, "  Opus ctx 2%", "  ← for agents")
OLD_TOOL_BUSY = screen(
    "● Bash(sleep 5; echo hi)",
    "  ⎿  Running… (3s)",
    "     (ctrl+b ctrl+b (twice) to run in background)",
    "",
    "· Honking… (4s · ↓ 30 tokens)",
    "  ⎿  Tip: Start with small features or bug fixes, tell Claude to propose",
    "",
    *BOX,
    "  Opus ctx 2%",
    "  ← for agents",
)
OLD_PLAN_BUSY = screen(
    "· Simmering…",
    "  ⎿  Tip: Start with small features",
    "",
    *BOX,
    "  Opus 4.8 (1M context) · ctx 2% · $0.12",
    "  ⏸ plan mode on (shift+tab to cycle) · ← for agents",
)
OLD_ACCEPT = screen(*BOX, "  ⏵⏵ accept edits on (shift+tab to cycle) · ← for agents")
# 2.1.197 with the agent view off (bridge sessions): the default mode's footer is only the
# statusLine's line (captured with "SL" as the statusLine).
OLD_IDLE_NO_AGENT_VIEW = screen(*BOX, "  SL" + " " * 40 + "● high · /effort", "")
DIALOG = screen(
    RULE,
    " Bash command",
    "   rm -rf build",
    " Do you want to proceed?",
    " ❯ 1. Yes",
    "   2. No",
    "",
    " Esc to cancel · Tab to amend",
)


@pytest.mark.parametrize(
    ("text", "busy"),
    [
        (NEW_IDLE, False),
        (NEW_BUSY, True),
        (NEW_PLAN_BUSY, True),
        (OLD_IDLE, False),
        (OLD_IDLE_NO_STATUSLINE, False),
        (OLD_BUSY, True),
        (OLD_TOOL_BUSY, True),
        (OLD_PLAN_BUSY, True),
    ],
)
def test_busy_is_read_from_the_footer_or_the_spinner(text: str, busy: bool) -> None:
    assert is_busy(text) is busy


def test_a_finished_turns_summary_or_a_bullet_in_the_reply_is_not_a_spinner() -> None:
    reply = screen(
        "● Steps:", "* Loading… the data", "✻ Crunched for 2s", "", *BOX, "  ← for agents"
    )
    assert not is_busy(reply)


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        (NEW_IDLE, "default"),
        (NEW_PLAN_BUSY, "plan"),
        (OLD_IDLE, "default"),
        (OLD_IDLE_NO_STATUSLINE, "default"),
        (OLD_BUSY, "default"),
        (OLD_PLAN_BUSY, "plan"),
        (OLD_ACCEPT, "acceptEdits"),
        (OLD_IDLE_NO_AGENT_VIEW, "default"),
        (DIALOG, None),  # no input box: nothing to read
    ],
)
def test_mode_is_read_on_both_versions(text: str, mode: str | None) -> None:
    assert mode_on_screen(text) == mode


# Footers of every mode on 2.1.332 (captured, `--permission-mode X` then BTab); 2.1.330 shows
# the same "don't ask on".
@pytest.mark.parametrize(
    ("footer", "mode"),
    [
        ("  ⏸ manual mode on · ← for agents", "default"),
        ("  ⏵⏵ accept edits on (shift+tab to cycle) · ← for agents", "acceptEdits"),
        ("  ⏸ plan mode on (shift+tab to cycle) · ← for agents", "plan"),
        ("  ⏵⏵ auto mode on (shift+tab to cycle) · ← for agents", "auto"),
        ("  ⏵⏵ bypass permissions on (shift+tab to cycle) · ← for agents", "bypassPermissions"),
        ("  ⏵⏵ don't ask on (shift+tab to cycle) · ← for agents", "dontAsk"),
    ],
)
def test_every_modes_footer_is_read(footer: str, mode: str) -> None:
    assert mode_on_screen(screen(*BOX, "  SL", footer)) == mode


def test_a_notice_in_place_of_the_mode_says_nothing_about_the_mode() -> None:
    assert mode_on_screen(screen(*BOX, "  Press Ctrl-C again to exit")) is None
    assert mode_on_screen(screen(*BOX, "  esc to close · esc again to quit")) is None


def test_the_empty_box_reads_ready_on_both_versions() -> None:
    assert is_prompt_ready(OLD_IDLE) and is_prompt_ready(NEW_IDLE)
    assert not is_prompt_ready(DIALOG)


# 2.1.332 (captured) with a message typed during the turn: queued, not sent to the model yet.
QUEUED = screen(
    "❯ first message",
    "❯ second message",
    "  ⎿  Queued · ctrl+x ctrl+s to send now",
    "✢ Roosting…",
    RULE,
    "❯ Press up to edit queued messages",
    RULE,
    "  ⏸ manual mode on · esc to interrupt · ← for agents",
)


def test_a_queued_message_is_read_from_the_empty_boxs_hint() -> None:
    assert holds_queued(QUEUED) and input_box(QUEUED) == ""  # the box is empty all the same
    assert not holds_queued(NEW_BUSY) and not holds_queued(NEW_IDLE)
    typed_over_it = QUEUED.replace("Press up to edit queued messages", "third message")
    assert not holds_queued(typed_over_it) and not holds_queued(DIALOG)


@pytest.mark.parametrize(
    "text",
    [
        NEW_BUSY,
        "Ünïcödé ✅ 👩\u200d👩\u200d👧 ١٢٣ ² ½ ｆｕｌｌ ß İ K ı",  # non-ASCII letters and digits
        "".join(map(chr, range(0x3000))),  # every code point up to there, controls included
        'it\'s "quoted" ; #{pane_id} \t\x7f\x01 tail42',
    ],
)
def test_the_signature_keeps_ascii_letters_and_digits_only(text: str) -> None:
    """What the box's wrapping cannot change: the typed text is compared on it."""
    assert signature(text) == "".join(c for c in text if c.isascii() and c.isalnum())
