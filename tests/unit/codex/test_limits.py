"""Codex's usage limit read off its screen (no hook fires for it): captures of the real TUI
after HTTP 429 ``usage_limit_reached`` (0.171.0 at 160 columns, 0.150.1 at 90), the notice's
wrapped lines joined and its reset read; a reply that repeats the sentence, an earlier turn's
notice and a busy screen are no limit."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bridge.agents import agent_for
from bridge.codex import limits

SCREENS = Path(__file__).parent / "screens"
BOX = "› Ask Codex to do anything"


def captured(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def cut_after(screen: str, marker: str) -> str:
    """The screen up to the paragraph holding ``marker``'s last line, then the input box."""
    lines = screen.splitlines()
    at = max(i for i, line in enumerate(lines) if marker in line)
    while at + 1 < len(lines) and lines[at + 1].strip():
        at += 1
    box = lines.index(BOX)
    return "\n".join([*lines[: at + 1], "", "", *lines[box:]])


@pytest.mark.parametrize(
    ("name", "apostrophe"), [("0.171.0-usage-limit", "’"), ("0.150.1-usage-limit-90", "'")]
)
def test_the_notice_that_ended_the_turn_is_read_whole(name: str, apostrophe: str) -> None:
    said = limits.usage_limit(captured(name))
    assert said is not None
    assert said.startswith(f"■ You{apostrophe}ve hit your usage limit. Upgrade to Pro")
    assert "to purchase more credits or try again at " in said  # the wrapped lines, joined
    assert said.endswith(" AM.") or said.endswith(" PM.")
    assert agent_for("codex").screen.usage_limit is limits.usage_limit
    assert agent_for("codex").screen.limit_reset is limits.reset_at
    assert agent_for("claude").screen.usage_limit is None  # its StopFailure hook says it


@pytest.mark.parametrize("name", ["0.171.0-usage-limit", "0.150.1-usage-limit-90"])
def test_a_reply_that_writes_the_sentence_is_no_limit(name: str) -> None:
    """The model answered with the notice's words (its lines indented under its •)."""
    faked = cut_after(captured(name), "try again at 3:00 AM.")
    assert "  ■ You’ve hit your usage limit." in faked
    assert limits.usage_limit(faked) is None


def test_an_earlier_turns_notice_is_no_limit_once_a_prompt_follows_it() -> None:
    shown = captured("0.171.0-usage-limit").replace(BOX, f"› please go on\n\n\n{BOX}")
    assert limits.usage_limit(shown) is None
    busy = shown.replace(BOX, f"• Working (1s • esc to interrupt)\n\n{BOX}")
    assert limits.usage_limit(busy) is None


def test_a_notice_is_read_only_at_an_empty_input_box() -> None:
    shown = captured("0.171.0-usage-limit")
    assert limits.usage_limit(shown.replace(BOX, "› typed ahead")) is None
    assert limits.usage_limit(shown.replace(BOX, "")) is None


def local(*fields: int) -> float:
    return time.mktime((*fields, 0, 0, -1))


SIX, EIGHT = local(2026, 11, 29, 6, 0, 0), local(2026, 11, 29, 8, 0, 0)  # local times


@pytest.mark.parametrize(
    ("said", "now", "expected"),
    [
        # the end of the minute shown: Codex rounds the reset down to it
        ("or try again at 7:01 AM.", SIX, local(2026, 11, 29, 7, 2, 0)),
        ("or try again\nat 10:13 PM.", SIX, local(2026, 11, 29, 22, 14, 0)),
        # a time of day already past is tomorrow's; 12 AM is midnight
        ("or try again at 7:01 AM.", EIGHT, local(2026, 11, 30, 7, 2, 0)),
        ("or try again at 12:30 AM.", EIGHT, local(2026, 11, 30, 0, 31, 0)),
        # another day: its date, wrapped anywhere
        (
            "or try again at Dec 1st,\n2026 8:13\nAM.",
            EIGHT,
            local(2026, 12, 1, 8, 14, 0),
        ),
        (
            "or try again at Jan 22nd, 2027 9:05 PM.",
            EIGHT,
            local(2027, 1, 22, 21, 6, 0),
        ),
        # none given, or one not read: an unknown reset
        ("Upgrade to Pro or try again later.", EIGHT, None),
        ("or try again at Foo 1st, 2026 8:13 AM.", EIGHT, None),
        ("or try again at 7 o'clock.", EIGHT, None),
    ],
)
def test_the_reset_is_read_as_the_screen_gives_it(said: str, now: float, expected: float) -> None:
    assert limits.reset_at(said, now) == expected
