"""A usage limit on Codex's screen: no hook fires for it (docs/codex.md), so it is read there.

Measured (0.171.0 at 160 columns; 0.150.1 at 90, which writes ``You've``), the turn ends with
Codex's own notice at the start of a line, wrapped at the pane's width, then the input box::

    › one more

    ■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit …
    at 10:13 AM.

    › Ask Codex to do anything

The reset is the local time, with the date when it is not today (``at Dec 1st, 2026 8:13
AM.``), or ``try again later.`` when the API gave none. A reply's lines stand indented under
its ``•``, so a model that writes the same sentence does not make a notice: only a line that
starts with ``■`` counts, below the latest prompt shown, with nothing but blank lines between
it and an empty input box. Pure functions over a captured screen (plain text).
"""

from __future__ import annotations

import re
import time

from bridge.codex.screen import POINTER, input_box, is_busy

NOTICE = re.compile(r"■ You['’]ve hit your usage limit\b")
# "try again at 7:01 AM", "try again at Dec 1st, 2026 8:13 AM" (any whitespace: it wraps)
RESET = re.compile(
    r"try\s+again\s+at\s+(?:(?P<month>[A-Z][a-z]{2})\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,\s+"
    r"(?P<year>\d{4})\s+)?(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>[AP]M)\b"
)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
SAID_LIMIT = 600  # characters of the notice kept


def usage_limit(screen: str) -> str | None:
    """The usage-limit notice that ended the latest turn on ``screen`` (its wrapped lines
    joined), or None: none, one of an earlier turn, or Codex busy or showing a dialog."""
    if is_busy(screen) or input_box(screen) != "":
        return None
    lines = screen.splitlines()
    box = max(i for i, line in enumerate(lines) if line.startswith(POINTER))
    end = box
    while end > 0 and not lines[end - 1].strip():
        end -= 1  # the blank lines above the box
    start = end
    while start > 0 and lines[start - 1].strip():
        start -= 1  # the paragraph right above them
    if start == end or not NOTICE.match(lines[start]):
        return None
    said = " ".join(line.strip() for line in lines[start:end])
    return said[:SAID_LIMIT]


def reset_at(said: str, now: float) -> float | None:
    """When the notice says the limit resets: the end of the local minute it shows (Codex
    rounds the reset down to the minute: the reset may be anywhere in it), or None."""
    found = RESET.search(said)
    if not found:
        return None
    hour = int(found["hour"]) % 12 + (12 if found["half"] == "PM" else 0)
    minute = int(found["minute"])
    local = time.localtime(now)
    if found["month"] in MONTHS:
        date = (int(found["year"]), MONTHS.index(found["month"]) + 1, int(found["day"]))
    elif found["month"]:
        return None
    else:
        date = (local.tm_year, local.tm_mon, local.tm_mday)
    try:
        at = time.mktime((*date, hour, minute, 0, 0, 0, -1))
    except (OverflowError, ValueError):
        return None
    if not found["month"]:
        while at <= now - 60:  # a time of day already past: tomorrow's
            at += 86400
    return at + 60
