"""Snapshots and diffs with real git: what counts, what is left alone, what never runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.sessions import changes, git_index, snapshot_files, tree_diff
from bridge_testkit.gitrepo import git, make_repo


@pytest.fixture(autouse=True, params=["stat test here", "stat test by git diff-files"])
def stat_test(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test on both ways of finding the changed tracked files (a small index: here; a
    large one: git diff-files on an index dated at the epoch)."""
    here = request.param == "stat test here"
    monkeypatch.setattr(git_index, "STAT_HERE", 1 << 30 if here else -1)
    monkeypatch.setattr(git_index, "HERE_SHARE", 1 if here else 0)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {"a.txt": "one\ntwo\n", "gone.txt": "bye\n", ".gitignore": "*.log\n"}
    return make_repo(tmp_path / "repo", files)


@pytest.fixture
def scratch(tmp_path: Path) -> str:
    path = tmp_path / "scratch"
    path.mkdir(mode=0o700)
    return str(path)


def by_path(files: list[tree_diff.FileChange]) -> dict:
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

    files = tree_diff.changed_files(str(repo), before, after)
    assert by_path(files) == {
        "a.txt": (2, 1),
        "gone.txt": (0, 1),
        "new.txt": (1, 0),
        "pic.bin": (None, None),
        "sub/deep.txt": (2, 0),
    }
    assert tree_diff.summary(files) == "📝 5 files changed, +5 −2"
    text, cut = tree_diff.diff_text(str(repo), before, after)
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
    assert one == two and tree_diff.changed_files(str(repo), one, two) == []
    assert tree_diff.summary([]) == ""


def test_a_hostile_repository_config_runs_nothing(repo: Path, scratch: str, tmp_path) -> None:
    """Claude can write .git/config: filters, fsmonitor, hooks, external diff and textconv
    are all commands git would run. None of them may."""
    pwned = tmp_path / "pwned"
    touch = f"touch {pwned}; cat"
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    for key, value in (
        ("filter.evil.clean", touch),
        ("filter.evil.smudge", touch),
        ("filter.evil.process", f"touch {pwned}"),
        ("filter.evil.required", "true"),
        ("core.fsmonitor", f"touch {pwned}"),
        ("diff.external", f"touch {pwned}"),
        ("diff.evil.textconv", touch),
        ("diff.evil.command", f"touch {pwned}"),
        ("core.pager", f"touch {pwned}"),
        ("core.hooksPath", str(tmp_path / "hooks")),
    ):
        git(repo, "config", key, value)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-index-change", "pre-commit", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {pwned}\n")
        (hooks / name).chmod(0o755)
    _, before, _ = changes.snapshot(str(repo), scratch)
    (repo / "a.txt").write_text("changed\n")
    _, after, _ = changes.snapshot(str(repo), scratch)
    assert by_path(tree_diff.changed_files(str(repo), before, after))["a.txt"] == (1, 2)
    text, _ = tree_diff.diff_text(str(repo), before, after)
    assert "+changed" in text
    assert not pwned.exists()


def test_large_untracked_files_are_left_out_and_named(
    repo: Path, scratch: str, monkeypatch
) -> None:
    monkeypatch.setattr(snapshot_files, "MAX_UNTRACKED_FILE", 100)
    (repo / "small.txt").write_text("small\n")
    (repo / "huge.dat").write_bytes(b"x" * 1000)
    (repo / "a.txt").write_text("edited\n")
    _, tree, skipped = changes.snapshot(str(repo), scratch)
    assert skipped == ["huge.dat"]
    files = by_path(tree_diff.changed_files(str(repo), tree_diff.head_tree(str(repo)), tree))
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
    assert tree_diff.head_tree(str(path)) == tree_diff.EMPTY_TREE
    assert by_path(tree_diff.changed_files(str(path), tree_diff.EMPTY_TREE, tree)) == {
        "first.txt": (1, 0)
    }


