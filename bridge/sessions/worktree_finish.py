"""Merging a worktree thread's branch into the branch the project's checkout is on: what it
would merge and why it may not, checked first; then the merge. Discord-free and blocking.

:func:`plan_merge` looks and changes nothing but the object store (a merge's tree, as a
snapshot's, unreferenced until merged): the branch the project's checkout is on (the
*base*), the commits and files the merge brings, and every reason to refuse — uncommitted
work in the thread's worktree (never merged silently: the bot offers to ask Claude to commit
it), a conflict (``git merge-tree``), uncommitted changes to tracked files of the project's
checkout, an untracked file where the merge puts one, a merged file git would convert with a
filter or an encoding (the bridge writes files as git stores them), no identity for the
merge commit. :func:`merge` carries a plan out: the merge commit (or a fast-forward when the
base has not moved, as ``git merge`` does), the project's checkout updated, then the branch.

Every git call is one of ``changes.git`` (read-only, the snapshots' settings) or a
:class:`~bridge.sessions.sealed_git.Sealed` one (what writes: ``merge-tree``, ``commit-tree``
and ``read-tree -m -u``), so no hook, merge driver, filter, fsmonitor or signing program of
the repository runs; see ``sealed_git.py``. The checkout (``read-tree -m -u``, what ``git
merge`` does for a fast-forward) verifies first that no file it changes or adds is dirty or in
the way, and writes nothing otherwise; the branch moves last, only from the tip previewed
(``update-ref <new> <old>``), and a branch moved meanwhile puts the files back.

The plan's frame (its problems and fingerprint, the checks a push makes too, the small reads)
is ``worktree_plan``'s.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from bridge.sessions import worktrees
from bridge.sessions.changes import GitError, git, locate
from bridge.sessions.sealed_git import Sealed, converted, last_line
from bridge.sessions.tree_diff import FileChange, changed_files, tree_of
from bridge.sessions.worktree_plan import (
    CONFLICT,
    NOTHING,
    REFUSED,
    Plan,
    base_branch,
    branch_there,
    commits_between,
    planned,
    refuse_uncommitted,
    tip,
)


class MergeFailed(GitError):
    """The merge did not happen; the text says why, and that nothing changed."""


@dataclass
class MergePlan(Plan):
    """What merging the thread's branch would do, or why it may not."""

    base: str = ""  # the branch the project's checkout is on ("main")
    root: str = ""  # the project's checkout (the repository's main working tree)
    index: str = ""  # its index file
    base_tip: str = ""
    branch_tip: str = ""
    tree: str = ""  # the merged tree
    fast_forward: bool = False
    commits: list[str] = field(default_factory=list)  # "<sha> <subject>", newest first
    commit_count: int = 0
    files: list[FileChange] = field(default_factory=list)  # base → merged
    identity: dict[str, str] = field(default_factory=dict)  # GIT_AUTHOR_NAME … for the commit

    @property
    def fingerprint(self) -> str:
        """12 hex digits naming what was previewed: a confirmation carries it, and a merge
        goes ahead only if the plan made then has the same."""
        return self.digest(self.base, self.base_tip, self.branch_tip, self.tree)


@dataclass
class MergeResult:
    commit: str
    fast_forward: bool


def plan_merge(
    worktree: dict, scratch: str, private: tuple[str, ...] = (), deadline: float | None = None
) -> MergePlan:
    """What merging ``worktree``'s branch into the project's checkout would do (see the
    module's docstring). ``scratch``: a private folder; ``private``: the bridge's own dirs,
    never read into a snapshot."""
    return planned(MergePlan(worktree), lambda plan: _plan(plan, scratch, private, deadline))


