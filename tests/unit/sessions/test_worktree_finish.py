"""Merging a worktree thread's branch with real git: what a plan shows, what refuses a merge
(and leaves everything as it was), and that a hostile repository's commands never run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bridge.sessions import worktree_finish, worktrees
from bridge.sessions.worktree_plan import CONFLICT, NOTHING, REFUSED, UNCOMMITTED
from bridge_testkit.gitrepo import git, make_repo, signed_looking_commit

THREAD = "1323802873070354440"
APP = "one\ntwo\nthree\nfour\nfive\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = make_repo(tmp_path / "repo", {"app.py": APP, ".gitignore": "*.log\n"})
    git(path, "config", "user.name", "Owner")
    git(path, "config", "user.email", "owner@example.invalid")
    return path


@pytest.fixture
def scratch(tmp_path: Path) -> str:
    path = tmp_path / "scratch"
    path.mkdir(mode=0o700)
    return str(path)


def thread_worktree(repo: Path) -> tuple[dict, Path]:
    worktree = worktrees.add(str(repo), f"feature-{THREAD}")
    return worktree, Path(worktree["path"])


# The test's own git in a hostile repository: none of its commands (which would count).
QUIET = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgSign=false",
)


def commit(path: Path, files: dict[str, str], message: str) -> str:
    for name, content in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(content)
    git(path, *QUIET, "add", *files)
    git(path, *QUIET, "commit", "-qm", message)
    return git(path, *QUIET, "rev-parse", "HEAD").strip()


def state(repo: Path) -> tuple[str, str, str]:
    """The base branch's tip, what the checkout shows for app.py and git's status of it."""
    return (
        git(repo, *QUIET, "rev-parse", "main").strip(),
        (repo / "app.py").read_text(),
        git(repo, *QUIET, "status", "--porcelain", "--untracked-files=no"),
    )


def test_a_branch_the_base_has_not_moved_from_fast_forwards(repo: Path, scratch: str) -> None:
    worktree, work = thread_worktree(repo)
    tip = commit(work, {"feature.py": "x = 1\n", "app.py": APP.replace("five", "FIVE")}, "feature")
    plan = worktree_finish.plan_merge(worktree, scratch)
    assert plan.ok, plan.problems
    assert (plan.base, plan.fast_forward, plan.commit_count) == ("main", True, 1)
    assert plan.commits[0].endswith(" feature")
    assert {f.path: (f.added, f.removed) for f in plan.files} == {
        "app.py": (1, 1),
        "feature.py": (1, 0),
    }
    result = worktree_finish.merge(plan, scratch, "Merge the thread")
    assert (result.commit, result.fast_forward) == (tip, True)
    assert state(repo) == (tip, APP.replace("five", "FIVE"), "")
    assert (repo / "feature.py").read_text() == "x = 1\n"
    assert os.listdir(scratch) == []  # the sealed git dir is gone


def test_diverged_branches_get_a_merge_commit_by_the_repositorys_identity(
    repo: Path, scratch: str
) -> None:
    worktree, work = thread_worktree(repo)
    theirs = commit(work, {"app.py": APP.replace("five", "FIVE")}, "thread edits the end")
    ours = commit(repo, {"app.py": APP.replace("one", "ONE")}, "main edits the start")
    plan = worktree_finish.plan_merge(worktree, scratch)
    assert plan.ok and not plan.fast_forward, plan.problems
    assert plan.files[0].path == "app.py" and (plan.files[0].added, plan.files[0].removed) == (1, 1)
    result = worktree_finish.merge(plan, scratch, "Merge branch 'worktree-feature'")
    assert git(repo, "log", "-1", "--format=%P").split() == [ours, theirs]
    assert git(repo, "log", "-1", "--format=%an <%ae> %s").strip() == (
        "Owner <owner@example.invalid> Merge branch 'worktree-feature'"
    )
    assert state(repo) == (result.commit, APP.replace("one", "ONE").replace("five", "FIVE"), "")


def test_a_conflict_is_refused_and_nothing_changes(repo: Path, scratch: str) -> None:
    worktree, work = thread_worktree(repo)
    commit(work, {"app.py": APP.replace("two", "THREAD")}, "thread")
    commit(repo, {"app.py": APP.replace("two", "MAIN")}, "main")
    before = state(repo)
    plan = worktree_finish.plan_merge(worktree, scratch)
    conflict = plan.problem(CONFLICT)
    assert conflict is not None and conflict.paths == ["app.py"]
    with pytest.raises(worktree_finish.MergeFailed):
        worktree_finish.merge(plan, scratch, "no")
    assert state(repo) == before
    assert "<<<<<<<" not in (repo / "app.py").read_text()


def test_uncommitted_work_is_named_and_an_empty_branch_has_nothing_to_merge(
    repo: Path, scratch: str
) -> None:
    worktree, work = thread_worktree(repo)
    assert worktree_finish.plan_merge(worktree, scratch).problem(NOTHING) is not None
    (work / "notes.txt").write_text("thoughts\n")
    (work / "app.py").write_text("changed\n")
    (work / "debug.log").write_text("ignored: not work to commit\n")
    loose = worktree_finish.plan_merge(worktree, scratch).problem(UNCOMMITTED)
    assert loose is not None and loose.paths == [" M app.py", "?? notes.txt"]


def test_a_dirty_checkout_a_file_in_the_way_and_a_filtered_file_are_refused(
    repo: Path, scratch: str
) -> None:
    worktree, work = thread_worktree(repo)
    commit(work, {"new.txt": "from the thread\n"}, "adds new.txt")
    (repo / "app.py").write_text("edited in the project, not committed\n")
    plan = worktree_finish.plan_merge(worktree, scratch)
    assert [p.paths for p in plan.problems if p.kind == REFUSED] == [[" M app.py"]]
    git(repo, "checkout", "--", "app.py")
    (repo / "new.txt").write_text("the project's own, untracked\n")
    plan = worktree_finish.plan_merge(worktree, scratch)
    assert [p.paths for p in plan.problems if p.kind == REFUSED] == [["new.txt"]]
    (repo / "new.txt").unlink()
    assert worktree_finish.plan_merge(worktree, scratch).ok
    # Git LFS (or any filter): the bridge would write the pointer, not the file.
    commit(work, {".gitattributes": "*.bin filter=lfs\n", "model.bin": "pointer\n"}, "lfs")
    plan = worktree_finish.plan_merge(worktree, scratch)
    assert [p.paths for p in plan.problems] == [["model.bin"]]
    assert state(repo)[0] == git(repo, "rev-parse", "HEAD").strip()
    assert not (repo / "new.txt").exists()


# --- a hostile repository -----------------------------------------------------------------

DRIVERS = ("x=y", "", "Evil", "-x", "x.y")  # names no -c can neutralise, and others
HOOKS = (
    "pre-merge-commit",
    "post-merge",
    "post-checkout",
    "post-index-change",
    "reference-transaction",
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-push",
)


def hostile(repo: Path, tmp_path: Path, attributes: str) -> Path:
    """Claude can write .git/config: merge drivers (named by ``attributes`` and by
    ``merge.default``), filters, an fsmonitor, hooks, commit signing and signature checks by
    ``gpg.program`` are all commands git would run. Returns the log each of them appends to."""
    ran = tmp_path / "ran.log"
    script = tmp_path / "mark.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {ran}\ncat\n')
    script.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in HOOKS:
        (hooks / name).write_text(f"#!/bin/sh\necho hook {name} >> {ran}\n")
        (hooks / name).chmod(0o755)
    mark = lambda what: f"\"sh -c 'echo {what} >> {ran}'; cat\""  # noqa: E731
    config = [
        f"[core]\n\tfsmonitor = {mark('fsmonitor')}\n\thooksPath = {hooks}\n",
        f"[merge]\n\tdefault = Evil\n[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {script}\n",
        "[log]\n\tshowSignature = true\n",
    ]
    for i, name in enumerate(DRIVERS):
        config.append(
            f'[merge "{name}"]\n\tdriver = {mark(f"merge-{i}")}\n'
            f'[filter "{name}"]\n\tclean = {mark(f"clean-{i}")}\n'
            f"\tsmudge = {mark(f'smudge-{i}')}\n\tprocess = {mark(f'process-{i}')}\n"
            "\trequired = true\n"
        )
    with open(repo / ".git" / "config", "a") as handle:
        handle.write("".join(config))
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text(attributes)
    return ran


def test_a_hostile_repository_runs_nothing_through_a_whole_merge(
    repo: Path, scratch: str, tmp_path: Path
) -> None:
    files = {f"f{i}.txt": APP for i in range(len(DRIVERS))}
    commit(repo, files, "files each with a merge driver")
    worktree, work = thread_worktree(repo)
    attributes = "".join(f"f{i}.txt merge={name}\n" for i, name in enumerate(DRIVERS))
    ran = hostile(repo, tmp_path, attributes + "keep.txt filter=x=y\n")
    for name in files:
        (work / name).write_text(APP.replace("five", "FIVE"))
    git(work, *QUIET, "add", *files)
    theirs = signed_looking_commit(work, "thread edits the ends", *QUIET)
    ours = commit(repo, {**{n: APP.replace("one", "ONE") for n in files}, "app.py": "x\n"}, "main")
    # The same merge by plain git runs the repository's drivers: the test can fail.
    subprocess.run(
        ["git", "-C", str(repo), *QUIET, "merge-tree", "--write-tree", ours, theirs],
        capture_output=True,
        check=False,
    )
    assert "merge-" in ran.read_text()
    ran.unlink()

    plan = worktree_finish.plan_merge(worktree, scratch)
    assert plan.ok and not plan.fast_forward, plan.problems
    assert plan.commits[0].endswith("thread edits the ends")
    result = worktree_finish.merge(plan, scratch, "Merge the thread")
    merged = APP.replace("one", "ONE").replace("five", "FIVE")
    assert all((repo / name).read_text() == merged for name in files)  # git's own text merge
    assert git(repo, *QUIET, "rev-parse", "main").strip() == result.commit
    assert worktrees.inspect(worktree).clean
    worktrees.remove(worktree)
    assert not Path(worktree["path"]).exists()
    assert not ran.exists(), ran.read_text()


def test_a_merged_file_git_would_filter_is_refused_and_no_filter_runs(
    repo: Path, scratch: str, tmp_path: Path
) -> None:
    names = [f"f{i}.txt" for i in range(len(DRIVERS))]
    worktree, work = thread_worktree(repo)
    committed = "".join(f"{n} filter={d}\n" for n, d in zip(names, DRIVERS, strict=True))
    commit(
        work,
        {".gitattributes": committed, **dict.fromkeys(names, "data\n"), "table.dat": "1,2\n"},
        "filtered files",
    )
    before = state(repo)
    ran = hostile(repo, tmp_path, "*.dat filter=Evil\n")
    plan = worktree_finish.plan_merge(worktree, scratch)
    assert [p.paths for p in plan.problems] == [sorted([*names, "table.dat"])]
    assert state(repo) == before and not (repo / "table.dat").exists()
    assert not ran.exists(), ran.read_text()
    # Plain git's merge checks these files out through the repository's filters (which fail
    # it here: a `process` filter that does not speak the protocol is required).
    subprocess.run(
        ["git", "-C", str(repo), "merge", "-q", "--ff-only", worktree["branch"]],
        capture_output=True,
        check=False,
    )
    assert "process-" in ran.read_text()
