"""``metrics`` in the config: an HTTP server on the bot's loop with ``/metrics`` (Prometheus'
text format, written by prometheus_client) and ``/health`` (200 or 503 and a small JSON body).

aiohttp serves it (discord.py's transport, already on the loop: no thread, no second
server). Every request only reads: a scrape's file reads go to a worker thread, Discord's
reachability is one cheap request at most every few seconds, tmux's answer is awaited with a
timeout; nothing a request sends is used for more than picking the path.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Sequence
from typing import Any

import discord
from aiohttp import web
from discord.http import Route
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bridge.bot import metrics
from bridge.bot.operations.snapshot import Snapshot
from bridge.config import BridgeConfig
from bridge.state import runtime

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 5.0  # seconds Discord has to answer the reachability probe
PROBE_KEPT = 5.0  # seconds a probe's answer stands for (monitors poll; Discord counts requests)


class OperationsEndpoint:
    """Start with :meth:`start` on the bot's loop, stop with :meth:`stop`."""

    def __init__(self, cfg: BridgeConfig, bots: Sequence[Any], rt: runtime.Runtime) -> None:
        self.settings = cfg.metrics
        self.bots = bots
        self.snapshot = Snapshot(bots, rt)
        self._runner: web.AppRunner | None = None
        self._probes: dict[str, tuple[float, bool]] = {}  # server name → (when, reachable)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/metrics", self.metrics)
        app.router.add_get("/health", self.health)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.settings.host, self.settings.port)
        await site.start()
        self.snapshot.start()
        host, port = self._runner.addresses[0][:2]
        if not is_loopback(self.settings.host):
            log.warning("metrics: listening on %s, reachable from the network", host)
        log.info("metrics: serving http://%s:%d/metrics and /health", host, port)

    async def stop(self) -> None:
        self.snapshot.stop()
        if self._runner is not None:
            await self._runner.cleanup()

    async def metrics(self, _request: web.Request) -> web.Response:
        await self.snapshot.refresh()
        body = generate_latest(metrics.REGISTRY)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def health(self, _request: web.Request) -> web.Response:
        """``ready`` (every bot logged in), ``discord`` (its API answers), ``tmux`` (tmux
        answers), ``outbox`` (no entry older than ``metrics.outboxStuckSeconds``)."""
        await self.snapshot.refresh()
        reachable = await asyncio.gather(*(self._reachable(bot) for bot in self.bots))
        checks = {
            "ready": all(bot.is_ready() and not bot.is_closed() for bot in self.bots),
            "discord": all(reachable),
            "tmux": self.snapshot.tmux_ok,
            "outbox": self.snapshot.outbox_oldest < self.settings.outbox_stuck,
        }
        body = {
            "healthy": all(checks.values()),
            **checks,
            "outboxOldestSeconds": round(self.snapshot.outbox_oldest, 1),
        }
        return web.json_response(body, status=200 if body["healthy"] else 503)

    async def _reachable(self, bot: Any) -> bool:
        """Whether Discord's REST API answers the bot (any answer but a server error)."""
        name = bot.server.name
        when, answer = self._probes.get(name, (0.0, False))
        if time.monotonic() - when < PROBE_KEPT:
            return answer
        try:
            await asyncio.wait_for(bot.http.request(Route("GET", "/users/@me")), PROBE_TIMEOUT)
            answer = True
        except discord.HTTPException as err:
            answer = err.status < 500
        except Exception:  # no answer in time, no connection, not logged in
            answer = False
        self._probes[name] = (time.monotonic(), answer)
        return answer


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
