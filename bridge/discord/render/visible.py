"""Text the owner approves, shown as it is: hidden and look-alike characters made visible.

A permission prompt shows the command Claude Code will run; the owner's Allow runs exactly
that text. Unicode can make the two differ ("Trojan Source", CVE-2021-42574): a bidi override
(U+202E) reorders what is displayed, a zero-width space or a soft hyphen hides inside a word,
a Cyrillic ``а`` passes for a Latin ``a`` in a host name, a tag character (U+E0041…) carries
invisible instructions. Claude Code neutralises these in its own channels since 2.1.211; here
each such character is shown as ``⟦U+202E⟧`` in what the prompt displays (commands, paths,
diffs, rules, questions and their options), never in what is sent back to Claude Code.

Three rules (after Unicode TR #36 / UTS #39, kept small):
- invisible or reordering characters anywhere: control and format characters (Cc, Cf: bidi
  controls, zero-width, tags, BOM), the other default-ignorable ones (variation selectors,
  Hangul fillers, the combining grapheme joiner), line/paragraph separators and every space
  but U+0020. Emoji keep their joiner (U+200D) and presentation selector between symbols.
- look-alike letters and digits: compatibility forms that fold to ASCII (fullwidth ``ｒｍ``,
  mathematical ``𝐫𝐦``), and letters of another script inside a word that also has ASCII
  letters (``https://аpple.com``).
- in code (commands, paths, rules), also a word made only of letters that pass for Latin
  (``ѕһ`` for ``sh``); in prose a Russian "а" ("and") stays readable.

Text from outside shown in a message (an MCP server's words, a review comment) is also
escaped (:func:`escape`): its Markdown shows as the characters it is made of.
"""

from __future__ import annotations

import unicodedata

MARK_OPEN, MARK_CLOSE = "⟦", "⟧"
# Default-ignorable code points that are not Cc/Cf (Unicode's DerivedCoreProperties): shown.
_IGNORABLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0]
)
_VARIATION = (range(0xFE00, 0xFE10), range(0xE0100, 0xE01F0))
_ZWJ, _VS16 = 0x200D, 0xFE0F
# What starts Markdown in a Discord message: emphasis, spoilers, code, quotes, masked links
# ``[text](url)``, headings and ``-#`` subtext, mentions ``<@id>`` and ``@everyone``, custom
# emoji and timestamps ``<t:…>``, emoji shortcodes ``:white_check_mark:`` and bare links
# ``https://`` (the colon). Discord shows any ASCII punctuation after a backslash as itself.
_MARKDOWN = frozenset("\\*_~|`>[]<#@:")
# Scripts with letters that pass for Latin ones (UTS #39 confusables, the common cases).
_CONFUSABLE_SCRIPTS = ("CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "LISU")
# Letters of those scripts that look like a Latin letter on their own.
_LATIN_LOOKALIKES = frozenset(
    "асеһіјӏорԛѕԝхуԁһАВСЕНІЈКМОРЅТХУԜԌ"  # Cyrillic
    "αοινρυχκΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"  # Greek
    "օսոհԳԴՏ"  # Armenian
)


def reveal(text: str, code: bool = False) -> str:
    """``text`` with every hidden or look-alike character shown as ``⟦U+XXXX⟧`` (the mark's
    own brackets too, so none can be forged); ``code``: a command, path or rule."""
    if text.isascii() and all(c.isprintable() or c in "\n\t" for c in text):
        return text  # the common case, at the cost of two scans
    suspects = _lookalikes(text, code)
    return "".join(
        _mark(char) if i in suspects or _hidden(text, i) else char for i, char in enumerate(text)
    )


def escape(text: str) -> str:
    """Plain text in a message: no Markdown, link, mention or emoji shortcode takes effect."""
    return "".join("\\" + ch if ch in _MARKDOWN else ch for ch in text)


def changed(text: str, code: bool = False) -> bool:
    return reveal(text, code) != text


def _words(text: str) -> list[tuple[int, str]]:
    """``(start, word)`` for each run of letters, digits and marks: what the look-alike rules
    judge as one name (``аpple`` in ``https://аpple.com``, ``иван`` in ``/home/иван``)."""
    words: list[tuple[int, str]] = []
    start = None
    for i, char in enumerate(text + " "):
        inside = char.isalnum() or unicodedata.category(char)[0] == "M"
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            words.append((start, text[start:i]))
            start = None
    return words


def _hidden(text: str, i: int) -> bool:
    char = text[i]
    if char in "\n\t":
        return False
    point = ord(char)
    if char in (MARK_OPEN, MARK_CLOSE):
        return True
    if point in (_ZWJ, _VS16) and _between_symbols(text, i):
        return False  # 👨‍👩‍👧, ❤️: emoji, not hiding places
    category = unicodedata.category(char)
    if category in ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"):
        return True
    if category == "Zs" and char != " ":
        return True
    return point in _IGNORABLE or any(point in block for block in _VARIATION)


def _between_symbols(text: str, i: int) -> bool:
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ord(text[i]) == _VS16:
        return bool(before) and unicodedata.category(before) == "So"
    symbol = lambda c: bool(c) and (unicodedata.category(c) == "So" or ord(c) == _VS16)  # noqa: E731
    return symbol(before) and symbol(after)


def _lookalikes(text: str, code: bool) -> set[int]:
    """Positions in ``text`` of letters shown marked: compatibility forms of ASCII, letters
    of a confusable script in a word that has ASCII letters too, and (``code``) a word of
    nothing but letters that pass for Latin."""
    found: set[int] = set()
    for start, word in _words(text):
        foreign: list[int] = []
        has_ascii, lookalike_only, letters = False, True, 0
        for i, char in enumerate(word, start):
            if char.isascii():
                has_ascii = has_ascii or char.isalpha()
                continue
            category = unicodedata.category(char)
            if category[0] != "L" and category != "Nd":
                continue  # a combining mark (judged with its letter), ², ½…
            letters += 1
            folded = unicodedata.normalize("NFKC", char)
            if folded != char and folded.isascii() and folded.isalnum():
                found.add(i)  # ｒ, 𝐫, ﬁ
            elif unicodedata.name(char, "").startswith(_CONFUSABLE_SCRIPTS):
                foreign.append(i)
                lookalike_only = lookalike_only and char in _LATIN_LOOKALIKES
        whole = code and not has_ascii and foreign and lookalike_only and len(foreign) == letters
        if (has_ascii and foreign) or whole:
            found.update(foreign)
    return found


def _mark(char: str) -> str:
    return f"{MARK_OPEN}U+{ord(char):04X}{MARK_CLOSE}"
