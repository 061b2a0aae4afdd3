"""What a review reads from a real repository: a diff's file, the lines a comment is on, and
those lines in the files as they are when the review is sent; a hostile repository's
commands never run on the way."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.sessions import changes, review_files, tree_diff
from bridge.sessions.review_files import ReviewError
from bridge.sessions.review_lines import BadLines
from bridge.state.review_drafts import Comment
from bridge_testkit.gitrepo import git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {"app.py": "a = 1\nb = 2\nc = 3\n", "gone.txt": "bye\n", "logo.bin": "x"}
    return make_repo(tmp_path / "repo", files)


@pytest.fixture
def scratch(tmp_path: Path) -> str:
    path = tmp_path / "scratch"
    path.mkdir(mode=0o700)
    return str(path)


def turn(repo: Path, scratch: str) -> tuple[str, str]:
    """A turn: app.py grows, gone.txt is deleted, logo.bin turns binary, new.txt appears."""
    before = tree_diff.head_tree(str(repo))
    (repo / "app.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
    (repo / "gone.txt").unlink()
    (repo / "logo.bin").write_bytes(b"\0\1\2")
    (repo / "new.txt").write_text("fresh\n")
    _, after, _ = changes.snapshot(str(repo), scratch)
    return before, after


def comment_on(found: review_files.DiffFile, typed: str, text: str = "note") -> Comment:
    where = review_files.locate(found, typed)
    return Comment("aaaaaa", where.path, where.start, where.end, text, where.tree, where.quoted)


def test_a_diffs_files_and_their_lines(repo: Path, scratch: str) -> None:
    old, new = turn(repo, scratch)
    files = review_files.changed_files(str(repo), old[:20], new[:20])
    assert [f.path for f in files] == ["app.py", "gone.txt", "logo.bin", "new.txt"]
    app = review_files.diff_file(str(repo), old[:20], new[:20], 0)
    numbered, reason = review_files.file_hunks(app)
    assert reason == "" and "+4 │ d = 4" in numbered and "+5 │ e = 5" in numbered
    where = review_files.locate(app, "4-5")
    assert (where.path, where.start, where.end) == ("app.py", 4, 5)
    assert where.quoted == ["d = 4", "e = 5"]
    assert where.tree == new
    with pytest.raises(BadLines, match=r"app\.py has 5 lines now"):
        review_files.locate(app, "6")
    for index, said in ((1, "gone.txt was deleted in this diff"), (2, "logo.bin is binary")):
        found = review_files.diff_file(str(repo), old, new, index)
        assert review_files.file_hunks(found)[1].startswith(said)
        with pytest.raises(ReviewError, match=said):
            review_files.locate(found, "1")
    with pytest.raises(ReviewError, match="not in this diff"):
        review_files.diff_file(str(repo), old, new, 4)
    with pytest.raises(ReviewError, match="no longer in the repository"):
        review_files.diff_file(str(repo), "0" * 20, new, 0)


def test_sent_comments_follow_the_files_as_they_are(repo: Path, scratch: str) -> None:
    old, new = turn(repo, scratch)
    app = review_files.diff_file(str(repo), old, new, 0)
    fresh = review_files.diff_file(str(repo), old, new, 3)
    comments = [
        comment_on(app, "2", "moved"),  # two lines go in above it
        comment_on(app, "3", "removed"),  # deleted
        comment_on(app, "5", "changed"),  # edited again
        comment_on(fresh, "1", "gone"),  # its file is deleted
    ]
    stale = comment_on(app, "1", "snapshot gone")
    stale.tree = "1" * 40  # a snapshot git has removed: compared where the lines were
    (repo / "app.py").write_text("x = 0\ny = 0\na = 1\nb = 2\nd = 4\ne = 50\n")
    (repo / "new.txt").unlink()
    items = review_files.follow_comments(str(repo), [*comments, stale], scratch, ())
    moved, removed, changed, gone, fallback = items
    assert (moved.start, moved.lines, moved.changed, moved.moved_from) == (
        4,
        ["b = 2"],
        False,
        (2, 2),
    )
    assert moved.was is None
    assert removed.removed and removed.was == ["c = 3"] and removed.start == 5
    assert (changed.start, changed.lines, changed.changed, changed.was) == (
        6,
        ["e = 50"],
        True,
        ["e = 5"],
    )
    assert gone.gone and gone.was == ["fresh"]
    assert fallback.changed and fallback.lines == ["x = 0"] and fallback.was == ["a = 1"]


def test_a_hostile_repository_runs_nothing_while_a_review_reads_it(
    repo: Path, scratch: str, tmp_path: Path
) -> None:
    pwned = tmp_path / "pwned"
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    for key, value in (
        ("filter.evil.clean", f"touch {pwned}; cat"),
        ("filter.evil.smudge", f"touch {pwned}; cat"),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", f"touch {pwned}; cat"),
        ("diff.evil.command", f"touch {pwned}"),
        ("diff.external", f"touch {pwned}"),
        ("core.fsmonitor", f"touch {pwned}"),
        ("core.pager", f"touch {pwned}"),
    ):
        git(repo, "config", key, value)
    old, new = turn(repo, scratch)
    app = review_files.diff_file(str(repo), old, new, 1)
    assert app.change.path == "app.py"
    assert "+4 │ d = 4" in review_files.file_hunks(app)[0]
    item = comment_on(app, "4")
    (repo / "app.py").write_text("changed\n" * 5)
    (now,) = review_files.follow_comments(str(repo), [item], scratch, ())
    assert (now.start, now.lines, now.changed) == (4, ["changed"], True)
    assert not pwned.exists()
