"""The bot's side of the outbox: post what hooks handed over or could not deliver.

Hooks spool to ``outbox/`` and wake the bot through ``bot.sock`` (:class:`WakeSocket`); the
outbox is also watched with watchfiles, for messages spooled while Discord was down. Each
channel is drained in order (channels independently: one that fails does not hold up the
others), through the bot's own discord.py session once it is logged in (one warm connection,
one rate-limit state); a channel Discord refuses, or a hook is draining right now (it holds
the lock), is tried again after a pause of its own that grows up to a minute.

The drain runs on the event loop: :meth:`Outbox.drain_pass` decides (in order, exactly once,
what to set aside), this module only posts. The loop does the small reads (an entry is a few
KiB) and the lock (``flock`` without waiting); what can be large or slow goes to a thread: a
post's staged files, a prompt's receipt (written durably), and posting with the blocking REST
client while the bot is not logged in yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable

import discord
import watchfiles

from bridge.bot import courier, metrics
from bridge.bot.courier import WakeSocket
from bridge.bot.delivery.reply_footer import FooterEdits
from bridge.bot.delivery.stop_events import StopEvents
from bridge.bot.voice.replies import VoiceReplies
from bridge.config import BridgeConfig, Server
from bridge.discord import handoff
from bridge.discord.outbox import DrainPass, Outbox
from bridge.discord.post import DeliveryError, Post
from bridge.discord.rest import DiscordREST
from bridge.handlers.reply_footer import read_pending
from bridge.state import runtime

log = logging.getLogger(__name__)

BOT_BUDGET = 3.0  # seconds per request: the bot retries on its own schedule instead
DRAIN_SLICE = 30.0  # seconds one worker drains a channel before it lets the loop look again
WARM_TIMEOUT = 30.0  # seconds for a post on the warm session (discord.py waits out 429s itself)
MAX_PAUSE = 60.0
IDLE_RECHECK = 30.0


WarmHTTP = Callable[[str], "discord.http.HTTPClient | None"]  # server name → logged-in client


class OutboxDrainer:
    def __init__(
        self,
        cfg: BridgeConfig,
        rt: runtime.Runtime,
        warm_http: WarmHTTP | None = None,
        voice_replies: VoiceReplies | None = None,
    ) -> None:
        self.cfg = cfg
        self.runtime = rt
        self.outbox = Outbox(rt.outbox)
        self.warm_http = warm_http or (lambda _server: None)
        self._clients: dict[str, DiscordREST] = {}
        self._wake = asyncio.Event()
        self._active: dict[str, asyncio.Task] = {}  # channel → its draining worker
        self._again: set[str] = set()
        self._stopping = False
        self._stop = asyncio.Event()
        self.footers = FooterEdits(rt)  # replies whose footer comes in once posted
        self.voice_replies = voice_replies  # replies also spoken (voice.replies)

    async def run(self, stop: asyncio.Event) -> None:
        self._stop = stop
        stops = StopEvents(self.runtime)  # a Stop hook's whole event, run here
        # a hook handed a channel's messages over, or a Stop hook its event
        wake = WakeSocket(self.runtime, self.kick, stops.handed)
        if await wake.open():
            await asyncio.to_thread(stops.recover)
        watcher = asyncio.create_task(self._watch(stop))
        try:
            while not stop.is_set():
                self._wake.clear()  # before looking: a spool written meanwhile wakes us again
                try:
                    for channel in await asyncio.to_thread(self.outbox.channels):
                        self.kick(channel)
                except Exception:
                    log.exception("listing the outbox failed; trying again later")
                # Also look now and then without an event, in case the watcher missed one.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), IDLE_RECHECK)
        finally:
            self._stopping = True
            wake.close()
            watcher.cancel()
            self.footers.close()
            await asyncio.gather(*self._active.values(), return_exceptions=True)
            for client in self._clients.values():
                client.close()

    async def _watch(self, stop: asyncio.Event) -> None:
        async for _changes in watchfiles.awatch(self.outbox.root, stop_event=stop, debounce=50):
            self._wake.set()

    def kick(self, channel: str) -> None:
        """Drain ``channel`` now, in a worker of its own: one channel waiting out a rate
        limit or an outage never holds up the hand-offs of the others."""
        if channel in self._active:
            self._again.add(channel)  # a hook added entries while it drains: look once more
            return
        self._active[channel] = asyncio.create_task(self._drain_channel(channel))

    async def _drain_channel(self, channel: str) -> None:
        """Drain one channel until it is empty, pausing after a failure (doubling, up to a
        minute) without holding up any other channel."""
        pause = 1.0
        try:
            while not (self._stopping or self._stop.is_set()):
                self._again.discard(channel)
                if not await self.drain_channel(channel):
                    with contextlib.suppress(TimeoutError):  # a stop ends the pause
                        await asyncio.wait_for(self._stop.wait(), pause)
                    pause = min(MAX_PAUSE, pause * 2)
                    continue
                pause = 1.0
                if channel not in self._again:
                    return
        finally:
            self._active.pop(channel, None)

    async def drain_channel(self, channel: str) -> bool:
        """Post the channel's entries in order; True when none is left. A channel a hook is
        draining right now (it holds the lock) is left to it."""
        try:  # one channel's trouble must not keep the others waiting
            with self.outbox.locked(channel, wait=False) as acquired:
                if not acquired:
                    return False  # a hook drains it right now: look again after a pause
                until = time.monotonic() + DRAIN_SLICE  # a pass ends then, resumed after a pause
                with self.outbox.drain_pass(channel, until) as steps:
                    return await self._post_each(steps)
        except Exception:
            log.exception("draining the outbox of #%s failed; trying again later", channel)
            return False

    async def _post_each(self, steps: DrainPass) -> bool:
        """Drive the outbox's drain: post each entry it gives, tell it what came of it."""
        for path, entry in steps:
            if self._stop.is_set():
                return False  # between two posts: the rest waits for the next bot
            steps.tell(await self._post(path, entry))
        return steps.all_out

    async def _post(self, path: str, entry: dict) -> Exception | None:
        """Post one entry; None when Discord took it, else what stopped it."""
        try:
            if entry["files"]:  # up to 64 MiB each: not on the loop
                post = await asyncio.to_thread(self.outbox.post_of, path, entry)
            else:
                post = self.outbox.post_of(path, entry)
        except (OSError, ValueError) as err:
            return err
        try:
            await self._send(entry, post)
        except DeliveryError as err:
            return err
        return None

    async def _send(self, entry: dict, post: Post) -> None:
        """Post one entry: on the bot's warm discord.py session when it is logged in, else
        with the blocking REST client (in a thread)."""
        server = self._server_for(entry)
        channel = entry["channel_id"]
        http = self.warm_http(server.name)
        if http is not None:
            message = await asyncio.wait_for(courier.send_post(http, channel, post), WARM_TIMEOUT)
        else:
            message = await asyncio.to_thread(self._send_blocking, server, channel, post)
        spec = read_pending(entry.get("footer"))
        if spec is not None:  # a reply posted before its footer was known: bring it in
            allowed = entry["payload"].get("allowed_mentions")
            edit = functools.partial(self._edit, server, channel, http)
            self.footers.bring_in(spec, message, allowed, edit)
        speech = entry.get("speech")
        if speech and isinstance(speech, str) and self.voice_replies is not None:
            self.voice_replies.after_reply(http, channel, speech, message)  # in the background
        if entry.get("receipt"):
            try:  # the post is made: a lost receipt only makes the hook repost (same nonce)
                nonce = post.payload.get("nonce")
                await asyncio.to_thread(handoff.write_receipt, self.runtime, nonce, message)
            except OSError as err:
                log.warning("could not record the receipt of a prompt: %s", err)
        metrics.OUTBOX_POSTED.inc()
        log.info("delivered a queued message to #%s", channel)

    async def _edit(
        self,
        server: Server,
        channel: str,
        http: discord.http.HTTPClient | None,
        message_id: str,
        payload: dict,
    ) -> dict:
        """Edit a message as :meth:`_send` posted it: on the warm session, or blocking."""
        if http is not None:
            edit = courier.edit_message(http, channel, message_id, payload)
            return await asyncio.wait_for(edit, WARM_TIMEOUT)
        client = self._client_for(server)
        return await asyncio.to_thread(client.edit_message, channel, message_id, payload)

    def _send_blocking(self, server: Server, channel: str, post: Post) -> dict:
        return self._client_for(server).send_post(channel, post)

    def _server_for(self, entry: dict) -> Server:
        """The server whose token posts the entry: the one mapping its channel (names are
        not unique), else the one it names (a thread's entry), else the first."""
        project = self.cfg.project_for_channel(entry["channel_id"])
        if project is not None:
            return project.server
        named = (s for s in self.cfg.servers if s.name == entry.get("server"))
        return next(named, self.cfg.servers[0])

    def _client_for(self, server: Server) -> DiscordREST:
        if server.name not in self._clients:
            self._clients[server.name] = DiscordREST(server.api_base, server.token, BOT_BUDGET)
        return self._clients[server.name]
