"""What a Discord user sees when a long Claude reply is split into messages."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.discord.render.split import split_message

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
ZWSP = "\u200b"


def _scan_fences(text: str, max_opener: int | None = None) -> tuple[list[str], str | None]:
    """Fence lines by CommonMark rules (independent of the code), and the marker left open.
    ``max_opener``: longer lines never open a fence (the splitter's rule for huge lines)."""
    found: list[str] = []
    open_marker: str | None = None
    for line in text.split("\n"):
        m = _FENCE.fullmatch(line)
        if not m:
            continue
        marker, info = m.groups()
        if open_marker is None:
            if max_opener is not None and len(line.rstrip()) > max_opener:
                continue
            if marker[0] == "`" and "`" in info:
                continue
            open_marker = marker
            found.append(line)
        elif marker[0] == open_marker[0] and len(marker) >= len(open_marker) and not info.strip():
            open_marker = None
            found.append(line)
    return found, open_marker


def is_balanced(chunk: str, max_opener: int | None = None) -> bool:
    return len(_scan_fences(chunk, max_opener)[0]) % 2 == 0


def _inside_fence(text: str, end: int, max_opener: int | None = None) -> bool:
    """Fence state at ``end``; mid-line (a hard split) counts as the line's start."""
    rest_of_line = text[end:].split("\n", 1)[0]
    if rest_of_line.strip():
        end = text.rfind("\n", 0, end) + 1
    return _scan_fences(text[:end], max_opener)[1] is not None


def assert_round_trip(original: str, chunks: list[str], max_opener: int | None = None) -> None:
    """The chunks, minus added fence lines, give back the original (whitespace at cuts aside).

    An opening line was added iff the original is inside a fence where the chunk
    starts; a closing line iff it is still inside one where the chunk's content ends.
    """
    cursor = 0
    for chunk in chunks:
        lines = chunk.split("\n")
        if _inside_fence(original, cursor, max_opener):
            lines = lines[1:]
        defused = bool(lines) and lines[0].startswith(ZWSP)
        if defused:  # a piece of a run of backticks or tildes, which is then closed here
            lines[0] = lines[0].removeprefix(ZWSP)
        for body, added_close in (("\n".join(lines), False), ("\n".join(lines[:-1]), True)):
            idx = original.find(body, cursor) if body else -1
            if idx < 0 or original[cursor:idx].strip():
                continue
            closed = _inside_fence(original, idx + len(body), max_opener)
            # a defused piece of a closing line is closed by the splitter instead
            closed_here = defused and added_close and _inside_fence(original, idx, max_opener)
            if closed == added_close or closed_here:
                cursor = idx + len(body)
                break
        else:
            pytest.fail(f"chunk not found in order: {chunk[:80]!r}")
    assert not original[cursor:].strip()


def check_chunks(original: str, chunks: list[str], limit: int) -> None:
    for chunk in chunks:
        assert 0 < len(chunk) <= limit
        assert chunk.strip()
        assert chunk == chunk.rstrip()
        assert is_balanced(chunk), chunk
    assert_round_trip(original, chunks)


def test_empty_and_whitespace_input_give_no_messages() -> None:
    assert split_message("") == []
    assert split_message(" \n\n\t ") == []


def test_short_reply_is_one_message_without_trailing_whitespace() -> None:
    assert split_message("Done.\n\n") == ["Done."]


def test_python_block_split_across_messages_is_closed_and_reopened() -> None:
    code = "".join(f"result_{i:03d} = compute({i}) + offset\n" for i in range(86))
    assert 2900 < len(code) < 3100
    reply = "Here is the script:\n\n" + "Intro. " * 100 + "\n\n```python\n" + code + "```\n\nDone."
    reply += "\n\n" + "Closing words. " * 60
    assert 4400 < len(reply) < 5000
    chunks = split_message(reply)
    check_chunks(reply, chunks, 2000)
    assert len(chunks) >= 3
    assert chunks[1].startswith("```python\n")
    assert chunks[0].endswith("\n```")
    assert chunks[-1].endswith("Closing words.")


def test_paragraph_boundary_is_preferred_over_last_newline() -> None:
    first = "\n".join(["line of the first paragraph"] * 40)  # ~1100 chars
    second = "\n".join(["line of the second paragraph"] * 40)
    chunks = split_message(first + "\n\n" + second)
    assert chunks == [first, second]


def test_tilde_and_long_backtick_fences_keep_their_marker() -> None:
    body = "\n".join(f"row {i} ``` not a closer inside ````" for i in range(60))
    for opener, closer in (("~~~ js", "~~~"), ("````md", "````")):
        reply = f"{opener}\n{body}\n{closer}\nafter"
        chunks = split_message(reply, limit=500)
        check_chunks(reply, chunks, 500)
        for chunk in chunks[1:-1]:
            assert chunk.startswith(opener + "\n")
            assert chunk.endswith("\n" + closer)


def test_unclosed_fence_at_end_is_closed_in_every_chunk() -> None:
    reply = "```\n" + "\n".join(f"print({i})" for i in range(300))
    chunks = split_message(reply, limit=300)
    check_chunks(reply, chunks, 300)
    assert all(c.startswith("```\n") and c.endswith("\n```") for c in chunks)


def test_single_line_code_with_triple_backticks_is_not_a_fence() -> None:
    reply = ("Use ```inline``` here.\n" * 10).strip()
    assert split_message(reply) == [reply]


def test_long_line_is_hard_split_at_spaces() -> None:
    words = " ".join(f"word{i}" for i in range(1000))
    chunks = split_message(words, limit=200)
    check_chunks(words, chunks, 200)
    assert all(re.fullmatch(r"(word\d+ )*word\d+", c) for c in chunks)


def test_long_line_without_spaces_is_cut_exactly() -> None:
    blob = "x" * 4500
    chunks = split_message(blob)
    assert [len(c) for c in chunks] == [2000, 2000, 500]


def test_long_line_inside_code_block_stays_inside_code_blocks() -> None:
    reply = "```text\n" + "y" * 5000 + "\n```"
    chunks = split_message(reply)
    check_chunks(reply, chunks, 2000)
    assert all(c.startswith("```text\n") and c.endswith("\n```") for c in chunks)


def test_hard_split_does_not_start_a_chunk_with_a_fence() -> None:
    line = ("a" * 45 + " ```python ") * 40
    chunks = split_message(line, limit=100)
    check_chunks(line, chunks, 100)


def test_table_rows_are_kept_together_when_a_better_cut_exists() -> None:
    prose = "Some prose line here.\n" * 30
    table = "| name | value |\n|---|---|\n" + "".join(f"| key{i} | {i} |\n" for i in range(40))
    reply = prose + "\n" + table + "\nEnd."
    chunks = split_message(reply, limit=1000)
    check_chunks(reply, chunks, 1000)
    assert chunks[1].startswith("| name | value |")


def test_emoji_and_combining_marks_survive() -> None:
    text = ("café 🎉 日本語 e\u0301 " * 300).strip()
    chunks = split_message(text, limit=300)
    check_chunks(text, chunks, 300)
    assert not any(c[0] == "\u0301" for c in chunks)


def test_limit_too_small_is_rejected() -> None:
    with pytest.raises(ValueError):
        split_message("hello", limit=5)


def test_100_kb_reply_splits_in_a_few_milliseconds() -> None:
    para = "A sentence of prose that goes on for a while. " * 8
    block = "```python\n" + "x = compute(1, 2, 3)  # step\n" * 40 + "```"
    reply = "\n\n".join([para, block] * 80)
    assert len(reply) > 100_000
    start = time.perf_counter()
    chunks = split_message(reply)
    elapsed = time.perf_counter() - start
    check_chunks(reply, chunks, 2000)
    assert elapsed < 2.0  # linear: a quadratic splitter took minutes on such input


_TEXT_LINE = st.text(alphabet=st.sampled_from("abc xyz|`~é🎉\t\u0301"), max_size=120).filter(
    lambda s: not re.match(r" {0,3}(```|~~~)", s)
)
_LINE = st.one_of(
    _TEXT_LINE,
    st.sampled_from(["", "| a | b |", "```", "```python", "````md", "~~~", "~~~ js"]),
    st.sampled_from(["```", "````", "~~~", "~~~~"]),
)


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(_LINE, max_size=60), limit=st.integers(40, 300), trailing=st.booleans())
def test_property_limit_fences_and_round_trip(lines: list[str], limit: int, trailing: bool) -> None:
    text = "\n".join(lines) + ("\n" if trailing else "")
    chunks = split_message(text, limit=limit)
    check_chunks(text, chunks, limit)
    assert (chunks == []) == (not text.strip())


