"""A review's line numbers: a diff numbered by its new side, the lines a comment takes, and
those lines followed through later edits (real ``git diff -U0`` output where it matters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.sessions import changes, tree_diff
from bridge.sessions.review_lines import (
    BadLines,
    Followed,
    Hunk,
    follow,
    numbered,
    parse_hunks,
    parse_range,
)
from bridge_testkit.gitrepo import make_repo

PATCH = """diff --git a/app.py b/app.py
index 1111111..2222222 100644
--- a/app.py
+++ b/app.py
@@ -8,4 +8,5 @@ def main():
 keep = 1
-old = 2
+new = 2
+more = 3
 tail = 4
 end = 5
"""


def test_a_diff_is_numbered_by_its_new_lines_and_keeps_its_colours() -> None:
    assert numbered(PATCH) == [
        "@@ -8,4 +8,5 @@ def main():",
        "  8 │ keep = 1",
        "-   │ old = 2",
        "+ 9 │ new = 2",
        "+10 │ more = 3",
        " 11 │ tail = 4",
        " 12 │ end = 5",
    ]
    assert numbered("Binary files a/x.png and b/x.png differ\n") == [
        "Binary files a/x.png and b/x.png differ"
    ]


@pytest.mark.parametrize(
    ("typed", "lines"),
    [
        ("12", (12, 12)),
        ("12-18", (12, 18)),
        (" 12 – 18 ", (12, 18)),
        ("L12-L18", (12, 18)),
        ("18-12", (12, 18)),
        ("12..18", (12, 18)),
        ("12 to 18", (12, 18)),
        ("12:13", (12, 13)),
    ],
)
def test_lines_are_read_as_a_phone_types_them(typed: str, lines: tuple[int, int]) -> None:
    assert parse_range(typed, 20) == lines


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("", "got: nothing"),
        ("twelve", "got: twelve"),
        ("12,14", "got: 12,14"),
        ("0", "numbered from 1"),
        ("21", "app.py has 20 lines now: line 21 is past its end"),
        ("3-40", "line 40 is past its end"),
    ],
)
def test_lines_that_are_not_the_files_say_why(typed: str, said: str) -> None:
    with pytest.raises(BadLines, match=said.replace(".", r"\.")):
        parse_range(typed, 20, "app.py")


def test_hunk_headers_default_their_counts_to_one() -> None:
    text = "@@ -3 +3,2 @@\n@@ -10,0 +12 @@\n@@ -0,0 +1,2 @@\n"
    assert parse_hunks(text) == [Hunk(3, 1, 3, 2), Hunk(10, 0, 12, 1), Hunk(0, 0, 1, 2)]


@pytest.mark.parametrize(
    ("after", "range_", "expected"),
    [
        # nothing touched: the same lines
        ("1\n2\n3\n4\n5\n6\n", (3, 4), Followed(3, 4, False)),
        # two lines inserted above: moved down
        ("a\nb\n1\n2\n3\n4\n5\n6\n", (3, 4), Followed(5, 6, False)),
        # one line deleted above: moved up
        ("2\n3\n4\n5\n6\n", (3, 4), Followed(2, 3, False)),
        # one of them edited: changed, the same lines
        ("1\n2\nthree\n4\n5\n6\n", (3, 4), Followed(3, 4, True)),
        # a line inserted between them: changed, the range grows
        ("1\n2\n3\nnew\n4\n5\n6\n", (3, 4), Followed(3, 5, True)),
        # a line inserted right after them: not theirs
        ("1\n2\n3\n4\nnew\n5\n6\n", (3, 4), Followed(3, 4, False)),
        # both deleted: removed, where they were
        ("1\n2\n5\n6\n", (3, 4), Followed(3, 2, True, removed=True)),
        # the first replaced by two lines: changed, the new lines included
        ("1\n2\nx\ny\n4\n5\n6\n", (3, 4), Followed(3, 5, True)),
        # edits below: untouched
        ("1\n2\n3\n4\n5\n", (3, 4), Followed(3, 4, False)),
    ],
)
def test_a_comments_lines_follow_later_edits(
    tmp_path: Path, after: str, range_: tuple[int, int], expected: Followed
) -> None:
    """Each case is git's own ``-U0`` diff of the file, as sending a review reads it."""
    repo = make_repo(tmp_path / "repo", {"f.txt": "1\n2\n3\n4\n5\n6\n"})
    before = tree_diff.head_tree(str(repo))
    scratch = tmp_path / "scratch"
    scratch.mkdir(mode=0o700)
    (repo / "f.txt").write_text(after)
    _, now, _ = changes.snapshot(str(repo), str(scratch))
    patch = tree_diff.file_patch(str(repo), before, now, "f.txt", context=0)
    assert follow(parse_hunks(patch), *range_) == expected