def test_revisions_are_checked_before_git_sees_them(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert tree_diff.tree_of(str(repo), "HEAD") == head
    assert tree_diff.tree_of(str(repo), head[:12]) == head
    for bad in ("--output=/tmp/x", "HEAD..main", "a b", "", "$(id)", "nope"):
        with pytest.raises(changes.GitError):
            tree_diff.tree_of(str(repo), bad)


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
    files = by_path(tree_diff.changed_files(str(repo), tree_diff.head_tree(str(repo)), tree))
    assert files == {"own.txt": (1, 0)} and skipped == []


# --- a hostile repository: nothing it defines runs, nothing outside it is read --------------

DRIVER_NAMES = ("x=y", "", "a b", "Evil", "-x", "x.y")


def blob_of(repo: Path, tree: str, path: str) -> bytes:
    """The bytes a snapshot holds for ``path``."""
    import subprocess

    return subprocess.run(
        ["git", "-C", str(repo), "cat-file", "blob", f"{tree}:{path}"],
        capture_output=True,
        check=True,
    ).stdout


def all_objects(repo: Path) -> bytes:
    """Every object's content in the repository's store (to look for what must not be there)."""
    import subprocess

    return subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout


@pytest.mark.parametrize("key", ["clean", "smudge", "process"])
@pytest.mark.parametrize("name", DRIVER_NAMES, ids=lambda n: repr(n))
def test_no_filter_driver_runs_whatever_its_name(
    repo: Path, scratch: str, tmp_path: Path, name: str, key: str
) -> None:
    """git splits ``-c filter.<name>.clean=`` at the first ``=`` and a driver may be named
    ``""``: no list of names to neutralise can be trusted. Snapshots never let git filter."""
    marker = tmp_path / "marker"
    with open(repo / ".git" / "config", "a") as config:
        config.write(
            f'[filter "{name}"]\n\t{key} = "sh -c \'id > {marker}\'; cat"\n\trequired = true\n'
        )
    (repo / ".gitattributes").write_text(f"* filter={name}\n")  # ("a b" cannot be named here)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text(f"*.txt filter={name}\n")
    _, before, _ = changes.snapshot(str(repo), scratch)
    (repo / "a.txt").write_text("one\nchanged\n")
    (repo / "new.txt").write_text("fresh\n")
    _, after, _ = changes.snapshot(str(repo), scratch)
    files = by_path(tree_diff.changed_files(str(repo), before, after))
    assert files == {"a.txt": (1, 1), "new.txt": (1, 0)}
    text, _ = tree_diff.diff_text(str(repo), tree_diff.head_tree(str(repo)), after)
    assert "+changed" in text and "+fresh" in text
    assert blob_of(repo, after, "a.txt") == b"one\nchanged\n"  # the bytes on disk, unfiltered
    assert not marker.exists()


def test_other_attributes_never_rewrite_what_is_snapshotted(repo: Path, scratch: str) -> None:
    """ident, working-tree-encoding and eol conversion are git's own filters: a snapshot
    holds the file's bytes as they are on disk."""
    (repo / ".gitattributes").write_text(
        "id.txt ident\nutf16.txt working-tree-encoding=UTF-16\ncrlf.txt text eol=crlf\n"
    )
    raw = {
        "id.txt": b"$Id: 0123456789abcdef $\n",
        "utf16.txt": b"\xff\xfe\x00\xd8 odd\n",
        "crlf.txt": b"one\r\ntwo\r\n",
    }
    for name, data in raw.items():
        (repo / name).write_bytes(data)
    _, tree, _ = changes.snapshot(str(repo), scratch)
    for name, data in raw.items():
        assert blob_of(repo, tree, name) == data, name


def test_a_partial_clone_never_fetches_what_it_lacks(repo: Path, scratch: str, tmp_path) -> None:
    """A promisor remote makes git fetch a missing object on demand, through the
    repository's own ``core.sshCommand`` (or a local ``uploadpack``): a command it chose."""
    marker = tmp_path / "marker"
    blob = git(repo, "rev-parse", "HEAD:a.txt").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", "ssh://example.invalid/x"),
        ("remote.origin.promisor", "true"),
        ("core.sshCommand", f"sh -c 'id > {marker}'; false"),
    ):
        git(repo, "config", key, value)
    (repo / "a.txt").write_text("edited\n")
    _, tree, _ = changes.snapshot(str(repo), scratch)
    head = tree_diff.head_tree(str(repo))
    for attempt in (tree_diff.changed_files, tree_diff.diff_text):
        try:
            attempt(str(repo), head, tree)
        except changes.GitError:
            pass  # the object is missing: an error, never a fetch
    assert not marker.exists()