def _plan(plan: MergePlan, scratch: str, private: tuple[str, ...], deadline: float | None) -> None:
    worktree = plan.worktree
    branch = worktree["branch"]
    repo = locate(worktree["repo"], deadline)
    plan.root, plan.index = repo.root, repo.index
    plan.base = base_branch(repo.root)
    if not plan.base:
        plan.refuse(
            REFUSED,
            "the project's checkout is on no branch "
            "(a detached HEAD): there is nothing to merge into",
        )
        return
    plan.base_tip = tip(repo.root, f"refs/heads/{plan.base}")
    plan.branch_tip = tip(repo.root, f"refs/heads/{branch}")
    if not branch_there(plan, plan.branch_tip):
        return
    on = base_branch(worktree["path"])
    if on != branch:
        plan.refuse(
            REFUSED, f"the thread's worktree is on `{on or 'a detached HEAD'}`, not on `{branch}`"
        )
        return
    refuse_uncommitted(plan, scratch, private, deadline, by="a merge")
    plan.commits, plan.commit_count = commits_between(repo.root, plan.base_tip, plan.branch_tip)
    if not plan.commit_count:
        plan.refuse(NOTHING, f"`{plan.base}` holds every commit of `{branch}` already")
        return
    with Sealed(repo.root, scratch) as sealed:
        _merged_tree(plan, sealed)
        if plan.problem(CONFLICT):
            return
        base_tree = tree_of(repo.root, plan.base_tip)
        plan.files = changed_files(repo.root, base_tree, plan.tree, deadline)
        statuses = _name_status(repo.root, base_tree, plan.tree)
        _check_converted(plan, sealed, [path for path, _ in statuses])
    _check_checkout(plan, statuses, scratch, private, deadline)
    if not plan.fast_forward:
        _identity(plan)


def _merged_tree(plan: MergePlan, sealed: Sealed) -> None:
    """The merged tree: the branch's own when the base has not moved (a fast-forward), else
    ``merge-tree --write-tree``'s (sealed: no merge driver runs); a conflict is a problem."""
    common = git(plan.root, "merge-base", plan.base_tip, plan.branch_tip).decode().strip()
    if common == plan.base_tip:
        plan.fast_forward = True
        plan.tree = tree_of(plan.root, plan.branch_tip)
        return
    done = sealed.run(
        "merge-tree",
        "--write-tree",
        "-z",
        "--name-only",
        "--no-messages",
        plan.base_tip,
        plan.branch_tip,
    )
    if done.returncode not in (0, 1):
        raise GitError(f"git merge-tree: {last_line(done.stderr) or done.returncode}")
    fields = done.stdout.decode(errors="replace").split("\0")
    plan.tree = fields[0].strip()
    if done.returncode == 1:
        conflicted = sorted({f for f in fields[1:] if f})
        plan.refuse(CONFLICT, f"merging would conflict in {len(conflicted)} file(s)", conflicted)


def _name_status(root: str, old: str, new: str) -> list[tuple[str, str]]:
    """``(path, status letter)`` of each file that differs between two trees."""
    out = git(
        root,
        "diff-tree",
        "-r",
        "-z",
        "--name-status",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--end-of-options",
        old,
        new,
    )
    fields = [f for f in out.decode(errors="surrogateescape").split("\0") if f]
    return [(fields[i + 1], fields[i][:1]) for i in range(0, len(fields) - 1, 2)]


def _check_converted(plan: MergePlan, sealed: Sealed, paths: list[str]) -> None:
    """Merged files git would convert when it writes them (``sealed_git.converted``):
    refused, since the bridge writes what git stores."""
    found = converted(sealed, plan.tree, paths)
    if found:
        plan.refuse(
            REFUSED,
            f"{len(found)} merged file(s) have a `filter` "
            "or `working-tree-encoding` attribute: the bridge runs no "
            "repository's filter, so it would write them unconverted; "
            "merge these at the terminal",
            found,
        )


