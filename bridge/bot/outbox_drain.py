"""The bot's side of the outbox: deliver what hooks could not, as soon as Discord answers.

Watches ``outbox/`` with watchfiles, drains each channel in order (channels independently:
one that fails does not hold up the others), and while Discord is unreachable retries with a
growing pause (up to a minute). Channels a hook is draining right
now (it holds the lock) are skipped and looked at again on the next round.
"""

from __future__ import annotations

import asyncio
import logging

import watchfiles

from bridge.config import BridgeConfig
from bridge.discord.delivery import send_post
from bridge.discord.outbox import Outbox
from bridge.discord.post import Post
from bridge.discord.rest import DiscordREST

log = logging.getLogger(__name__)

BOT_BUDGET = 3.0  # seconds per request: the bot retries on its own schedule instead
MAX_PAUSE = 60.0
IDLE_RECHECK = 30.0


class OutboxDrainer:
    def __init__(self, cfg: BridgeConfig, outbox: Outbox) -> None:
        self.cfg = cfg
        self.outbox = outbox
        self._clients: dict[str, DiscordREST] = {}
        self._wake = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> None:
        watcher = asyncio.create_task(self._watch(stop))
        pause = 1.0
        try:
            while not stop.is_set():
                self._wake.clear()  # before draining: a spool written meanwhile wakes us again
                try:
                    all_sent = await asyncio.to_thread(self.drain_once)
                except Exception:
                    log.exception("draining the outbox failed; trying again later")
                    all_sent = False
                pause = 1.0 if all_sent else min(MAX_PAUSE, pause * 2)
                # Also wake up now and then without an event, in case the watcher missed one.
                timeout = IDLE_RECHECK if all_sent else pause
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout)
                except TimeoutError:
                    pass
        finally:
            watcher.cancel()
            for client in self._clients.values():
                client.close()

    async def _watch(self, stop: asyncio.Event) -> None:
        async for _changes in watchfiles.awatch(self.outbox.root, stop_event=stop, debounce=50):
            self._wake.set()

    def drain_once(self) -> bool:
        """One pass over every channel; True when nothing is left waiting."""
        all_sent = True
        for channel in self.outbox.channels():
            try:  # one channel's trouble must not keep the others waiting
                with self.outbox.locked(channel, wait=False) as acquired:
                    if not acquired or not self.outbox.drain(channel, self._send):
                        all_sent = False
            except Exception:
                log.exception("draining the outbox of #%s failed; trying again later", channel)
                all_sent = False
        return all_sent

    def _send(self, entry: dict, post: Post) -> None:
        send_post(self._client_for(entry), entry["channel_id"], post)
        log.info("delivered a queued message to #%s", entry["channel_id"])

    def _client_for(self, entry: dict) -> DiscordREST:
        server = next((s for s in self.cfg.servers if s.name == entry.get("server")), None)
        if server is None:
            project = self.cfg.project_for_channel(entry["channel_id"])
            server = project.server if project else self.cfg.servers[0]
        if server.name not in self._clients:
            self._clients[server.name] = DiscordREST(server.api_base, server.token, BOT_BUDGET)
        return self._clients[server.name]