def test_a_working_tree_that_moved_elsewhere_is_not_snapshotted(
    repo: Path, scratch: str, tmp_path: Path
) -> None:
    """``core.worktree`` can point the repository's working tree at any directory."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("not the project's\n")
    git(repo, "config", "core.worktree", str(elsewhere))
    with pytest.raises(changes.GitError):
        changes.snapshot(str(repo), scratch)
    git(repo, "config", "core.worktree", str(tmp_path))  # an ancestor: the project is in it
    with pytest.raises(changes.GitError, match="elsewhere"):
        changes.snapshot(str(repo), scratch)
    assert b"not the project's" not in all_objects(repo)


def test_symlinks_fifos_and_symlinked_folders_are_never_followed(
    repo: Path, scratch: str, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deep.txt").write_text("outside secret\n")
    (outside / "a.txt").write_text("outside secret\n")
    git(repo, "add", ".")
    (repo / "sub").mkdir()
    (repo / "sub" / "deep.txt").write_text("tracked\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "sub")
    # a tracked file becomes a symlink, a tracked folder a symlink to a folder outside with
    # the same names, an untracked symlink, FIFOs tracked and untracked
    (repo / "a.txt").unlink()
    (repo / "a.txt").symlink_to(outside / "a.txt")
    (repo / "sub" / "deep.txt").unlink()
    (repo / "sub").rmdir()
    (repo / "sub").symlink_to(outside)
    (repo / "link").symlink_to("/etc/passwd")
    os.mkfifo(repo / "pipe")
    (repo / "gone.txt").unlink()
    os.mkfifo(repo / "gone.txt")
    _, tree, skipped = changes.snapshot(str(repo), scratch)
    files = git(repo, "ls-tree", "-r", tree)
    assert "120000 blob" in files and "\ta.txt\n" in files and "\tlink\n" in files
    assert blob_of(repo, tree, "a.txt") == os.fsencode(outside / "a.txt")
    assert blob_of(repo, tree, "link") == b"/etc/passwd"
    assert "sub/" not in files and "pipe" not in files and "gone.txt" not in files
    assert skipped == []
    assert b"outside secret" not in all_objects(repo)
    assert b"root:" not in all_objects(repo)


def test_an_index_that_is_not_a_plain_file_is_refused_at_once(
    repo: Path, scratch: str, tmp_path: Path, monkeypatch
) -> None:
    """``.git/index`` → /dev/zero (or a FIFO, or a huge file) used to be copied without end."""
    import time

    index = repo / ".git" / "index"
    index.unlink()
    index.symlink_to("/dev/zero")
    for make in ("symlink", "fifo", "huge"):
        if make == "fifo":
            index.unlink()
            os.mkfifo(index)
        elif make == "huge":
            index.unlink()
            index.write_bytes(b"\0" * 4096)
            monkeypatch.setattr(git_index, "MAX_INDEX", 1024)
        start = time.monotonic()
        with pytest.raises(changes.GitError, match="index"):
            changes.snapshot(str(repo), scratch, deadline=time.monotonic() + 5)
        assert time.monotonic() - start < 2, make
        assert os.listdir(scratch) == []


def test_the_bridges_own_folders_are_never_snapshotted(tmp_path: Path, scratch: str) -> None:
    """A repository holding the bridge's home (a dotfiles repository at ~): its config, with
    the token, must not be copied into the object store nor shown."""
    home = make_repo(tmp_path / "home", {".bashrc": "# rc\n"})
    bridge = home / ".discord-bridge"
    bridge.mkdir(mode=0o700)
    (bridge / "config.json").write_text('{"token": "SECRET-TOKEN"}\n')
    state = home / ".local" / "state" / "discord-bridge"
    state.mkdir(parents=True)
    (state / "upload.txt").write_text("SECRET-UPLOAD\n")
    other_config = home / "elsewhere.json"
    other_config.write_text("SECRET-OTHER\n")
    git(home, "add", "-f", "elsewhere.json")  # a tracked file that is the bridge's: kept as is
    git(home, "commit", "-qm", "tracked")
    other_config.write_text("SECRET-OTHER-NOW\n")
    project = home / "project"
    project.mkdir()
    (project / "work.txt").write_text("work\n")
    private = (str(bridge), str(state), str(other_config))
    root, tree, _ = changes.snapshot(str(project), scratch, private=private)
    files = by_path(tree_diff.changed_files(root, tree_diff.head_tree(root), tree))
    assert files == {"project/work.txt": (1, 0)}
    store = all_objects(home)
    assert b"SECRET-TOKEN" not in store and b"SECRET-UPLOAD" not in store
    assert b"SECRET-OTHER-NOW" not in store
    inside = make_repo(state / "own", {"x.txt": "x\n"})  # a repository in the bridge's state
    with pytest.raises(changes.GitError, match="bridge"):
        changes.snapshot(str(inside), scratch, private=private)


def test_conflicts_intent_to_add_and_skipped_entries_as_git_add_would(
    repo: Path, scratch: str, tmp_path: Path
) -> None:
    """The snapshot is what ``git add -A`` into a copy of the index would give."""
    import subprocess

    git(repo, "checkout", "-qb", "side")
    (repo / "a.txt").write_text("side\n")
    git(repo, "commit", "-qam", "side")
    git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("main\n")
    git(repo, "commit", "-qam", "main")
    subprocess.run(["git", "-C", str(repo), "merge", "side"], capture_output=True)  # conflict
    (repo / "ita.txt").write_text("intent\n")
    git(repo, "add", "-N", "ita.txt")
    (repo / "x.txt").write_text("x\n")
    (repo / "y.txt").write_text("y\n")
    git(repo, "add", "x.txt", "y.txt")
    git(repo, "update-index", "--skip-worktree", "x.txt")
    git(repo, "update-index", "--assume-unchanged", "y.txt")
    (repo / "x.txt").unlink()
    (repo / "y.txt").write_text("changed but assumed unchanged\n")
    os.chmod(repo / "gone.txt", 0o755)
    _, tree, _ = changes.snapshot(str(repo), scratch)
    assert tree == add_all_tree(repo, tmp_path)


def test_a_change_git_stat_test_cannot_see_is_still_snapshotted(
    repo: Path, scratch: str, monkeypatch
) -> None:
    """A repository's config can relax git's stat test (``core.trustctime``,
    ``core.checkStat``): an edit that keeps size and mtime would then go unseen."""
    old = 1_000_000_000
    os.utime(repo / "a.txt", (old, old))
    git(repo, "add", "a.txt")  # the index records the old mtime
    git(repo, "config", "core.trustctime", "false")
    git(repo, "config", "core.checkStat", "minimal")
    import time

    time.sleep(1.01 - time.time() % 1)  # into the next second: only ctime tells (git: seconds)
    (repo / "a.txt").write_text("ONE\nTWO\n")  # same size
    os.utime(repo / "a.txt", (old, old))
    _, tree, _ = changes.snapshot(str(repo), scratch)
    assert blob_of(repo, tree, "a.txt") == b"ONE\nTWO\n"


def test_a_file_changed_as_the_index_was_written_is_read_again(
    repo: Path, scratch: str, monkeypatch
) -> None:
    """git's stat test cannot vouch for a file modified in the second its index entry was
    written ("racy"): git would re-read it through the filters; the snapshot reads it itself
    even when git's listing (here: told to find nothing) misses it."""
    git(repo, "add", "a.txt")  # the index written now: a.txt's entry is racy
    (repo / "a.txt").write_text("one\nTWO\n")
    real = changes.git

    def stat_test_sees_nothing(cwd: str, *args: str, **kwargs) -> bytes:
        return b"" if args[0] == "diff-files" else real(cwd, *args, **kwargs)

    monkeypatch.setattr(changes, "git", stat_test_sees_nothing)
    _, tree, _ = changes.snapshot(str(repo), scratch)
    assert blob_of(repo, tree, "a.txt") == b"one\nTWO\n"


