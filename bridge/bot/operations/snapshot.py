"""What a scrape reads: the figures kept on disk and in the bots, set on the gauges.

Counters are counted where things happen (``bot/metrics.py``); the levels an operator watches
(sessions by state, the outbox, prompts waiting, usage-limit waits, today's cost) are read
here when Prometheus asks, the file reads in a worker thread (the loop carries every message
and click), the bots' own figures on the loop. The hooks' figures (``state/hook_figures.py``)
are taken in at the same time.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bridge.bot import metrics
from bridge.discord.outbox import Outbox
from bridge.state import away, decisions, hook_figures, runtime, usage_totals

TMUX_TIMEOUT = 5.0  # seconds a scrape waits for tmux's list of panes


class Snapshot:
    """Reads the levels into the gauges; ``outbox_oldest``: the last age read (for /health)."""

    def __init__(self, bots: Sequence[Any], rt: runtime.Runtime) -> None:
        self.bots = bots
        self.runtime = rt
        self.figures = hook_figures.FigureReader(rt.hook_figures)
        self.outbox_oldest = 0.0
        self.tmux_ok = True
        self._lock = asyncio.Lock()  # one read at a time: the figures file has one reader

    def start(self) -> None:
        self.figures.start()  # from now on the hooks append their figures

    def stop(self) -> None:
        self.figures.stop()

    async def refresh(self) -> None:
        async with self._lock:
            await self._refresh()

    async def _refresh(self) -> None:
        files = asyncio.to_thread(self._read_files)
        panes = [self._panes(bot) for bot in self.bots]
        _, *listed = await asyncio.gather(files, *panes)
        self.tmux_ok = all(found is not None for found in listed)
        waiting = {str(p.channel_id) for p in self._open_prompts}
        metrics.SESSIONS.clear()
        for bot, bot_panes in zip(self.bots, listed, strict=True):
            self._count_sessions(bot, bot_panes, waiting)
        metrics.UP.set(1 if all(bot.is_ready() and not bot.is_closed() for bot in self.bots) else 0)

    def _read_files(self) -> None:
        now = time.time()
        outbox = Outbox(self.runtime.outbox)
        ages = [now - _ctime(paths[0]) for c in outbox.channels() if (paths := outbox.pending(c))]
        depth = sum(len(outbox.pending(c)) for c in outbox.channels())
        metrics.OUTBOX_DEPTH.set(depth)
        self.outbox_oldest = max(ages, default=0.0)
        metrics.OUTBOX_OLDEST.set(self.outbox_oldest)
        self._open_prompts = decisions.open_prompts(self.runtime)
        metrics.PROMPTS_WAITING.set(len(self._open_prompts))
        oldest = min((p.created for p in self._open_prompts), default=now)
        metrics.PROMPTS_OLDEST.set(max(0.0, now - oldest))
        limits = away.all_of(self.runtime, "limit").values()
        metrics.LIMIT_WAITS.set(sum(1 for record in limits if record.get("state") == "waiting"))
        metrics.COST_TODAY.set(usage_totals.total(self.runtime)[0])
        for kind, name, value in self.figures.read():
            if kind == "hook":
                metrics.HOOK_DURATION.labels(name).observe(value)
            else:
                metrics.HOOK_POSTS.labels(name).inc(value)

    _open_prompts: list[decisions.Request] = []  # noqa: RUF012 - replaced whole, never changed

    async def _panes(self, bot: Any) -> list[tuple[str, str, bool]] | None:
        """The bot's panes as ``(project, key, dead)``; None when tmux did not answer."""
        try:
            return await asyncio.wait_for(asyncio.to_thread(_sessions, bot), TMUX_TIMEOUT)
        except Exception:
            return None  # /health says tmux did not answer

    def _count_sessions(
        self, bot: Any, panes: list[tuple[str, str, bool]] | None, waiting: set[str]
    ) -> None:
        """Each live pane by state, and each project with none as ``stopped``."""
        running = {key for key, _turn, _seen in bot.progress.running_turns()}
        states: Counter[tuple[str, str]] = Counter()
        for project, key, dead in panes or []:
            state = (
                "dead"
                if dead
                else "waiting"
                if key in waiting
                else "working"
                if key in running
                else "idle"
            )
            states[(project, state)] += 1
        live = {project for project, _state in states}
        for project in bot.server.projects:
            if project.name not in live:
                states[(project.name, "stopped")] += 1
        for (project, state), count in states.items():
            metrics.SESSIONS.labels(project, state).set(count)


def _sessions(bot: Any) -> list[tuple[str, str, bool]]:
    found = []
    for pane in bot.sessions.tmux.panes():
        target = bot.sessions.target_for_key(str(pane.channel_id))
        if target is not None:
            found.append((target.project.name, target.key, pane.dead))
    return found


def _ctime(path: str) -> float:
    """When the entry was put in place (its ctime: the kernel's, no process sets it)."""
    try:
        return os.stat(path).st_ctime
    except OSError:
        return time.time()  # posted meanwhile
