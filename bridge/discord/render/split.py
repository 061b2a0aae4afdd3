"""Split Claude's Markdown reply into Discord-sized messages.

Discord rejects message content over 2000 characters, and a naive newline split
breaks code fences: the second half of a code block then renders as prose and
the rest of the reply as code.  Each chunk produced here is balanced on its own:
a chunk that ends inside a fence gets a closing fence line, and the next chunk
reopens it with the same opening line (so syntax highlighting survives).

Fences follow CommonMark closely enough for chat output: an opener is 3+
backticks or tildes indented by at most 3 spaces (a backtick opener's info
string may not contain backticks, so a one-line ```code``` is not an opener);
the closer uses the same character, is at least as long, and carries nothing
but whitespace.  Opener lines longer than a quarter of the limit are treated as
text, because re-opening them in every chunk would leave no room for content.

The algorithm is a single forward pass over the lines (every line is examined
at most twice), so long replies split in linear time.  A hard split never backs
off more than half a window; where a cut cannot avoid leaving a run of backticks
or tildes at the start of the next chunk (a run longer than a message), that
chunk starts with a zero-width space so the run cannot open or close a fence.
An optional ``deadline`` bounds the work: past it, :class:`SplitTimeout`.
"""

from __future__ import annotations

import time
import unicodedata

TYPE_CHECKING = False  # the Stop hook imports this module: no typing, re or dataclasses (~4 ms)
if TYPE_CHECKING:
    import re

__all__ = ["DISCORD_MESSAGE_LIMIT", "SplitTimeout", "close_open_fence", "split_message"]

DISCORD_MESSAGE_LIMIT = 2000
_MIN_LIMIT = 20
_FENCES = ("```", "~~~")  # no fence opens, closes or needs defusing in a text without these

# Compiled by _compile() when a text has a fence (``re`` costs a hook milliseconds to import).
_OPENER: re.Pattern[str]  # r"( {0,3})(`{3,}|~{3,})(.*)"
_CLOSER: re.Pattern[str]  # r" {0,3}(`{3,}|~{3,})[ \t]*"
# Text that would read as a fence if a hard split put it at the start of a line.
_FENCE_START: re.Pattern[str]  # r" {0,3}(?:```|~~~)"
# Starts a chunk that begins inside a line at a fence-like run (see the module notes).
_DEFUSE = "\u200b"


def _compile() -> None:
    global _OPENER, _CLOSER, _FENCE_START
    if "_OPENER" in globals():
        return
    import re

    _OPENER = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
    _CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
    _FENCE_START = re.compile(r" {0,3}(?:```|~~~)")


class SplitTimeout(Exception):
    """Splitting took longer than the caller's deadline allows."""


# Preference of split points; higher is better.
_SCORE_AFTER_OPENER = 0  # would leave an empty code block behind
_SCORE_IN_FENCE = 1  # costs a close/reopen pair and breaks the code visually
_SCORE_IN_TABLE = 1  # a table cut in half is hard to read
_SCORE_LINE = 2
_SCORE_PARAGRAPH = 3  # blank line, or right after a closing fence
_SCORE_END = 4  # the rest of the text fits


class _Fence:
    """An open code fence: the line that reopens it and the line that closes it."""

    __slots__ = ("close", "reopen")

    def __init__(self, reopen: str, close: str) -> None:
        self.reopen = reopen
        self.close = close


class _Lines:
    """Per-line facts for the text, computed once.

    ``content_end[i]`` excludes the newline; ``end[i]`` includes it.  ``after[i]``
    is the fence still open after line ``i`` (``before[i]`` the one open before).
    """

    __slots__ = ("after", "before", "blank", "content_end", "end", "start", "table")

    def __init__(self) -> None:
        self.start: list[int] = []
        self.content_end: list[int] = []
        self.end: list[int] = []
        self.before: list[_Fence | None] = []
        self.after: list[_Fence | None] = []
        self.blank: list[bool] = []
        self.table: list[bool] = []