def test_which_entries_are_racy(repo: Path) -> None:
    data = (repo / ".git" / "index").read_bytes()
    written = os.stat(repo / ".git" / "index").st_mtime_ns
    facts = git_index.read_index(data, 20, 0)
    assert facts.must_read == [b".gitignore", b"a.txt", b"gone.txt"]
    assert facts.tree == git(repo, "rev-parse", "HEAD^{tree}").strip()  # the cache is valid
    assert git_index.read_index(data, 20, written + 10 * 10**9).must_read == []
    with pytest.raises(git_index.Refused):
        git_index.read_index(b"not an index at all", 20, 0)
    with pytest.raises(git_index.Refused):
        git_index.read_index(data[:60], 20, 0)


@pytest.mark.parametrize("layout", ["split", "version 4"])
def test_a_split_or_version_4_index_is_read_whole(
    repo: Path, scratch: str, tmp_path: Path, layout: str
) -> None:
    if layout == "split":
        git(repo, "update-index", "--split-index")
        (repo / "more.txt").write_text("more\n")
        git(repo, "add", "more.txt")  # an entry in the split part
    else:
        git(repo, "update-index", "--index-version", "4")
    (repo / "a.txt").write_text("edited\n")
    (repo / "new.txt").write_text("new\n")
    _, tree, _ = changes.snapshot(str(repo), scratch)
    assert tree == add_all_tree(repo, tmp_path)


