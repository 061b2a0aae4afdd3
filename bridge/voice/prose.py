"""What of a Markdown reply is worth hearing: its prose, the rest named.

A reply read aloud is for a listener away from the screen: code blocks, tables and lists of
files are left out and named in their place ("(a code block)"), Markdown marks are dropped,
and a long reply is cut to its first paragraphs within a time budget (the text reply, which
always comes first, holds the whole).
"""

from __future__ import annotations

import re

# Words heard a minute: espeak-ng set to 160 (tts.ESPEAK_SPEED) took 64.7 s for 161 words of
# prose with its pauses at commas and full stops (measured), so the budget counts 150.
WORDS_PER_MINUTE = 150
# Characters heard a second: the same voice reads 15–20 of English prose (570 characters in
# 28.4 s, measured), but text with few spaces far fewer (CJK: 1–3, digits: 4), which a count
# of words misses. The cap counts 20, so that words cut prose and characters the rest;
# ``tts`` also stops the engine at the time budget itself.
CHARS_PER_SECOND = 20

_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
# A list item that is a file name or path (``bridge/voice/prose.py``, ``README.md``), with
# perhaps a short note after it: heard as a list of files, not read out one by one.
_FILE_ITEM = re.compile(r"^`?[\w.@~-]*[/.][\w./@~-]+`?(?:\s*(?:[-—–:(]).*)?$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
_INLINE_CODE = re.compile(r"`([^`]*)`")
_MARKS = re.compile(r"(\*\*|__|\*|~~|^#+\s*|^>\s*)", re.MULTILINE)
_MENTION = re.compile(r"<[@#][!&]?\d+>")


def prose(markdown: str) -> str:
    """``markdown`` as paragraphs of plain sentences (blank-line separated), with each code
    block, table or list of files replaced by its name in parentheses."""
    paragraphs: list[str] = []
    current: list[str] = []
    lines = markdown.replace("\r\n", "\n").split("\n")
    i = 0

    def close() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    def named(what: str) -> None:
        close()
        if not paragraphs or paragraphs[-1] != what:
            paragraphs.append(what)

    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
                end += 1
            named("(a code block)")
            i = end + 1
            continue
        if _TABLE_ROW.match(line):
            while i < len(lines) and _TABLE_ROW.match(lines[i]):
                i += 1
            named("(a table)")
            continue
        item = _LIST_ITEM.match(line)
        if item and _FILE_ITEM.match(item.group(1).strip()):
            while i < len(lines) and (m := _LIST_ITEM.match(lines[i])):
                if not _FILE_ITEM.match(m.group(1).strip()):
                    break
                i += 1
            named("(a list of files)")
            continue
        if not line.strip():
            close()
        elif item:
            close()
            current.append(_sentence(_plain(item.group(1))))
            close()
        elif line.startswith("-# "):  # Discord's small print (a footer): not prose
            close()
        else:
            current.append(_plain(line))
        i += 1
    close()
    return "\n\n".join(p for p in paragraphs if p.strip())


def _plain(text: str) -> str:
    text = _LINK.sub(r"\1", text)
    text = _URL.sub("(a link)", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _MENTION.sub("", text)
    return " ".join(_MARKS.sub("", text).split())


def _sentence(text: str) -> str:
    """A list item read as a sentence: a pause after it."""
    return text if not text or text[-1] in ".!?:;" else text + "."


def within(text: str, max_seconds: float, words_per_minute: int = WORDS_PER_MINUTE) -> str:
    """The first paragraphs of ``text`` that can be spoken in ``max_seconds`` (counted in
    words and in characters); a first paragraph longer than that is cut at a word (or, with
    no space in reach, at a character), ending with "…" (a pause)."""
    budget = max(1, int(max_seconds * words_per_minute / 60))
    chars = max(1, int(max_seconds * CHARS_PER_SECOND))
    kept: list[str] = []
    used = length = 0
    for paragraph in text.split("\n\n"):
        words = paragraph.split()
        size = len(paragraph) + (2 if kept else 0)
        if used + len(words) <= budget and length + size <= chars:
            kept.append(paragraph)
            used += len(words)
            length += size
            continue
        if not kept:
            kept.append(_cut(" ".join(words[:budget]), chars - 2) + " …")
        break
    return "\n\n".join(kept)


def _cut(text: str, chars: int) -> str:
    """``text`` in at most ``chars`` characters, at its last space within them if any."""
    if len(text) <= chars:
        return text
    space = text.rfind(" ", 0, chars + 1)
    return text[:space] if space > 0 else text[: max(1, chars)]


def spoken(markdown: str, max_seconds: float) -> str:
    """What is read aloud of a reply: its prose within ``max_seconds``."""
    return within(prose(markdown), max_seconds)