def split_message(
    text: str, limit: int = DISCORD_MESSAGE_LIMIT, deadline: float | None = None
) -> list[str]:
    """Split ``text`` into chunks of at most ``limit`` characters (code points).

    Splits at paragraph boundaries near the end of the window where possible,
    else at the last line break, and hard-splits single over-long lines (at a
    space where one is near).  Code fences are closed at the end of a chunk and
    reopened at the start of the next.  Whitespace at split points is dropped;
    no chunk is empty or has trailing whitespace.  Empty input gives ``[]``.
    ``deadline`` (a ``time.monotonic()`` value) raises :class:`SplitTimeout` once passed.
    """
    if limit < _MIN_LIMIT:
        raise ValueError(f"limit must be at least {_MIN_LIMIT}, got {limit}")
    if not text.strip():
        return []
    if len(text) <= limit and not any(fence in text for fence in _FENCES):
        return [_trim(text)]  # one message, and no fence to close or reopen (most replies)
    _compile()
    lines = _scan_lines(text, max_opener=limit // 4, deadline=deadline)
    chunks: list[str] = []
    pos, li = 0, 0
    while li < len(lines.start):
        if deadline is not None and len(chunks) % 64 == 0 and time.monotonic() > deadline:
            raise SplitTimeout(f"split into {len(chunks)} messages so far")
        end, next_li = _next_split(text, lines, pos, li, limit)
        defuse = _needs_defusing(text, lines, pos, li, next_li)
        if defuse and _closes_fence(lines, li) and next_li > li + 1:
            end, next_li = lines.end[li], li + 1  # the defused closer must not close: stop here
        chunk = _render_chunk(text, lines, pos, li, end, next_li, defuse)
        if chunk:
            chunks.append(chunk)
        pos, li = end, next_li
    return chunks


def close_open_fence(text: str, limit: int = DISCORD_MESSAGE_LIMIT) -> str:
    """``text`` with a code block it leaves open (a reply cut off mid-code) closed, so what
    is appended after it (notes, the footer) is not shown as code."""
    if not any(fence in text for fence in _FENCES):
        return text
    _compile()
    fence: _Fence | None = None
    for line in text.split("\n"):
        fence = _next_fence_state(fence, line.rstrip("\r"), limit // 4)
    return text if fence is None else f"{text.rstrip()}\n{fence.close}"


def _scan_lines(text: str, max_opener: int, deadline: float | None = None) -> _Lines:
    """Record line boundaries and the fence state around every line."""
    lines = _Lines()
    fence: _Fence | None = None
    pos = 0
    while pos < len(text):
        if deadline is not None and len(lines.start) % 4096 == 0 and time.monotonic() > deadline:
            raise SplitTimeout(f"scanned {len(lines.start)} lines so far")
        nl = text.find("\n", pos)
        content_end = len(text) if nl < 0 else nl
        end = len(text) if nl < 0 else nl + 1
        content = text[pos:content_end].rstrip("\r")
        lines.start.append(pos)
        lines.content_end.append(content_end)
        lines.end.append(end)
        lines.before.append(fence)
        fence = _next_fence_state(fence, content, max_opener)
        lines.after.append(fence)
        lines.blank.append(not content.strip())
        lines.table.append(content.lstrip().startswith("|"))
        pos = end
    return lines


def _next_fence_state(fence: _Fence | None, line: str, max_opener: int) -> _Fence | None:
    """Apply one line to the fence state (CommonMark-style open/close rules)."""
    if fence is None:
        m = _OPENER.fullmatch(line)
        if m is None or len(line.rstrip()) > max_opener:
            return None
        marker, info = m.group(2), m.group(3)
        if marker[0] == "`" and "`" in info:
            return None
        return _Fence(reopen=line.rstrip(), close=marker)
    m = _CLOSER.fullmatch(line)
    if m and m.group(1)[0] == fence.close[0] and len(m.group(1)) >= len(fence.close):
        return None
    return fence


def _suffix_cost(fence: _Fence | None) -> int:
    """Characters needed to close ``fence`` at the end of a chunk ("\\n" + marker)."""
    return 0 if fence is None else len(fence.close) + 1


def _next_split(text: str, lines: _Lines, pos: int, li: int, limit: int) -> tuple[int, int]:
    """Choose where the chunk starting at ``pos`` (inside line ``li``) ends.

    Returns ``(end, next_line_index)``.  Only whole lines are considered unless
    not even the rest of line ``li`` fits, in which case that line is hard-split.
    """
    opening = lines.before[li]
    avail = limit - (len(opening.reopen) + 1 if opening else 0)
    if _FENCE_START.match(text, pos):
        avail -= len(_DEFUSE)  # in case this chunk must be defused
        if pos > lines.start[li] and _closes_fence(lines, li):
            avail -= _suffix_cost(lines.before[li])  # and closed (see _render_chunk)
    best: tuple[int, int] | None = None  # (score, line index), in the back half
    last: int | None = None
    for j in range(li, len(lines.start)):
        used = lines.content_end[j] - pos
        if used > avail:
            break
        if used + _suffix_cost(lines.after[j]) > avail:
            continue
        last = j
        score = _split_score(lines, j)
        if used >= avail // 2 and (best is None or score >= best[0]):
            best = (score, j)
    if last is None:
        return _hard_split(text, lines, pos, li, avail), li
    chosen = best[1] if best is not None else last
    return lines.end[chosen], chosen + 1


def _split_score(lines: _Lines, j: int) -> int:
    """How good a split after line ``j`` is for the reader."""
    n = len(lines.start)
    if j == n - 1:
        return _SCORE_END
    if lines.after[j] is not None:
        return _SCORE_AFTER_OPENER if lines.before[j] is None else _SCORE_IN_FENCE
    if lines.before[j] is not None or lines.blank[j] or lines.blank[j + 1]:
        return _SCORE_PARAGRAPH
    if lines.table[j] and lines.table[j + 1]:
        return _SCORE_IN_TABLE
    return _SCORE_LINE


def _hard_split(text: str, lines: _Lines, pos: int, li: int, avail: int) -> int:
    """Cut the over-long line ``li`` so that ``text[pos:cut]`` fits the chunk."""
    budget = max(1, avail - _suffix_cost(lines.before[li]))
    cut = pos + budget
    space = text.rfind(" ", pos + budget // 2, cut)
    if space >= 0:
        cut = space + 1  # the space ends this chunk and is stripped there
    cut = _avoid_breaking_cluster(text, pos, cut)
    # A remainder beginning with ``` or ~~~ would turn into a fence line in the
    # next chunk; move the cut back until it no longer does, but never by more
    # than half the window (stepping back through a long run one character per
    # chunk made splitting quadratic). Past that, the next chunk is defused.
    floor = max(pos + 1, cut - max(1, budget // 2))
    back = cut
    while back > floor and _FENCE_START.match(text, back):
        back -= 1
    return cut if _FENCE_START.match(text, back) else back


def _needs_defusing(text: str, lines: _Lines, pos: int, li: int, next_li: int) -> bool:
    """A piece of a hard-split line that starts like a fence line could open or close a
    fence its line never did; such a chunk starts with a zero-width space."""
    hard_split = next_li == li or pos > lines.start[li]
    return hard_split and _FENCE_START.match(text, pos) is not None


def _avoid_breaking_cluster(text: str, pos: int, cut: int) -> int:
    """Step back a few characters so a combining mark stays with its base."""
    for back in range(9):
        c = cut - back
        if c >= len(text) or c <= pos:
            break
        if not _continues_cluster(text[c]) and text[c - 1] != "\u200d":
            return c
    return cut


def _continues_cluster(ch: str) -> bool:
    """True for characters that attach to the previous one (marks, ZWJ, selectors)."""
    return (
        unicodedata.combining(ch) != 0
        or ch == "\u200d"
        or "\ufe00" <= ch <= "\ufe0f"
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
        or "\U000e0020" <= ch <= "\U000e007f"
    )


def _trim(body: str) -> str:
    """``body`` without its leading blank lines (the first line's indent stays) or its
    trailing whitespace."""
    first = len(body) - len(body.lstrip(" \t\r\n"))
    return body[body.rfind("\n", 0, first) + 1 :].rstrip()


def _closes_fence(lines: _Lines, li: int) -> bool:
    return lines.before[li] is not None and lines.after[li] is None


def _render_chunk(
    text: str, lines: _Lines, pos: int, li: int, end: int, next_li: int, defuse: bool = False
) -> str:
    """Build one message: reopened fence + trimmed content + closing fence."""
    body = _trim(text[pos:end])
    if not body:
        return ""
    if defuse:
        body = _DEFUSE + body
    opening = lines.before[li]
    # A chunk that ends on a complete line takes that line's state; a hard
    # split stays in the state the line started in.
    closing = lines.after[next_li - 1] if next_li > li else lines.before[li]
    if defuse and next_li == li + 1 and _closes_fence(lines, li):
        closing = lines.before[li]  # the closer's defused tail does not close: we do
    head = opening.reopen + "\n" if opening else ""
    tail = "\n" + closing.close if closing else ""
    return head + body + tail
