"""Worktrees with real git: names, creation, what removal would lose, removal."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bridge.sessions import worktrees
from bridge_testkit.gitrepo import git, make_repo, signed_looking_commit

THREAD = "1323802873070354440"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"a.txt": "a\n"})


def test_worktree_names_are_safe_and_unique() -> None:
    assert worktrees.worktree_name("Fix: login bug #12", THREAD) == f"fix-login-bug-12-{THREAD}"
    assert worktrees.worktree_name("../../etc; rm -rf /", THREAD) == f"etc-rm-rf-{THREAD}"
    assert worktrees.worktree_name("日本語", THREAD) == f"thread-{THREAD}"
    assert len(worktrees.worktree_name("x" * 200, THREAD)) <= worktrees.SLUG_MAX + 1 + len(THREAD)
    with pytest.raises(ValueError):
        worktrees.worktree_name("x", "../1")


def valid_refname(branch: str) -> bool:
    done = subprocess.run(["git", "check-ref-format", "--branch", branch], capture_output=True)
    return done.returncode == 0 and not branch.startswith("-")


def test_a_thread_worktree_is_named_after_the_thread_and_its_branch_is_short(repo: Path) -> None:
    first = worktrees.add_for_thread(str(repo), "Fix login bug", THREAD)
    assert first["branch"] == "worktree-fix-login-bug"
    assert first["path"] == str(repo / ".claude" / "worktrees" / "fix-login-bug")
    # A second thread of the same name never shares the first's worktree.
    second = worktrees.add_for_thread(str(repo), "Fix login bug", "1323802873070354441")
    assert second["branch"] == "worktree-fix-login-bug-2" and second["path"] != first["path"]
    # A branch left behind (its worktree removed by hand) is not taken up by a new thread.
    git(repo, "branch", "worktree-docs")
    assert worktrees.add_for_thread(str(repo), "Docs", "7")["branch"] == "worktree-docs-2"
    for name in ("a..b", "~^:?*[\\", "  spaced   out  ", "🚀 launch 🚀", "💥💥", "-.lock", "@{x}"):
        branch = worktrees.add_for_thread(str(repo), name, "8")["branch"]
        assert valid_refname(branch) and ".." not in branch and " " not in branch, branch
    assert worktrees.add_for_thread(str(repo), "💥", "9")["branch"].startswith("worktree-thread")


def test_a_thread_of_an_older_bridge_keeps_its_worktree_and_branch(repo: Path) -> None:
    old = worktrees.add(str(repo), worktrees.worktree_name("Fix login bug", THREAD))
    assert worktrees.add_for_thread(str(repo), "Fix login bug", THREAD) == old
    git(repo, "worktree", "remove", "--force", old["path"])  # its folder gone, its branch kept
    again = worktrees.add_for_thread(str(repo), "Fix login bug", THREAD)
    assert again["branch"] == f"worktree-fix-login-bug-{THREAD}" and Path(again["path"]).is_dir()


def test_a_worktree_leaves_the_project_git_status_clean(repo: Path) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("# the owner's own\n*.swp")  # no final newline: ours on a line of its own
    wt = worktrees.add_for_thread(str(repo), "Clean status", THREAD)
    (Path(wt["path"]) / "work.txt").write_text("in the thread\n")
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    worktrees.add_for_thread(str(repo), "Another", "2")
    lines = exclude.read_text().splitlines()
    assert lines[:2] == ["# the owner's own", "*.swp"]
    assert lines.count(worktrees.EXCLUDE_LINE) == 1  # appended once, not per worktree
    (repo / "mine.txt").write_text("x\n")  # the owner's own untracked files still show
    assert git(repo, "status", "--porcelain") == "?? mine.txt\n"
    assert git(Path(wt["path"]), "status", "--porcelain") == "?? work.txt\n"


def test_an_exclude_file_that_is_a_symlink_is_not_followed(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep\n")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(elsewhere)
    wt = worktrees.add_for_thread(str(repo), "Linked", THREAD)  # made all the same
    assert Path(wt["path"]).is_dir() and elsewhere.read_text() == "keep\n"


def test_clean_worktree_is_removed_with_its_branch(repo: Path) -> None:
    wt = worktrees.add(str(repo), "clean-1")
    path = Path(wt["path"])
    assert path == repo / ".claude" / "worktrees" / "clean-1" and (path / "a.txt").exists()
    assert wt["branch"] == "worktree-clean-1"
    assert wt["base"] == git(repo, "rev-parse", "HEAD").strip()
    assert worktrees.bridge_worktrees(str(repo)) == [str(path)]
    assert worktrees.add(str(repo), "clean-1") == wt  # reused, not created twice
    loss = worktrees.inspect(wt)
    assert loss.exists and loss.clean
    worktrees.remove(wt)
    assert not path.exists()
    assert git(repo, "branch", "--list", "worktree-clean-1") == ""


def test_dirty_and_unmerged_worktrees_list_what_would_be_lost(repo: Path) -> None:
    wt = worktrees.add(str(repo), "dirty-1")
    path = Path(wt["path"])
    (path / "new.txt").write_text("x\n")
    (path / "a.txt").write_text("changed\n")
    loss = worktrees.inspect(wt)
    assert not loss.clean
    assert sorted(loss.uncommitted) == [" M a.txt", "?? new.txt"]
    assert loss.unmerged == []

    git(path, "add", ".")
    git(path, "commit", "-qm", "work in the thread")
    loss = worktrees.inspect(wt)
    assert loss.uncommitted == [] and len(loss.unmerged) == 1
    assert loss.unmerged[0].endswith("work in the thread")
    with pytest.raises(worktrees.WorktreeError):
        worktrees.remove(wt)  # git refuses: the branch is not merged
    git(repo, "merge", "-q", "--ff-only", wt["branch"])
    assert worktrees.inspect(wt).clean  # merged into main: nothing would be lost


def test_ignored_files_count_as_loss_and_are_not_removed_without_force(repo: Path) -> None:
    # `status --untracked-files=all` omits ignored files and `git worktree remove` deletes
    # them: a worktree holding only a .env and a local database looked clean and lost both.
    (repo / ".gitignore").write_text(".env\n*.sqlite\nnode_modules/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore secrets")
    wt = worktrees.add(str(repo), "ignored-1")
    path = Path(wt["path"])
    (path / ".env").write_text("API_KEY=secret\n")
    (path / "data.sqlite").write_bytes(b"SQLite format 3\0")
    (path / "node_modules" / "pkg").mkdir(parents=True)
    (path / "node_modules" / "pkg" / "index.js").write_text("x\n")
    loss = worktrees.inspect(wt)
    assert not loss.clean
    assert loss.uncommitted == [] and loss.unmerged == []
    assert sorted(loss.ignored) == [".env", "data.sqlite", "node_modules/"]  # a dir is one line
    with pytest.raises(worktrees.WorktreeError, match="ignored files"):
        worktrees.remove(wt)
    assert (path / ".env").read_text() == "API_KEY=secret\n"
    worktrees.remove(wt, force=True)  # Remove anyway
    assert not path.exists()


def test_force_removes_a_dirty_worktree(repo: Path) -> None:
    wt = worktrees.add(str(repo), "forced")
    (Path(wt["path"]) / "new.txt").write_text("x\n")
    with pytest.raises(worktrees.WorktreeError):
        worktrees.remove(wt)
    assert Path(wt["path"]).exists()
    worktrees.remove(wt, force=True)
    assert not Path(wt["path"]).exists()
    assert git(repo, "branch", "--list", wt["branch"]) == ""


def test_removed_directory_reads_as_gone_and_can_be_recreated(repo: Path) -> None:
    wt = worktrees.add(str(repo), "gone")
    subprocess.run(["rm", "-rf", wt["path"]], check=True)
    assert worktrees.inspect(wt).exists is False
    again = worktrees.add(str(repo), "gone")  # the branch survived: reused
    assert Path(again["path"]).is_dir() and again["branch"] == wt["branch"]


def test_not_a_repository(tmp_path: Path) -> None:
    assert worktrees.repo_root(str(tmp_path)) is None
    assert worktrees.bridge_worktrees(str(tmp_path)) == []
    with pytest.raises(worktrees.WorktreeError, match="not in a git repository"):
        worktrees.add(str(tmp_path), "x")


def test_what_removal_would_lose_is_read_without_running_the_repositorys_commands(
    repo: Path, tmp_path: Path
) -> None:
    """Claude can write .git/config: ``git status`` would run its fsmonitor and, for a file
    modified in the second its index was written, its clean filter; ``git log`` its
    ``gpg.program`` on a commit claiming a signature; ``git worktree remove`` runs ``git
    status``. Archive, Discard and Finish read a worktree without any of them."""
    wt = worktrees.add(str(repo), "hostile")
    path = Path(wt["path"])
    (path / "b.txt").write_text("b\n")
    git(path, "add", "b.txt")
    signed_looking_commit(path, "signed")
    ran = tmp_path / "ran.log"
    gpg = tmp_path / "gpg.sh"
    gpg.write_text(f"#!/bin/sh\necho gpg >> {ran}\n")
    gpg.chmod(0o755)
    mark = f"\"sh -c 'echo $0 >> {ran}'; cat\""
    with open(repo / ".git" / "config", "a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {mark}\n[log]\n\tshowSignature = true\n"
            f'[gpg]\n\tprogram = {gpg}\n[filter "x=y"]\n\tclean = {mark}\n'
            "\trequired = true\n"
        )
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=x=y\n")
    (path / "a.txt").write_text("changed in the same second\n")  # racy: status would re-read
    loss = worktrees.inspect(wt)
    assert loss.uncommitted == [" M a.txt"] and loss.unmerged[0].endswith(" signed")
    worktrees.remove(wt, force=True)
    assert not path.exists()
    assert not ran.exists(), ran.read_text()


def test_a_new_worktree_is_checked_out_as_git_stores_it_with_no_command_of_the_repository(
    tmp_path: Path,
) -> None:
    """Files, folders, an executable and a symlink as git would write them, the new worktree
    clean by git's own reading, and no hook (``post-checkout``) or fsmonitor of the project's
    config run — as again when the branch survived its removed directory."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n", "tool.sh": "echo\n"})
    (repo / "sub").mkdir()
    (repo / "sub" / "b.txt").write_text("b\n")
    (repo / "link").symlink_to("a.txt")
    (repo / "tool.sh").chmod(0o755)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "more")
    ran = tmp_path / "ran.log"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "post-checkout").write_text(f"#!/bin/sh\necho post-checkout >> {ran}\n")
    (hooks / "post-checkout").chmod(0o755)
    mark = f"\"sh -c 'echo $0 >> {ran}'; cat\""
    with open(repo / ".git" / "config", "a") as config:
        config.write(f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = {mark}\n")
    for _ in range(2):
        wt = worktrees.add(str(repo), "plain")
        path = Path(wt["path"])
        assert (path / "sub" / "b.txt").read_text() == "b\n"
        assert (path / "link").is_symlink() and os.readlink(path / "link") == "a.txt"
        assert os.access(path / "tool.sh", os.X_OK) and not os.access(path / "a.txt", os.X_OK)
        assert git(path, "-c", "core.fsmonitor=false", "status", "--porcelain") == ""
        assert git(path, "branch", "--show-current").strip() == "worktree-plain"
        subprocess.run(["rm", "-rf", wt["path"]], check=True)
    assert not ran.exists(), ran.read_text()


def test_a_smudge_filter_of_the_repository_never_runs_at_a_new_worktree(
    repo: Path, tmp_path: Path
) -> None:
    """Two files Claude can write name a command ``git worktree add`` would run on every file
    it checks out: a filter driver named ``x=y`` (no ``-c`` can unset it) in ``.git/config``
    and ``* filter=x=y`` in ``info/attributes``. The worktree is refused instead (its files
    would be written unconverted), and nothing of it is left."""
    ran = tmp_path / "ran.log"
    mark = f"\"sh -c 'echo $0 >> {ran}'; cat\""
    with open(repo / ".git" / "config", "a") as config:
        config.write(f'[filter "x=y"]\n\tsmudge = {mark}\n\tprocess = {mark}\n')
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=x=y\n")
    with pytest.raises(worktrees.WorktreeError, match="make this worktree at the terminal") as no:
        worktrees.add(str(repo), "filtered")
    where = repo / ".claude" / "worktrees" / "filtered"
    head = git(repo, "rev-parse", "HEAD").strip()
    assert f"`git worktree add -b worktree-filtered -- {where} {head}`" in str(no.value)
    assert not ran.exists(), ran.read_text()
    assert not (repo / ".claude" / "worktrees" / "filtered").exists()
    assert git(repo, "branch", "--list", "worktree-filtered") == ""
    (repo / ".git" / "info" / "attributes").unlink()  # a tree's own .gitattributes alike
    (repo / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    (repo / "data.bin").write_text("pointer\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "lfs")
    with pytest.raises(worktrees.WorktreeError, match=r"1 file\(s\) of the project \(`data.bin`"):
        worktrees.add(str(repo), "filtered")
