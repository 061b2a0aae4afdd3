"""Make Discord text safe to type into a terminal running Claude Code.

Text from Discord reaches a pty.  An escape sequence in it is interpreted by
tmux and by Claude Code's TUI: a literal ``ESC[201~`` ends a bracketed paste
early so the rest arrives as keystrokes, OSC sequences set titles or the
clipboard, and bare control characters are editing keys (Ctrl-C, Ctrl-U ...).
So every escape sequence and control character goes, except newline and tab.

Invisible Unicode is removed where it can make what the owner sees in Discord
differ from what Claude reads: bidi overrides/isolates and directional marks
(the "Trojan Source" trick reorders text on screen), zero-width spaces/word
joiners/BOM, and Unicode tag characters (used to smuggle hidden ASCII
instructions).  Zero-width joiner/non-joiner and variation selectors stay:
emoji sequences and several scripts (Persian, Indic) need them, and tag
characters inside a flag emoji (U+1F3F4 + tags, e.g. Scotland's) are kept too.

What this does *not* do: it does not neutralise a leading ``!`` (bash mode),
``/`` (slash command) or ``#``; whether those are allowed is the caller's policy.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["chunk_for_typing", "sanitize_prompt"]

# String sequences (OSC, DCS, SOS, PM, APC) in 7-bit and 8-bit form, ended by BEL
# or ST.  An unterminated one is left to the single-ESC rule below, which drops
# the introducer so the rest is harmless text.
_STRING_SEQ = r"(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
# CSI: ESC [ or 8-bit CSI, parameter bytes, intermediate bytes, final byte.
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
# Other escapes: ESC, intermediate bytes, one final byte (ESC ( B, ESC 7, ESC c ...).
_ESC_OTHER = r"\x1b[ -/]*[0-~]"
_ESCAPES = re.compile(f"{_STRING_SEQ}|{_CSI}|{_ESC_OTHER}")

# C0 controls except \t and \n, DEL, and C1 controls (what escapes left behind).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Invisible characters that can hide or reorder text (see module docstring).
_HIDING = "\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_TAG_FLAG = "\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f"
_INVISIBLE = re.compile(f"({_TAG_FLAG})|[{_HIDING}\U000e0000-\U000e007f]")
_LINE_SEPARATORS = re.compile("\r\n?|[\u2028\u2029\x85]")

_ZWJ = "\u200d"
_MAX_BACKTRACK = 8


def sanitize_prompt(text: str) -> str:
    """Return ``text`` without escape sequences, control or hiding characters.

    Newlines (CRLF, CR, U+2028/9 and NEL become LF) and tabs are kept; trailing
    whitespace is stripped; all other characters, emoji and CJK included, pass
    through unchanged.
    """
    text = _ESCAPES.sub("", text)
    text = _LINE_SEPARATORS.sub("\n", text)
    text = _CONTROLS.sub("", text)
    text = _INVISIBLE.sub(lambda m: m.group(1) or "", text)
    return text.rstrip()


def chunk_for_typing(text: str, size: int = 100) -> list[str]:
    """Split ``text`` into pieces of at most ``size`` characters, losslessly.

    ``"".join(pieces) == text``.  A cut is moved back a few characters rather than
    separating a combining mark, variation selector, skin-tone modifier or
    zero-width-joiner sequence from the character it belongs to.
    """
    if size < 1:
        raise ValueError(f"size must be positive, got {size}")
    pieces: list[str] = []
    pos = 0
    while pos < len(text):
        cut = min(pos + size, len(text))
        cut = _cluster_safe_cut(text, pos, cut)
        pieces.append(text[pos:cut])
        pos = cut
    return pieces


def _cluster_safe_cut(text: str, pos: int, cut: int) -> int:
    """Move ``cut`` back a little so it does not split a character cluster.

    Gives up (keeping the exact cut) on clusters longer than the backtrack
    budget: the terminal joins the pieces anyway, this only keeps them tidy.
    """
    for back in range(_MAX_BACKTRACK + 1):
        c = cut - back
        if c >= len(text) or c <= pos:
            break
        if not _attaches_to_previous(text[c]) and text[c - 1] != _ZWJ:
            return c
    return cut


def _attaches_to_previous(ch: str) -> bool:
    """True for characters rendered as part of the preceding one."""
    return (
        unicodedata.combining(ch) != 0
        or unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or ch == _ZWJ
        or "\ufe00" <= ch <= "\ufe0f"
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
        or "\U000e0020" <= ch <= "\U000e007f"
    )
