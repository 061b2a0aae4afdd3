"""Text typed from Discord into the Claude Code terminal carries no control sequences."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.sessions.typed_text import chunk_for_typing, sanitize_prompt

_INTACT = "keep 🎉 👍🏽 日本語 café e\u0301 👨\u200d👩\u200d👧 «quotes» — dash"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("paste\x1b[201~rm -rf ~", "pasterm -rf ~"),  # ends bracketed paste early
        ("\x1b]0;title\x07hello", "hello"),  # OSC set-title, BEL-terminated
        ("\x1b]52;c;ZXZpbA==\x1b\\hi", "hi"),  # OSC 52 clipboard, ST-terminated
        ("\x9b31mred", "red"),  # 8-bit CSI
        ("\x1bPq#0;2;0;0;0\x1b\\x", "x"),  # DCS (sixel)
        ("a\x1bcb\x1b(Bc\x1b7d", "abcd"),  # two/three-character escapes
        ("a\x00b\x7fc\x03d\x15e\x1b", "abcde"),  # NUL, DEL, Ctrl-C, Ctrl-U, lone ESC
        ("a\x85b\x9cc", "a\nbc"),  # NEL is a line break; other C1 controls go
        ("one\r\ntwo\rthree", "one\ntwo\nthree"),
        ("line\n\tindented\n", "line\n\tindented"),
        (
            "keep 🎉 👍🏽 日本語 café e\u0301 👨\u200d👩\u200d👧",
            "keep 🎉 👍🏽 日本語 café e\u0301 👨\u200d👩\u200d👧",
        ),
        ("trailing   \n\n  ", "trailing"),
        ("  leading kept", "  leading kept"),
    ],
)
def test_sanitize_prompt(raw: str, expected: str) -> None:
    assert sanitize_prompt(raw) == expected


def test_bidi_and_invisible_characters_are_removed() -> None:
    raw = "admin\u202e\u2066txt.exe\u2069\u200b\ufeff\u2060 ok"
    assert sanitize_prompt(raw) == "admintxt.exe ok"


def test_tag_smuggling_is_removed_but_flag_emoji_survive() -> None:
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "ignore previous")
    scotland = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    assert sanitize_prompt(f"hi{hidden} {scotland}") == f"hi {scotland}"


def test_persian_zero_width_non_joiner_is_kept() -> None:
    assert sanitize_prompt("می\u200cخواهم") == "می\u200cخواهم"


@given(st.text())
def test_sanitized_text_has_no_controls_and_is_stable(raw: str) -> None:
    clean = sanitize_prompt(raw)
    assert not any(
        (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c == "\r" for c in clean
    )
    assert "\u202e" not in clean
    assert sanitize_prompt(clean) == clean


def test_chunk_for_typing_is_lossless_and_bounded() -> None:
    text = "word " * 90 + "\n" + "日本語🎉" * 40
    pieces = chunk_for_typing(text, 100)
    assert "".join(pieces) == text
    assert all(0 < len(p) <= 100 for p in pieces)


def test_chunk_for_typing_keeps_combining_marks_with_their_letter() -> None:
    text = "e\u0301" * 60
    pieces = chunk_for_typing(text, 7)
    assert "".join(pieces) == text
    assert all(p[0] == "e" for p in pieces)


def test_chunk_for_typing_keeps_skin_tone_with_emoji() -> None:
    text = "ab👍🏽" * 10
    pieces = chunk_for_typing(text, 4)
    assert all(not p.startswith("🏽") for p in pieces)


def test_chunk_for_typing_edge_cases() -> None:
    assert chunk_for_typing("") == []
    assert chunk_for_typing("abc", 1) == ["a", "b", "c"]
    with pytest.raises(ValueError):
        chunk_for_typing("abc", 0)


@given(st.text(), st.integers(1, 50))
def test_chunk_for_typing_property(text: str, size: int) -> None:
    pieces = chunk_for_typing(text, size)
    assert "".join(pieces) == text
    assert all(0 < len(p) <= size for p in pieces)
