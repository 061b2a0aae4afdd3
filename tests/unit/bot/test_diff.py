"""What the Diff button and /diff answer, with real git (the Discord side is e2e)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.bot.changes.diff import GONE, turn_diff, uncommitted_diff
from bridge.sessions import changes, snapshot_files
from bridge_testkit.gitrepo import git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"a.txt": "a\n"}, "base")


def test_a_worktree_thread_compares_with_its_base_commit(repo: Path, tmp_path: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "committed on the branch")
    (repo / "c.txt").write_text("c\n")  # and one uncommitted
    scratch = str(tmp_path)
    against_base = uncommitted_diff(str(repo), None, base, scratch, 4).messages[0]
    assert against_base.startswith("📝 2 files changed, +2 −0 (since the worktree's base commit)")
    against_head = uncommitted_diff(str(repo), None, None, scratch, 4).messages[0]
    assert against_head.startswith("📝 1 file changed, +1 −0 (uncommitted, against HEAD)")
    named = uncommitted_diff(str(repo), "main~1", None, scratch, 4).messages[0]
    assert named.startswith("📝 2 files changed, +2 −0 (working tree against `main~1`)")
    assert "not a revision" in uncommitted_diff(str(repo), "nope", None, scratch, 4).messages[0]


def test_a_turns_diff_and_a_snapshot_git_no_longer_has(repo: Path, tmp_path: Path) -> None:
    _, old, _ = changes.snapshot(str(repo), str(tmp_path))
    (repo / "a.txt").write_text("A\n")
    _, new, _ = changes.snapshot(str(repo), str(tmp_path))
    shown = turn_diff(str(repo), old[:20], new[:20], 4).messages[0]
    assert shown.startswith("📝 1 file changed, +1 −1 (this turn)") and "+A" in shown
    assert turn_diff(str(repo), "0" * 20, new[:20], 4).messages == [GONE]


def test_outside_git_says_why(tmp_path: Path) -> None:
    (message,) = uncommitted_diff(str(tmp_path), None, None, str(tmp_path), 4).messages
    assert "is not in a git repository" in message
    assert (
        "is not in a git repository" in turn_diff(str(tmp_path), "a" * 20, "b" * 20, 4).messages[0]
    )


def test_large_untracked_files_left_out_are_counted(repo: Path, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(snapshot_files, "MAX_UNTRACKED_FILE", 10)
    (repo / "big.bin").write_bytes(b"x" * 100)
    (repo / "a.txt").write_text("a\nb\n")
    messages = uncommitted_diff(str(repo), None, None, str(tmp_path), 4).messages
    assert messages[-1].endswith("-# 1 large untracked file(s) left out.")
    assert all(len(m) <= 2000 for m in messages)


def test_an_index_that_is_a_fifo_or_a_symlink_gets_an_answer_at_once(
    repo: Path, tmp_path: Path
) -> None:
    """``.git/index`` → /dev/zero used to be copied without end: /diff never answered and
    held one of the bot's worker threads."""
    import os
    import time

    index = repo / ".git" / "index"
    index.unlink()
    index.symlink_to("/dev/zero")
    start = time.monotonic()
    (message,) = uncommitted_diff(str(repo), None, None, str(tmp_path), 4).messages
    assert message == "⚠️ the repository's index is a symlink: not followed"
    index.unlink()
    os.mkfifo(index)
    (message,) = uncommitted_diff(str(repo), None, None, str(tmp_path), 4).messages
    assert message == "⚠️ the repository's index is not a regular file"
    assert time.monotonic() - start < 5


def test_the_bridges_own_files_are_left_out(tmp_path: Path) -> None:
    home = make_repo(tmp_path / "home", {".profile": "x\n"})
    (home / ".discord-bridge").mkdir()
    (home / ".discord-bridge" / "config.json").write_text('{"token": "SECRET"}\n')
    (home / "work.txt").write_text("work\n")
    private = (str(home / ".discord-bridge"),)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (message,) = uncommitted_diff(str(home), None, None, str(scratch), 4, private).messages
    assert message.startswith("📝 1 file changed, +1 −0") and "SECRET" not in message
