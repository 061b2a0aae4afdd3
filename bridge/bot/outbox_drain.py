"""The bot's side of the outbox: post what hooks handed over or could not deliver.

Hooks spool to ``outbox/`` and wake the bot through ``bot.sock`` (:class:`WakeSocket`); the
outbox is also watched with watchfiles, for messages spooled while Discord was down. Each
channel is drained in order (channels independently: one that fails does not hold up the
others), through the bot's own discord.py session once it is logged in (one warm connection,
one rate-limit state), and while Discord is unreachable with a growing pause (up to a minute).
Channels a hook is draining right now (it holds the lock) are looked at again next round.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import discord
import watchfiles

from bridge.bot.courier import WakeSocket, send_post_async
from bridge.config import BridgeConfig, Server
from bridge.discord import handoff
from bridge.discord.delivery import send_post
from bridge.discord.outbox import Outbox
from bridge.discord.post import Post
from bridge.discord.rest import DiscordREST
from bridge.state import runtime

log = logging.getLogger(__name__)

BOT_BUDGET = 3.0  # seconds per request: the bot retries on its own schedule instead
WARM_TIMEOUT = 30.0  # seconds for a post on the warm session (discord.py waits out 429s itself)
MAX_PAUSE = 60.0
IDLE_RECHECK = 30.0


WarmHTTP = Callable[[str], "discord.http.HTTPClient | None"]  # server name → logged-in client


class OutboxDrainer:
    def __init__(
        self, cfg: BridgeConfig, rt: runtime.Runtime, warm_http: WarmHTTP | None = None
    ) -> None:
        self.cfg = cfg
        self.runtime = rt
        self.outbox = Outbox(rt.outbox)
        self.warm_http = warm_http or (lambda _server: None)
        self._clients: dict[str, DiscordREST] = {}
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, stop: asyncio.Event) -> None:
        self._loop = asyncio.get_running_loop()
        wake = WakeSocket(self.runtime, lambda _channel: self._wake.set())
        await wake.open()
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
            wake.close()
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
        """Post one entry (from the drain's worker thread): on the bot's warm discord.py
        session when it is logged in, else with the blocking REST client."""
        server = self._server_for(entry)
        channel = entry["channel_id"]
        http = self.warm_http(server.name)
        if http is not None and self._loop is not None:
            future = asyncio.run_coroutine_threadsafe(
                send_post_async(http, channel, post), self._loop
            )
            message = future.result(timeout=WARM_TIMEOUT)
        else:
            message = send_post(self._client_for(server), channel, post)
        if entry.get("receipt"):
            handoff.write_receipt(self.runtime, post.payload.get("nonce"), message)
        log.info("delivered a queued message to #%s", channel)

    def _server_for(self, entry: dict) -> Server:
        server = next((s for s in self.cfg.servers if s.name == entry.get("server")), None)
        if server is None:
            project = self.cfg.project_for_channel(entry["channel_id"])
            server = project.server if project else self.cfg.servers[0]
        return server

    def _client_for(self, server: Server) -> DiscordREST:
        if server.name not in self._clients:
            self._clients[server.name] = DiscordREST(server.api_base, server.token, BOT_BUDGET)
        return self._clients[server.name]
