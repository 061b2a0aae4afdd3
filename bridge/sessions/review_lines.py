"""Line numbers for a review: a file's diff numbered by its new side, the lines a comment is
on (as the owner types them: ``12`` or ``12-18``), and those lines followed through what
changed in the file since (a later turn's edits move them, or change them).

Pure: the diffs come from ``bridge/sessions/changes.py`` (``file_patch``), the reading and
typing from ``bridge/bot/changes/review.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_RANGE = re.compile(r"^L?(\d{1,9})(?:\s*(?:-|–|—|:|\.\.|to)\s*L?(\d{1,9}))?$", re.IGNORECASE)
BAR = "│"


@dataclass(frozen=True)
class Hunk:
    """``@@ -old_start,old_count +new_start,new_count @@``: a count of 0 means the lines were
    inserted after (``old``) or deleted after (``new``) that line."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int

    @property
    def old_end(self) -> int:
        return self.old_start + self.old_count - 1


@dataclass(frozen=True)
class Followed:
    """Where a comment's lines are now: ``start``–``end`` in the file as it is, whether a
    change since touched them (``changed``), and whether none of them is left (``removed``)."""

    start: int
    end: int
    changed: bool
    removed: bool = False


def parse_hunks(patch: str) -> list[Hunk]:
    """The hunk headers of a unified diff (one file), in order."""
    hunks = []
    for line in patch.splitlines():
        found = _HUNK.match(line)
        if found:
            a, b, c, d = found.groups()
            hunks.append(Hunk(int(a), int(b or 1), int(c), int(d or 1)))
    return hunks


def numbered(patch: str) -> list[str]:
    """The hunks of one file's diff, each line with its number in the new file:
    ``+  12 │ added``, ``   13 │ context``, ``-     │ removed`` (a ``diff`` code block still
    colours them by their first character); hunk headers kept, file headers dropped."""
    lines = patch.splitlines()
    top = max((h.new_start + h.new_count for h in parse_hunks(patch)), default=1)
    width = len(str(top))
    out: list[str] = []
    number = 0
    in_hunk = False
    for line in lines:
        found = _HUNK.match(line)
        if found:
            in_hunk = True
            number = int(found.group(3))
            out.append(line)
        elif not in_hunk:
            if line.startswith("Binary files "):
                out.append(line)
        elif line.startswith("+"):
            out.append(f"+{number:>{width}} {BAR} {line[1:]}")
            number += 1
        elif line.startswith(" "):
            out.append(f" {number:>{width}} {BAR} {line[1:]}")
            number += 1
        elif line.startswith("-"):
            out.append(f"-{'':>{width}} {BAR} {line[1:]}")
        elif line.startswith("diff --git "):
            in_hunk = False  # another file (not asked for: one file per patch)
    return out


class BadLines(ValueError):
    """What the owner typed as lines is not lines of this file; the message says why."""


def parse_range(text: str, length: int, name: str = "the file") -> tuple[int, int]:
    """``12`` → (12, 12), ``12-18`` (or ``12–18``, ``12:18``, ``12..18``, ``L12-L18``,
    ``12 to 18``) → (12, 18); reversed ranges are turned round. :class:`BadLines` for
    anything else, or lines past ``length``."""
    found = _RANGE.match(text.strip())
    if not found:
        shown = text.strip()[:40] or "nothing"
        raise BadLines(f"Lines must be a number or a range such as 12 or 12-18 (got: {shown}).")
    start = int(found.group(1))
    end = int(found.group(2) or start)
    start, end = min(start, end), max(start, end)
    if start < 1:
        raise BadLines("Lines are numbered from 1.")
    if end > length:
        count = f"{length} line{'s' if length != 1 else ''}"
        raise BadLines(f"{name} has {count} now: line {end} is past its end.")
    return start, end


def follow(hunks: list[Hunk], start: int, end: int) -> Followed:
    """Lines ``start``–``end`` of the old side, on the new side of ``hunks`` (a ``-U0``
    diff): moved by the lines inserted or deleted above them, ``changed`` when a hunk
    replaced, deleted or inserted lines among them. A line in a hunk that rewrote as many
    lines as it took keeps its place in it; in any other hunk it stands for the hunk's
    new lines (git cannot say which of them it became)."""
    touched = [h for h in hunks if _touches(h, start, end)]
    new_start = _map(hunks, start)
    new_end = _map(hunks, end)
    for hunk in touched:
        same = hunk.old_count == hunk.new_count  # lines rewritten one for one: kept in place
        if hunk.old_count and hunk.old_start <= start <= hunk.old_end:
            new_start = (
                hunk.new_start + start - hunk.old_start
                if same
                else hunk.new_start
                if hunk.new_count
                else hunk.new_start + 1
            )
        if hunk.old_count and hunk.old_start <= end <= hunk.old_end:
            new_end = (
                hunk.new_start + end - hunk.old_start
                if same
                else hunk.new_start + hunk.new_count - 1
                if hunk.new_count
                else hunk.new_start
            )
    if new_end < new_start:
        return Followed(new_start, new_start - 1, True, removed=True)
    return Followed(new_start, new_end, bool(touched))


def _touches(hunk: Hunk, start: int, end: int) -> bool:
    if hunk.old_count == 0:  # lines inserted after old line old_start
        return start <= hunk.old_start < end
    return hunk.old_start <= end and hunk.old_end >= start


def _map(hunks: list[Hunk], line: int) -> int:
    """An old line no hunk touches, on the new side: shifted by every hunk above it."""
    shift = 0
    for hunk in hunks:
        above = hunk.old_start < line if hunk.old_count == 0 else hunk.old_end < line
        if above:
            shift += hunk.new_count - hunk.old_count
    return line + shift
