"""What a merge and a push share (bridge/sessions/worktree_plan.py): git failing while a plan
is made refuses it, a gone branch or worktree refuses it, and the fingerprint a confirmation
carries changes with what the plan would do and with its problems."""

from __future__ import annotations

from pathlib import Path

from bridge.sessions import worktree_plan
from bridge.sessions.changes import GitError
from bridge.sessions.worktree_plan import NOTHING, REFUSED, Plan


def worktree(path: Path) -> dict:
    return {"branch": "feature-1", "path": str(path), "repo": str(path)}


def test_git_failing_while_planning_is_a_refusal_with_what_it_said(tmp_path: Path) -> None:
    def fill(plan: Plan) -> None:
        plan.refuse(NOTHING, "first")
        raise GitError("git rev-parse: bad object")

    plan = worktree_plan.planned(Plan(worktree(tmp_path)), fill)
    assert not plan.ok
    assert [(p.kind, p.text) for p in plan.problems] == [
        (NOTHING, "first"),
        (REFUSED, "git could not tell: git rev-parse: bad object"),
    ]


def test_a_gone_branch_or_worktree_is_refused(tmp_path: Path) -> None:
    there = Plan(worktree(tmp_path))
    assert worktree_plan.branch_there(there, "abc123") and there.ok
    for plan, branch_tip in (
        (Plan(worktree(tmp_path)), ""),
        (Plan(worktree(tmp_path / "removed")), "abc123"),
    ):
        assert not worktree_plan.branch_there(plan, branch_tip)
        assert [(p.kind, p.text) for p in plan.problems] == [
            (REFUSED, "the branch `feature-1` or its worktree is gone")
        ]


def test_the_fingerprint_names_what_the_plan_does_and_its_problems(tmp_path: Path) -> None:
    plan = Plan(worktree(tmp_path))
    first = plan.digest("main", "abc123")
    assert len(first) == 12 and int(first, 16) >= 0
    assert plan.digest("main", "abc123") == first
    assert plan.digest("main", "def456") != first
    plan.refuse(NOTHING, "nothing to merge", ["a.py"])
    assert plan.digest("main", "abc123") != first
