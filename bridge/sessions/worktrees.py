"""Git worktrees for threads with ``isolation: "worktree"``: create, inspect, remove.

The bridge creates the worktree itself (``git worktree add``) at
``<repo>/.claude/worktrees/<name>`` on branch ``worktree-<name>`` — the place Claude Code's own
``-w`` uses — with a name derived from the thread, so it always knows the path and the base
commit without polling. Removal never loses work silently: :func:`inspect` lists uncommitted
changes, ignored files (``.env``, local databases: ``git worktree remove`` deletes them without
a word) and commits that no other branch holds, and only a clean worktree is removed without
``force``. Every git call is an argv list (no shell); names are reduced to ``[a-z0-9-]``.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field

WORKTREES_DIR = os.path.join(".claude", "worktrees")
BRANCH_PREFIX = "worktree-"
SLUG_MAX = 32
GIT_TIMEOUT = 30


class WorktreeError(RuntimeError):
    """git refused, or the directory is not in a git repository."""


@dataclass
class Loss:
    """What removing a worktree would lose."""

    exists: bool = True
    uncommitted: list[str] = field(default_factory=list)  # `git status --porcelain` lines
    unmerged: list[str] = field(default_factory=list)  # `<sha> <subject>` of commits
    ignored: list[str] = field(default_factory=list)  # paths git ignores (a directory ends in /)

    @property
    def clean(self) -> bool:
        return not self.uncommitted and not self.unmerged and not self.ignored


def worktree_name(thread_name: str, thread_id: str) -> str:
    """``<slug of the name>-<thread id>``: readable, unique, safe as a path and branch name."""
    if not (thread_id.isascii() and thread_id.isdigit()):
        raise ValueError(f"not a thread id: {thread_id!r}")
    slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in thread_name.lower())
    slug = "-".join(part for part in slug.split("-") if part)[:SLUG_MAX].strip("-")
    return f"{slug}-{thread_id}" if slug else f"thread-{thread_id}"


def repo_root(path: str) -> str | None:
    """The top directory of the git repository holding ``path``, or None."""
    try:
        out = _git(path, "rev-parse", "--show-toplevel")
    except WorktreeError:
        return None
    return out.strip() or None


def add(project_path: str, name: str) -> dict:
    """Create (or reuse) the worktree ``name`` of the repository at ``project_path``.

    Returns what the bridge records: ``{"name", "path", "branch", "base", "repo"}``; ``base``
    is the commit the branch started from.
    """
    if os.sep in name or name in ("", ".", "..") or not name.isascii():
        raise ValueError(f"unsafe worktree name: {name!r}")
    repo = repo_root(project_path)
    if repo is None:
        raise WorktreeError(
            f"{project_path} is not in a git repository; worktree isolation needs one"
        )
    path = os.path.join(repo, WORKTREES_DIR, name)
    branch = BRANCH_PREFIX + name
    if os.path.isdir(path) and _is_worktree(repo, path):
        base = _git(repo, "merge-base", "HEAD", branch).strip()
    elif _git(repo, "branch", "--list", branch).strip():  # its directory was removed
        _git(repo, "worktree", "prune")
        base = _git(repo, "merge-base", "HEAD", branch).strip()
        _git(repo, "worktree", "add", "--", path, branch)
    else:
        base = _git(repo, "rev-parse", "HEAD").strip()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _git(repo, "worktree", "add", "-b", branch, "--", path, base)
    return {"name": name, "path": path, "branch": branch, "base": base, "repo": repo}


def inspect(worktree: dict) -> Loss:
    """Uncommitted changes (untracked files included), ignored files and commits reachable
    from the worktree but from no other local branch nor its base: what removing it would
    lose."""
    path = worktree["path"]
    if not os.path.isdir(path):
        return Loss(exists=False)
    # --ignored=matching: an ignored directory (node_modules/) is one line, not its contents.
    status = _git(path, "status", "--porcelain", "--untracked-files=all", "--ignored=matching")
    lines = status.splitlines()
    commits = _git(
        path, "log", "--format=%h %s", "HEAD", "--not", worktree["base"],
        f"--exclude={worktree['branch']}", "--branches",  # the pattern omits refs/heads/
    )  # fmt: skip
    return Loss(
        True,
        [line for line in lines if not line.startswith("!! ")],
        commits.splitlines(),
        [line[3:] for line in lines if line.startswith("!! ")],
    )


def remove(worktree: dict, force: bool = False) -> None:
    """Remove the worktree and its branch. Without ``force`` git refuses a dirty worktree and
    ``branch -d`` an unmerged branch, and ignored files (which git would delete) are refused
    here, so nothing is lost by accident."""
    repo = worktree["repo"]
    if os.path.isdir(worktree["path"]):
        if not force:
            ignored = _git(worktree["path"], "status", "--porcelain", "--ignored=matching")
            if any(line.startswith("!! ") for line in ignored.splitlines()):
                raise WorktreeError(f"{worktree['path']} holds ignored files; not removed")
        _git(repo, "worktree", "remove", *(["--force"] if force else []), "--", worktree["path"])
    else:
        _git(repo, "worktree", "prune")
    if _git(repo, "branch", "--list", worktree["branch"]).strip():
        _git(repo, "branch", "-D" if force else "-d", "--", worktree["branch"])


def bridge_worktrees(project_path: str) -> list[str]:
    """Registered worktrees under ``<repo>/.claude/worktrees/`` (ours and ``claude -w``'s)."""
    repo = repo_root(project_path)
    if repo is None:
        return []
    prefix = os.path.join(repo, WORKTREES_DIR) + os.sep
    out = _git(repo, "worktree", "list", "--porcelain")
    paths = [line[len("worktree ") :] for line in out.splitlines() if line.startswith("worktree ")]
    return [p for p in paths if p.startswith(prefix)]


def _is_worktree(repo: str, path: str) -> bool:
    return os.path.realpath(path) in {os.path.realpath(p) for p in bridge_worktrees(repo)}


def _git(cwd: str, *args: str) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            ["git", "-C", cwd, *args],
            capture_output=True, text=True, env=env, timeout=GIT_TIMEOUT, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as err:
        raise WorktreeError(f"git {args[0]}: {err}") from err
    if done.returncode != 0:
        raise WorktreeError(f"git {args[0]}: {done.stderr.strip() or done.returncode}")
    return done.stdout
