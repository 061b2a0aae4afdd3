"""Markdown tables → aligned monospace tables in a code block.

Discord does not render Markdown tables: a GitHub-style table arrives as rows of pipes that
do not line up, unreadable on a phone. Each table outside code fences becomes a code block
holding the same cells padded to a common display width, honouring the ``:---:`` alignment
markers. Inline Markdown in cells (``**x**``, ```x```, links) would show literally inside a
code block, so it is unwrapped to plain text first.

Width is counted in terminal columns, not code points: East Asian wide and fullwidth
characters (and most emoji) take two, combining marks and joiners none. Everything that is
not a table is returned byte for byte.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["display_width", "render_tables"]

# Fences as in split.py (CommonMark: ≤ 3 spaces, 3+ backticks or tildes).
_OPENER = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_DELIMITER_CELL = re.compile(r":?-+:?")

_CODE_SPAN = re.compile(r"(?<![\\`])(`+)(.+?)(?<!`)\1(?!`)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_LINK = re.compile(r"!?\[([^\]]*)\]\(([^()\s]*)\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_EM_STAR = re.compile(r"\*(?=[^\s*])(.+?)(?<=[^\s*])\*")
_EM_UNDERSCORE = re.compile(r"(?<!\w)_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)")
# Escaped punctuation is parked in a private-use plane while emphasis is removed, so that
# `\*` stays a literal star.
_PARK = 0xF0000

_COLUMN_GAP = " | "
_RULE_GAP = "-+-"


def render_tables(text: str) -> str:
    """Replace every Markdown table outside code fences with an aligned code block."""
    if "|" not in text or "-" not in text:
        return text  # the common case: nothing that could be a table
    lines = text.split("\n")
    out: list[str] = []
    fence: tuple[str, int] | None = None
    changed = False
    i = 0
    while i < len(lines):
        if fence is None:
            block, end = _table_at(lines, i)
            if block is not None:
                out.append(block)
                changed, i = True, end
                continue
        fence = _fence_after(fence, lines[i].rstrip("\r"))
        out.append(lines[i])
        i += 1
    return "\n".join(out) if changed else text


def _fence_after(fence: tuple[str, int] | None, line: str) -> tuple[str, int] | None:
    """The fence (character, length) open after ``line``; same rules as split.py."""
    if fence is None:
        m = _OPENER.fullmatch(line)
        if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):
            return None
        return m.group(1)[0], len(m.group(1))
    m = _CLOSER.fullmatch(line)
    if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1]:
        return None
    return fence


def _table_at(lines: list[str], i: int) -> tuple[str | None, int]:
    """The code block for a table whose header is line ``i``, and the line after it."""
    if i + 1 >= len(lines) or not _has_pipe(lines[i]) or not _has_pipe(lines[i + 1]):
        return None, i
    header = _cells(lines[i])
    aligns = _alignments(_cells(lines[i + 1]))
    if aligns is None or len(aligns) != len(header):
        return None, i  # GFM: the delimiter row must have as many cells as the header
    end = i + 2
    while end < len(lines) and _is_body_row(lines[end]):
        end += 1
    rows = [header] + [_cells(line) for line in lines[i + 2 : end]]
    return _format(rows, aligns), end


def _is_body_row(line: str) -> bool:
    return bool(line.strip()) and _has_pipe(line) and _OPENER.fullmatch(line) is None


def _has_pipe(line: str) -> bool:
    """True if ``line`` holds a pipe that is not escaped as ``\\|``."""
    start = 0
    while (pos := line.find("|", start)) >= 0:
        if pos == 0 or line[pos - 1] != "\\":
            return True
        start = pos + 1
    return False


def _cells(line: str) -> list[str]:
    """Split a row on unescaped pipes (optional outer pipes dropped); ``\\|`` becomes ``|``."""
    row = line.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    cells, current, pos = [], [], 0
    while pos < len(row):
        if row.startswith("\\|", pos):
            current.append("|")
            pos += 2
            continue
        if row[pos] == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(row[pos])
        pos += 1
    cells.append("".join(current).strip())
    return cells


def _alignments(cells: list[str]) -> list[str] | None:
    """``l``/``r``/``c`` per column from a delimiter row, or None if it is not one."""
    aligns = []
    for cell in cells:
        if not _DELIMITER_CELL.fullmatch(cell):
            return None
        left, right = cell.startswith(":"), cell.endswith(":")
        aligns.append("c" if left and right else "r" if right else "l")
    return aligns


def _format(rows: list[list[str]], aligns: list[str]) -> str | None:
    """The fenced block, or None when a cell would close the fence early."""
    rows = [[_plain(cell) for cell in row] for row in rows]
    if any("```" in cell for row in rows for cell in row):
        return None
    columns = max(len(row) for row in rows)
    aligns = aligns + ["l"] * (columns - len(aligns))  # keep extra cells rather than lose text
    rows = [row + [""] * (columns - len(row)) for row in rows]
    widths = [max(1, *(display_width(row[c]) for row in rows)) for c in range(columns)]
    rule = _RULE_GAP.join("-" * w for w in widths)
    lines = [_format_row(row, widths, aligns) for row in rows]
    return "\n".join(["```", lines[0], rule, *lines[1:], "```"])


def _format_row(row: list[str], widths: list[int], aligns: list[str]) -> str:
    cells = zip(row, widths, aligns, strict=True)
    return _COLUMN_GAP.join(_pad(cell, width, align) for cell, width, align in cells).rstrip()


def _pad(cell: str, width: int, align: str) -> str:
    gap = width - display_width(cell)
    if align == "r":
        return " " * gap + cell
    if align == "c":
        return " " * (gap // 2) + cell + " " * (gap - gap // 2)
    return cell + " " * gap


def _plain(cell: str) -> str:
    """Cell text without inline Markdown; code spans are kept verbatim (minus backticks)."""
    parts, pos = [], 0
    for m in _CODE_SPAN.finditer(cell):
        parts.append(_unwrap_inline(cell[pos : m.start()]))
        code = m.group(2)
        if len(code) > 2 and code.startswith(" ") and code.endswith(" "):
            code = code[1:-1]  # CommonMark strips one padding space (`` `x` ``)
        parts.append(code)
        pos = m.end()
    parts.append(_unwrap_inline(cell[pos:]))
    return "".join(parts).replace("\t", " ")


def _unwrap_inline(text: str) -> str:
    if not any(ch in text for ch in "\\*_~[<"):
        return text
    text = _ESCAPE.sub(lambda m: chr(_PARK + ord(m.group(1))), text)
    text = _BREAK.sub(" ", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _LINK.sub(_link_text, text)
    for pattern in (_STRONG, _STRIKE, _EM_STAR, _EM_UNDERSCORE):
        text = pattern.sub(lambda m: m.group(m.lastindex or 0), text)
    return "".join(chr(ord(ch) - _PARK) if _PARK < ord(ch) < _PARK + 0x7F else ch for ch in text)


def _link_text(m: re.Match[str]) -> str:
    label, url = m.group(1).strip(), m.group(2)
    if not url or label == url:
        return label or url
    return f"{label} ({url})" if label else url


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes in a monospace font (wcwidth-style)."""
    width = 0
    last = 0  # width of the previous visible character
    joined = False  # the previous character was a zero-width joiner
    for ch in text:
        w = _char_width(ch)
        if ch == "\ufe0f" and last == 1:
            w = 1  # emoji presentation selector widens a text-style symbol (❤️)
        elif joined or ("\U0001f3fb" <= ch <= "\U0001f3ff" and last == 2):
            w = 0  # part of an emoji sequence: drawn as one glyph
        joined = ch == "\u200d"
        if w:
            last = w
        width += w
    return width


def _char_width(ch: str) -> int:
    if ch < "\u0300":
        return 1 if " " <= ch <= "~" or ch >= "\xa0" else 0  # fast path for Latin text
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf", "Cc"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