def _check_checkout(
    plan: MergePlan,
    statuses: list[tuple[str, str]],
    scratch: str,
    private: tuple[str, ...],
    deadline: float | None,
) -> None:
    """The project's checkout: no uncommitted change to a tracked file (untracked files may
    stay, as with ``git merge``), none where the merge puts a file, and an index git's own
    reads (a regular file)."""
    try:
        info = os.lstat(plan.index)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        plan.refuse(REFUSED, "the project's index is not a regular file")
        return
    dirty = [
        line
        for line in worktrees.uncommitted(plan.root, scratch, private, deadline)
        if not line.startswith("?? ")
    ]
    if dirty:
        plan.refuse(
            REFUSED,
            f"the project's checkout (`{plan.base}`) has "
            f"{len(dirty)} uncommitted change(s) to tracked files: "
            "commit or stash them first",
            dirty,
        )
    removed = {path for path, status in statuses if status == "D"}
    in_the_way = [
        path for path, status in statuses if status == "A" and _occupied(plan.root, path, removed)
    ]
    if in_the_way:
        plan.refuse(
            REFUSED,
            f"{len(in_the_way)} untracked file(s) in the "
            "project's checkout are where the merge puts files",
            in_the_way,
        )


def _occupied(root: str, path: str, removed: set[str]) -> bool:
    """Something not tracked stands where ``path`` would be written: the file itself, or a
    leading folder that is a file or a symlink (and not one the merge removes)."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth])
        try:
            info = os.lstat(os.path.join(root, folder))
        except FileNotFoundError:
            return False  # nothing there: git creates the folders
        if not stat.S_ISDIR(info.st_mode):
            return folder not in removed
    return os.path.lexists(os.path.join(root, path))


def _identity(plan: MergePlan) -> None:
    """Who the merge commit is by: the repository's identity as git would take it (``git
    var``, which reads values only)."""
    for role in ("AUTHOR", "COMMITTER"):
        try:
            ident = git(plan.root, "var", f"GIT_{role}_IDENT").decode(errors="replace").strip()
        except GitError:
            plan.refuse(
                REFUSED,
                "git has no identity here for the merge "
                "commit: set `user.name` and `user.email` "
                "(`git config --global …`)",
            )
            return
        name, _, rest = ident.partition(" <")
        email = rest.partition(">")[0]
        plan.identity[f"GIT_{role}_NAME"], plan.identity[f"GIT_{role}_EMAIL"] = name, email


def merge(plan: MergePlan, scratch: str, message: str) -> MergeResult:
    """Carry out a plan without problems (made just now): the merge commit (``message``) or a
    fast-forward, the project's checkout and index updated to it, then its branch moved.
    :class:`MergeFailed` when any step fails; nothing is left changed then."""
    if not plan.ok:
        raise MergeFailed("the merge has problems; nothing was changed")
    old_tree = tree_of(plan.root, plan.base_tip)
    with Sealed(plan.root, scratch) as sealed:
        if plan.fast_forward:
            commit = plan.branch_tip
        else:
            parents = ("-p", plan.base_tip, "-p", plan.branch_tip)
            made = sealed.check(
                "commit-tree", *parents, "-m", message, plan.tree, env=plan.identity
            )
            commit = made.decode().strip()
        checkout = ("read-tree", "-m", "-u", old_tree, plan.tree)
        done = sealed.run(*checkout, work_tree=plan.root, index_file=plan.index)
        if done.returncode != 0:
            raise MergeFailed(
                f"the project's checkout could not be updated, so nothing was "
                f"merged: {last_line(done.stderr)}"
            )
        try:
            git(
                plan.root,
                "update-ref",
                "-m",
                f"discord-bridge: {message.splitlines()[0]}",
                f"refs/heads/{plan.base}",
                commit,
                plan.base_tip,
            )
        except GitError as err:
            sealed.run(
                "read-tree",
                "-m",
                "-u",
                plan.tree,
                old_tree,
                work_tree=plan.root,
                index_file=plan.index,
            )
            raise MergeFailed(
                f"`{plan.base}` moved meanwhile, so nothing was merged ({err})"
            ) from err
    return MergeResult(commit, plan.fast_forward)
