"""A spend budget's figures for the away messages: what is left, and the cap **Continue** sets.

Pure reckoning over ``bridge/state/budget.py``'s records, its own module so the watcher
(``bot/away/watch.py``) keeps to its messages and the panel's usage line (``bot/away/usage.py``)
reads what is left without the watcher.
"""

from __future__ import annotations

from bridge.config import Project
from bridge.state import runtime, session_record
from bridge.state.budget import Spend


def budget_left(rt: runtime.Runtime, project: Project, key: str, now: float | None = None) -> str:
    """``session $1.20 of $5.00 left · today …`` for the session of ``key`` ("" without caps)."""
    if not project.budget.any:
        return ""
    session = (session_record.read_record(rt, key) or {}).get("session_id")
    return Spend(rt, project.budget, session, now).left_text()


def raised_cap(record: dict, more: float) -> tuple[float, float]:
    """The cap **Continue** sets and what it adds: ``more`` past what was spent, not past the
    old cap, so a turn that overshot it (Claude Code reports cost after each answer, and one
    answer can cost more than the whole cap) does not leave the session over budget still,
    stopped again at its next tool call. Returns (the new cap, what it adds)."""
    cap, spent = (_dollars(record.get(k)) for k in ("cap", "spent"))
    new_cap = round(max(cap, spent) + more, 6)
    return new_cap, round(new_cap - cap, 6)


def _dollars(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0.0
    return float(value)
