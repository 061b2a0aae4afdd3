"""A session's spend against its ``budget`` (``config.model.Budget``): Claude Code's own cost.

The session's spend is what Claude Code last reported to the statusLine command
(``status_cache``: ``cost.total_cost_usd`` of that Claude Code process), the day's is the sum
of every session of this bridge that day (``usage_totals``). A cap is the configured one plus
what **Continue** raised it by (``away``: ``raise-<session>``, ``raise-day-<date>``). Used by
the PreToolUse hook (stop at 100 %) and the bot (warn at 80 %, ``/usage``, the panel): ``os``,
``time`` and small bridge modules only.
"""

from __future__ import annotations

from bridge.state import away, runtime, status_cache, usage_totals

TYPE_CHECKING = False
if TYPE_CHECKING:  # no ``typing`` import on the hooks' path
    from typing import Protocol

    class Budget(Protocol):
        """The caps this module reads (``config.model.Budget`` has them; state/ does not import
        config/, a layer above it)."""

        session_usd: float | None
        day_usd: float | None


WARN_AT = 0.8  # the share of a cap that gets a warning in the channel


class Spend:
    """What a session and the day spent, and their caps (None: no cap)."""

    __slots__ = ("day", "day_cap", "day_usd", "session_cap", "session_id", "session_usd")

    def __init__(
        self, rt: runtime.Runtime, budget: Budget, session_id: object, now: float | None = None
    ) -> None:
        self.day = usage_totals.day(now)
        self.session_id = session_id if status_cache.is_safe_session_id(session_id) else None
        record = status_cache.read_status(rt, self.session_id) if self.session_id else None
        cost = (record or {}).get("cost_usd")
        number = isinstance(cost, int | float) and not isinstance(cost, bool)
        self.session_usd = (
            float(cost) if isinstance(cost, int | float) and number and cost > 0 else 0.0
        )
        self.session_cap = self.day_cap = None
        if budget.session_usd is not None:
            extra = away.raised(rt, "raise", self.session_id) if self.session_id else 0.0
            self.session_cap = budget.session_usd + extra
        self.day_usd = 0.0
        if budget.day_usd is not None:
            self.day_usd = usage_totals.total(rt, self.day)[0]
            self.day_cap = budget.day_usd + away.raised(rt, "raise-day", self.day)

    def over(self, share: float = 1.0) -> list[tuple[str, float, float]]:
        """Each cap at or past ``share`` of itself: ("session" | "day", spent, cap)."""
        found = []
        for which, spent, cap in (
            ("session", self.session_usd, self.session_cap),
            ("day", self.day_usd, self.day_cap),
        ):
            if cap is not None and spent >= cap * share:
                found.append((which, spent, cap))
        return found

    def left_text(self) -> str:
        """``session $1.20 of $5.00 left · today $8.10 of $20.00 left`` ("" without caps)."""
        parts = []
        if self.session_cap is not None:
            left = max(0.0, self.session_cap - self.session_usd)
            parts.append(f"session ${left:.2f} of ${self.session_cap:.2f} left")
        if self.day_cap is not None:
            left = max(0.0, self.day_cap - self.day_usd)
            parts.append(f"today ${left:.2f} of ${self.day_cap:.2f} left")
        return " · ".join(parts)


NAMES = {"session": "this session's budget", "day": "today's budget"}
