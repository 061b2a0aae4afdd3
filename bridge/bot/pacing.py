"""Keep the bot under Discord's global rate limit instead of running into it.

Discord allows a bot 50 requests per second across every route (interaction responses not
counted) and answers the next one with a global 429, after which discord.py stops *every*
request of the bot for the ``retry_after`` it is told. A burst of replies from twenty sessions
would hit that each second. :class:`GlobalPacer` spaces the bot's requests ahead of time
instead: a token bucket whose burst plus rate stays under 50 in any second, shared by the
outbox drain, reactions, edits and the panel, since they all go through one ``HTTPClient``.
"""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

from discord.http import HTTPClient, Route

RATE = 40.0  # requests per second, sustained
BURST = 10  # requests sent at once after a quiet second: BURST + RATE ≤ 50 per second
UNCOUNTED = ("/interactions/", "/webhooks/")  # interaction responses and follow-ups


class GlobalPacer:
    """A token bucket (as GCRA: one timestamp, no task): ``await pacer.wait()`` before a request."""

    def __init__(self, rate: float = RATE, burst: int = BURST) -> None:
        self.interval = 1.0 / rate
        self.tolerance = (burst - 1) * self.interval
        self._due = 0.0  # when the bucket would be empty again at the sustained rate

    def delay(self, now: float) -> float:
        """Reserve the next slot; seconds to wait for it (0 within the burst)."""
        due = max(self._due, now)
        self._due = due + self.interval
        wait = due - self.tolerance - now
        return wait if wait > 1e-6 else 0.0  # not a rounding error's sleep

    async def wait(self) -> None:
        delay = self.delay(time.monotonic())
        if delay > 0:
            await asyncio.sleep(delay)


def pace_global_limit(http: HTTPClient, pacer: GlobalPacer | None = None) -> GlobalPacer:
    """Route every request of ``http`` that counts against the global limit through a pacer."""
    pacer = pacer or GlobalPacer()
    request = http.request

    @functools.wraps(request)
    async def paced(route: Route, **kwargs: Any) -> Any:
        if not route.path.startswith(UNCOUNTED):
            await pacer.wait()
        return await request(route, **kwargs)

    http.request = paced  # type: ignore[method-assign]  # discord.py has no hook before a request
    return pacer
