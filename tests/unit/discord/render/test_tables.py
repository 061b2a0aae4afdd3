"""Markdown tables become aligned code blocks; everything else is left byte for byte."""

from __future__ import annotations

import unicodedata

import pytest

from bridge.discord.render.tables import display_width, render_tables


def block_lines(rendered: str) -> list[str]:
    """The lines inside the (single) code block of ``rendered``."""
    inside = rendered.split("```\n", 1)[1].rsplit("\n```", 1)[0]
    return inside.split("\n")


def columns(line: str) -> list[int]:
    """Display columns at which each ' | ' separator starts."""
    positions, col = [], 0
    for i, ch in enumerate(line):
        if line.startswith(" | ", i):
            positions.append(col)
        col += display_width(ch)
    return positions


def test_simple_table_becomes_aligned_code_block() -> None:
    text = "Results:\n\n| name | n |\n|---|---|\n| alpha | 1 |\n| b | 22 |\n\nDone."
    assert render_tables(text) == (
        "Results:\n\n```\nname  | n\n------+---\nalpha | 1\nb     | 22\n```\n\nDone."
    )


def test_alignment_markers() -> None:
    text = "| left | right | mid |\n|:--|--:|:-:|\n| a | 1 | x |\n| bbbbbb | 12345 | yyyyy |"
    lines = block_lines(render_tables(text))
    assert lines[0] == "left   | right |  mid"
    assert lines[2] == "a      |     1 |   x"
    assert lines[3] == "bbbbbb | 12345 | yyyyy"


def test_without_outer_pipes_and_ragged_rows() -> None:
    text = "a | b\n--|--\n1\n| x | y | extra |"
    # "1" has no pipe: it ends the table (and stays as text)
    assert render_tables(text) == "```\na | b\n--+--\n```\n1\n| x | y | extra |"
    text = "a | b\n--|--\n| x | y | extra |\n| only |"
    assert block_lines(render_tables(text)) == [
        "a    | b |",  # extra cells are kept, not dropped: the header gets an empty one
        "-----+---+------",
        "x    | y | extra",
        "only |   |",
    ]


@pytest.mark.parametrize(
    ("cell", "width"),
    [
        ("日本語", 6),
        ("😀", 2),
        ("e\u0301", 1),
        ("👍🏽", 2),
        ("👨\u200d👩\u200d👧", 2),
        ("❤️", 2),
        ("ｆｕｌｌ", 8),
        ("abc", 3),
        ("\u200b", 0),
    ],
)
def test_display_width(cell: str, width: int) -> None:
    assert display_width(cell) == width


def test_wide_characters_align_by_display_width() -> None:
    text = "| 名前 | 値 |\n|---|---:|\n| 日本語テキスト | 1 |\n| abc | 😀😀 |\n| café | e\u0301 |"
    lines = block_lines(render_tables(text))
    seps = {tuple(columns(line)) for i, line in enumerate(lines) if i != 1}
    assert len(seps) == 1, lines  # every row puts its separator in the same column
    assert lines[0].startswith("名前") and lines[2].startswith("日本語テキスト |")
    widths = {display_width(line) for line in lines if "😀" in line or "値" in line}
    assert len(widths) == 1  # right-aligned last column ends in the same column


def test_escaped_pipes_stay_in_their_cell() -> None:
    text = "| expr | meaning |\n|---|---|\n| `a \\| b` | a or b |\n| x\\|y | pipe |"
    assert block_lines(render_tables(text)) == [
        "expr  | meaning",
        "------+--------",
        "a | b | a or b",
        "x|y   | pipe",
    ]


def test_inline_markdown_is_unwrapped() -> None:
    text = (
        "| k | v |\n|---|---|\n"
        "| **bold** | `code` |\n| *it* and _em_ | ~~old~~ |\n"
        "| [docs](https://e.x/a) | <https://e.x> |\n| snake_case_name | 2 \\* 3 |\n"
        "| ``a`b`` | line<br>break |"
    )
    assert block_lines(render_tables(text))[2:] == [
        f"{'bold':<20} | code",
        f"{'it and em':<20} | old",
        "docs (https://e.x/a) | https://e.x",
        f"{'snake_case_name':<20} | 2 * 3",
        f"{'a`b':<20} | line break",
    ]


def test_tables_inside_code_fences_are_untouched() -> None:
    text = (
        "```markdown\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n\n"
        "~~~~\n| c | d |\n|---|---|\n~~~\n| e | f |\n|---|---|\n~~~~\n"
    )
    assert render_tables(text) == text


def test_table_after_a_code_block_is_converted() -> None:
    text = "```\ncode | here\n```\n| a | b |\n|---|---|\n| 1 | 2 |"
    assert render_tables(text) == "```\ncode | here\n```\n```\na | b\n--+--\n1 | 2\n```"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain text, no tables at all\n\n- a list\n- with items\n",
        "a | b on a line without a delimiter row\nnext line\n",
        "Title | with a pipe\n---\nsetext heading underline has no pipe",
        "| a | b |\n|---|\n| count mismatch |",
        "| a | b |\n| not | delimiter |\n",
        "trailing spaces   \n\r\nCRLF line\r\n| x |\n\n---\n",
        "a\\|b\n-\\|-\n",  # escaped pipes only: not a table
    ],
)
def test_non_table_text_is_byte_identical(text: str) -> None:
    assert render_tables(text) is text or render_tables(text) == text


def test_text_around_a_table_is_kept_exactly() -> None:
    before = "Intro  with  spaces \r\n\n"
    after = "\n\n  outro\t\n"
    rendered = render_tables(before + "| a |\n|---|\n| 1 |" + after)
    assert rendered == before + "```\na\n-\n1\n```" + after


def test_cell_holding_a_fence_leaves_the_table_alone() -> None:
    text = "| a | b |\n|---|---|\n| \\`\\`\\`x | 2 |"  # unescaped, the cell would hold ```
    assert render_tables(text) == text


def test_crlf_table() -> None:
    text = "| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n"
    assert render_tables(text) == "```\na | b\n--+--\n1 | 2\n```\n"


def test_empty_body_and_empty_cells() -> None:
    assert render_tables("| a | bb |\n|---|---|") == "```\na | bb\n--+---\n```"
    assert block_lines(render_tables("| a | |\n|---|---|\n| | x |")) == ["a |", "--+--", "  | x"]


def test_width_uses_unicodedata_consistently() -> None:
    # A sanity check of the test itself: wide per unicodedata means two columns here.
    for ch in "日本語ｆ한":
        assert unicodedata.east_asian_width(ch) in ("W", "F")
        assert display_width(ch) == 2