def add_all_tree(repo: Path, tmp_path: Path) -> str:
    """What ``git add -A`` into a copy of the index and ``git write-tree`` give."""
    import shutil
    import subprocess

    copy = tmp_path / "index-copy"
    shutil.copyfile(repo / ".git" / "index", copy)
    env = {**os.environ, "GIT_INDEX_FILE": str(copy)}
    for args in (["add", "-A"], ["write-tree"]):
        done = subprocess.run(
            ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
        )
    return done.stdout.strip()


def test_a_submodules_own_config_runs_nothing(repo: Path, scratch: str, tmp_path: Path) -> None:
    """A dirty submodule is one git would inspect with ``git status`` in it, under the
    submodule's own config: its recorded commit is kept, nothing in it runs."""
    marker = tmp_path / "marker"
    sub = make_repo(repo / "sub", {"s.txt": "s\n"})
    with open(sub / ".git" / "config", "a") as config:
        config.write(
            f'[filter "x=y"]\n\tclean = "sh -c \'id > {marker}\'; cat"\n'
            f"[core]\n\tfsmonitor = sh -c 'id > {marker}'\n"
        )
    (sub / ".gitattributes").write_text("* filter=x=y\n")
    head = git(sub, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},sub")
    git(repo, "commit", "-qm", "submodule")
    (sub / "s.txt").write_text("dirty\n")
    (sub / "untracked.txt").write_text("u\n")
    _, tree, _ = changes.snapshot(str(repo), scratch)
    assert f"160000 commit {head}\tsub" in git(repo, "ls-tree", tree)
    assert not marker.exists()


def test_many_files_are_hashed_a_few_descriptors_at_a_time(
    repo: Path, scratch: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(changes, "HASH_BATCH", 2)
    for i in range(7):
        (repo / f"n{i}.txt").write_text(f"{i}\n")
    (repo / "a.txt").write_text("changed, longer\n")  # (git add -A misses a same-size edit)
    (repo / "gone.txt").unlink()
    _, tree, _ = changes.snapshot(str(repo), scratch)
    assert tree == add_all_tree(repo, tmp_path)
    assert len(os.listdir("/proc/self/fd")) < 64  # every descriptor closed
