"""The frame both ways of finishing a worktree thread share, a merge (``worktree_finish``) and a
push (``worktree_push``): a :class:`Plan` of what it would do, made without changing anything,
with the problems that may stop it; its fingerprint, which a confirmation carries so that only
what was previewed goes ahead; the checks both make first (the branch and its worktree still
there, nothing left uncommitted); and the small git reads both need. Discord-free and blocking.

Every git call here is ``changes.git``'s (read-only, the snapshots' settings).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from bridge.sessions import worktrees
from bridge.sessions.changes import GitError, git

LOG_MAX = 50  # commits listed in a plan (the count is exact)

# What may stop a merge or a push (Problem.kind); the bot offers a way out for the first two.
UNCOMMITTED = "uncommitted"  # the thread's worktree holds work not committed
CONFLICT = "conflict"
NOTHING = "nothing"  # the other side holds every commit of the branch already
REFUSED = "refused"  # anything else: the text says why


@dataclass
class Problem:
    kind: str
    text: str
    paths: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """What finishing a thread would do; ``problems``: why it may not (none: it may)."""

    worktree: dict
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def refuse(self, kind: str, text: str, paths: list[str] | None = None) -> None:
        self.problems.append(Problem(kind, text, paths or []))

    def problem(self, kind: str) -> Problem | None:
        return next((p for p in self.problems if p.kind == kind), None)

    def digest(self, *parts: str) -> str:
        """12 hex digits naming ``parts`` (what the plan would do) and its problems: a
        subclass's ``fingerprint``."""
        named = [*parts, *(f"{p.kind}:{','.join(p.paths)}" for p in self.problems)]
        return hashlib.sha256("\n".join(named).encode()).hexdigest()[:12]


PlanT = TypeVar("PlanT", bound=Plan)


def planned(plan: PlanT, fill: Callable[[PlanT], None]) -> PlanT:
    """``plan`` as ``fill`` makes it; git failing on the way is one more reason to refuse."""
    try:
        fill(plan)
    except GitError as err:
        plan.refuse(REFUSED, f"git could not tell: {err}")
    return plan


def branch_there(plan: Plan, branch_tip: str) -> bool:
    """Whether the thread's branch (at ``branch_tip``, "" for none) and its worktree are still
    there; refused when not."""
    if not branch_tip or not os.path.isdir(plan.worktree["path"]):
        plan.refuse(REFUSED, f"the branch `{plan.worktree['branch']}` or its worktree is gone")
        return False
    return True


def refuse_uncommitted(
    plan: Plan, scratch: str, private: tuple[str, ...], deadline: float | None, by: str
) -> None:
    """Work not committed in the thread's worktree, which finishing ``by`` a merge or a push
    would leave out: refused, never left behind silently."""
    loose = worktrees.uncommitted(plan.worktree["path"], scratch, private, deadline)
    if loose:
        plan.refuse(
            UNCOMMITTED,
            f"the worktree holds {len(loose)} uncommitted change(s), which {by} would leave out",
            loose,
        )


# --- small reads ------------------------------------------------------------------------


def base_branch(path: str) -> str:
    """The branch checked out at ``path`` (``main``), or "" on a detached HEAD."""
    try:
        ref = git(path, "symbolic-ref", "-q", "HEAD").decode(errors="replace").strip()
    except GitError:
        return ""
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ""


def commits_between(root: str, old: str, new: str) -> tuple[list[str], int]:
    """``<sha> <subject>`` of the commits in ``new`` and not in ``old`` (newest first, at most
    :data:`LOG_MAX`), and how many there are. ``--no-show-signature``: a repository's
    ``log.showSignature`` would run its ``gpg.program`` on a signed commit."""
    count = int(git(root, "rev-list", "--count", new, "--not", old).decode().strip() or 0)
    out = git(
        root,
        "log",
        "--no-show-signature",
        f"--max-count={LOG_MAX}",
        "--format=%h %s",
        new,
        "--not",
        old,
    )
    return out.decode(errors="replace").splitlines(), count


def tip(root: str, ref: str) -> str:
    """The commit ``ref`` names, or "" when there is none."""
    try:
        return (
            git(root, "rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}")
            .decode()
            .strip()
        )
    except GitError:
        return ""
