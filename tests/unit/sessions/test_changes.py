"""Snapshots and diffs with real git: what counts, what is left alone, what never runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.sessions import changes
from bridge_testkit.gitrepo import git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {"a.txt": "one\ntwo\n", "gone.txt": "bye\n", ".gitignore": "*.log\n"}
    return make_repo(tmp_path / "repo", files)


@pytest.fixture
def scratch(tmp_path: Path) -> str:
    path = tmp_path / "scratch"
    path.mkdir(mode=0o700)
    return str(path)


def by_path(files: list[changes.FileChange]) -> dict:
    return {f.path: (f.added, f.removed) for f in files}


def test_a_turn_counts_edits_deletions_untracked_and_binary_files_not_ignored_ones(
    repo: Path, scratch: str
) -> None:
    root, before, skipped = changes.snapshot(str(repo), scratch)
    assert (root, skipped) == (str(repo), [])
    status_before = git(repo, "status", "--porcelain")
    (repo / "a.txt").write_text("one\nTWO\nthree\n")
    (repo / "gone.txt").unlink()
    (repo / "new.txt").write_text("fresh\n")
    (repo / "pic.bin").write_bytes(b"\x00\x01\x02\x03")
    (repo / "noise.log").write_text("ignored\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "deep.txt").write_text("x\ny\n")
    _, after, _ = changes.snapshot(str(repo / "sub"), scratch)  # from a subdirectory too

    files = changes.changed_files(str(repo), before, after)
    assert by_path(files) == {
        "a.txt": (2, 1), "gone.txt": (0, 1), "new.txt": (1, 0), "pic.bin": (None, None),
        "sub/deep.txt": (2, 0),
    }  # fmt: skip
    assert changes.summary(files) == "📝 5 files changed, +5 −2"
    text, cut = changes.diff_text(str(repo), before, after)
    assert not cut and "+TWO" in text and "Binary files /dev/null and b/pic.bin differ" in text
    assert "\x00" not in text and "noise.log" not in text
    # the user's index, HEAD and status are untouched
    assert git(repo, "diff", "--cached", "--name-only") == ""
    assert status_before == ""
    assert "new.txt" in git(repo, "status", "--porcelain")  # still untracked
    assert git(repo, "log", "--oneline").count("\n") == 1
    assert os.listdir(scratch) == []  # the temporary index is gone


def test_nothing_changed_gives_the_same_tree_and_no_summary(repo: Path, scratch: str) -> None:
    _, one, _ = changes.snapshot(str(repo), scratch)
    _, two, _ = changes.snapshot(str(repo), scratch)
    assert one == two and changes.changed_files(str(repo), one, two) == []
    assert changes.summary([]) == ""


def test_a_hostile_repository_config_runs_nothing(repo: Path, scratch: str, tmp_path) -> None:
    """Claude can write .git/config: filters, fsmonitor, hooks, external diff and textconv
    are all commands git would run. None of them may."""
    pwned = tmp_path / "pwned"
    touch = f"touch {pwned}; cat"
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    for key, value in (
        ("filter.evil.clean", touch), ("filter.evil.smudge", touch),
        ("filter.evil.process", f"touch {pwned}"), ("filter.evil.required", "true"),
        ("core.fsmonitor", f"touch {pwned}"), ("diff.external", f"touch {pwned}"),
        ("diff.evil.textconv", touch), ("diff.evil.command", f"touch {pwned}"),
        ("core.pager", f"touch {pwned}"), ("core.hooksPath", str(tmp_path / "hooks")),
    ):  # fmt: skip
        git(repo, "config", key, value)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-index-change", "pre-commit", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {pwned}\n")
        (hooks / name).chmod(0o755)
    _, before, _ = changes.snapshot(str(repo), scratch)
    (repo / "a.txt").write_text("changed\n")
    _, after, _ = changes.snapshot(str(repo), scratch)
    assert by_path(changes.changed_files(str(repo), before, after))["a.txt"] == (1, 2)
    text, _ = changes.diff_text(str(repo), before, after)
    assert "+changed" in text
    assert not pwned.exists()


def test_large_untracked_files_are_left_out_and_named(
    repo: Path, scratch: str, monkeypatch
) -> None:
    monkeypatch.setattr(changes, "MAX_UNTRACKED_FILE", 100)
    (repo / "small.txt").write_text("small\n")
    (repo / "huge.dat").write_bytes(b"x" * 1000)
    (repo / "a.txt").write_text("edited\n")
    _, tree, skipped = changes.snapshot(str(repo), scratch)
    assert skipped == ["huge.dat"]
    files = by_path(changes.changed_files(str(repo), changes.head_tree(str(repo)), tree))
    assert set(files) == {"a.txt", "small.txt"}


def test_outside_git_and_inside_dot_git_are_not_repositories(tmp_path, repo, scratch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for path in (plain, repo / ".git", tmp_path / "missing"):
        with pytest.raises(changes.NotARepository):
            changes.snapshot(str(path), scratch)


def test_a_repository_without_commits_compares_with_the_empty_tree(tmp_path, scratch) -> None:
    path = tmp_path / "fresh"
    path.mkdir()
    git(path, "init", "-q")
    (path / "first.txt").write_text("1\n")
    _, tree, _ = changes.snapshot(str(path), scratch)
    assert changes.head_tree(str(path)) == changes.EMPTY_TREE
    assert by_path(changes.changed_files(str(path), changes.EMPTY_TREE, tree)) == {
        "first.txt": (1, 0)
    }


def test_revisions_are_checked_before_git_sees_them(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert changes.tree_of(str(repo), "HEAD") == head
    assert changes.tree_of(str(repo), head[:12]) == head
    for bad in ("--output=/tmp/x", "HEAD..main", "a b", "", "$(id)", "nope"):
        with pytest.raises(changes.GitError):
            changes.tree_of(str(repo), bad)


def test_the_callers_git_environment_is_ignored(repo: Path, scratch, monkeypatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/nonexistent")
    monkeypatch.setenv("GIT_INDEX_FILE", "/nonexistent/index")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "false")
    root, tree, _ = changes.snapshot(str(repo), scratch)
    assert root == str(repo) and len(tree) == 40


def test_a_slow_git_is_stopped(repo: Path, scratch, monkeypatch) -> None:
    with pytest.raises(changes.GitError, match="took more than"):
        changes.git(str(repo), "status", timeout=0.000001)


def test_a_repository_inside_the_tree_is_not_its_content(repo: Path, scratch: str) -> None:
    """A worktree under .claude/worktrees (or a clone) is a repository of its own."""
    git(repo, "worktree", "add", "-q", "-b", "side", str(repo / ".claude" / "worktrees" / "w"))
    (repo / "own.txt").write_text("mine\n")
    _, tree, skipped = changes.snapshot(str(repo), scratch)
    files = by_path(changes.changed_files(str(repo), changes.head_tree(str(repo)), tree))
    assert files == {"own.txt": (1, 0)} and skipped == []