def test_close_open_fence_closes_only_an_open_block() -> None:
    from bridge.discord.render.split import close_open_fence

    assert close_open_fence("text\n```py\nx = 1") == "text\n```py\nx = 1\n```"
    assert close_open_fence("a\n~~~~\nb\n") == "a\n~~~~\nb\n~~~~"
    closed = "text\n```\ncode\n```\nafter"
    assert close_open_fence(closed) == closed
    assert close_open_fence("inline ```code``` only") == "inline ```code``` only"


def check_runs(original: str, chunks: list[str], limit: int) -> None:
    """check_chunks for text with runs of fence characters longer than a message: lines
    over a quarter of the limit never open a fence (the splitter's rule), and a chunk that
    starts inside such a run begins with a zero-width space, so it neither opens nor closes
    one."""
    for chunk in chunks:
        assert 0 < len(chunk) <= limit
        assert chunk.strip() and chunk == chunk.rstrip()
        assert is_balanced(chunk, limit // 4), chunk
    # Nothing lost or reordered: the text is a subsequence of the chunks (which add fence lines).
    shown = iter("".join("".join(chunks).replace(ZWSP, "").split()))
    assert all(ch in shown for ch in "".join(original.split()))


@pytest.mark.parametrize("char", ["`", "~"])
def test_100_000_backticks_or_tildes_split_in_well_under_a_second(char: str) -> None:
    # Regression: the hard split stepped back through the run one character at a time, for
    # every one-character chunk: 100,000 backticks took 66 s and the Stop hook was killed.
    for text in (char * 100_000, "Look:\n" + char * 100_000 + "\nafter", "```\n" + char * 100_000):
        start = time.perf_counter()
        chunks = split_message(text)
        elapsed = time.perf_counter() - start
        assert elapsed < 1.0, f"{elapsed:.1f} s"
        assert len(chunks) < 60
        check_runs(text, chunks, 2000)
        assert_round_trip(text, chunks, 2000 // 4)


def test_a_deadline_stops_a_split_that_takes_too_long() -> None:
    from bridge.discord.render.split import SplitTimeout

    with pytest.raises(SplitTimeout):
        split_message("line\n" * 400_000, deadline=time.monotonic())


_RUN = st.builds(
    lambda ch, n, before, after: before + ch * n + after,
    st.sampled_from("`~"),
    st.integers(0, 700),
    st.sampled_from(["", " ", "   ", "x", "a b "]),
    st.sampled_from(["", " ", "py", "x`", " ~", "\t"]),
)
_RUN_LINE = st.one_of(_RUN, _TEXT_LINE, st.sampled_from(["", "```", "```python", "~~~", "````"]))


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_RUN_LINE, max_size=30), limit=st.integers(40, 300))
def test_property_runs_of_fence_characters(lines: list[str], limit: int) -> None:
    text = "\n".join(lines)
    chunks = split_message(text, limit=limit)
    check_runs(text, chunks, limit)
    assert (chunks == []) == (not text.strip())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from([*" \t\r\n\n\n|#*`~ab", "\u0301", "é"]), max_size=60))
def test_a_short_text_without_fences_comes_out_as_the_full_splitter_would_make_it(
    text: str,
) -> None:
    # The Stop hook's usual reply takes a shortcut that needs no regular expressions (``re``
    # costs a hook milliseconds to import): it must give the very message the splitter gives.
    from bridge.discord.render import split

    fast = split.split_message(text, limit=40)
    fences = split._FENCES
    split._FENCES = ("",)  # every text "has" a fence: the full splitter runs
    try:
        full = split.split_message(text, limit=40)
        closed = split.close_open_fence(text)
    finally:
        split._FENCES = fences
    assert fast == full
    assert split.close_open_fence(text) == closed
