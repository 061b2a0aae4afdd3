"""Messages sent while the bot was away, read back from each channel's history when it is back.

Discord replays nothing to a bot that identifies afresh (a RESUME replays by itself), so on
every fresh gateway session (READY: ``on_connect`` holds live messages back, ``on_ready``
reads) the bot reads, for each mapped channel and each session thread, the messages after the
last one it handled (``bot/turn/handled.py``), oldest first, and hands each to the relay's own path:
the owner's and ``allowedUserIds``' only, attachments and voice messages included, a message
edited meanwhile as it reads now, one deleted meanwhile not at all (it is not in the history).

A message younger than ``catchUpWindowMinutes`` (10 by default) is typed, after a short note
that it was sent while the bridge was offline. An older one is never typed unasked: it is
answered with what it was and when, and **▶ Send now** / **✖ Drop**.

Exactly once: message ids only grow, so the record's ``last`` id says what is done, and a
history page that repeats an id or overlaps the one before types nothing twice. A bot killed
after typing but before recording it left the message as ``typing``: it counts as done if the
bot's ✅ is on it, if it waits in the queue or behind a screen, or if Claude Code's transcript
has that prompt (or took it into its own queue) since it was typed, looked for until
``PROMPT_WRITE_GRACE`` after the typing.

The history is read with discord.py's HTTP client (``http.logs_from``: its rate-limit buckets
and the global pace), page by page (100 messages after the newest id so far), rather than with
``channel.history``: the raw pages carry each message's ``timestamp`` (its age here; discord.py
reads ``created_at`` from the id alone), and the paging keeps going only past ids it has not
seen, whatever a page holds.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import discord

from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem, target_of
from bridge.bot.prompt_text import DELIVERED
from bridge.bot.turn.handled import HandledMessages
from bridge.bot.turn.relay import Relay
from bridge.claude import transcript
from bridge.discord import custom_ids
from bridge.sessions.targets import SessionTarget
from bridge.state import held_messages, queued_prompts, session_record
from bridge.state.handled_messages import Typing

log = logging.getLogger(__name__)

PAGE = 100  # messages per history request (Discord's most)
MAX_PAGES = 50  # per channel and catch-up: 5,000 messages is not a backlog but a mistake
QUOTE_CHARS = 300
# Seconds after a prompt was typed before its absence from the transcript says it was not:
# a fresh-clone run (load) saw Claude Code write the enqueue of a prompt its killed bot had
# typed 0.4 s after the Enter, after the next bot had looked, and the prompt went in twice.
PROMPT_WRITE_GRACE = 5.0
NOTE = "📨 Sent while the bridge was offline ({ago} ago): typing it now."
OFFER = (
    "⏸ **Sent while the bridge was offline**, {ago} ago ({when}). Not typed by itself: "
    "it may not be what you want now.\n{quote}"
)


def register(bot: BridgeClient) -> None:
    bot.add_dynamic_items(LateButton)


class LateButton(BridgeItem[discord.ui.Button], template=custom_ids.LATE_TEMPLATE):
    """**▶ Send now** / **✖ Drop** on a message too old to type unasked."""

    def __init__(self, action: str, key: str, message: str) -> None:
        label, style = BUTTONS[action]
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label, style=style, custom_id=custom_ids.late(action, key, message)
        )
        super().__init__(button)
        self.action, self.key, self.message = action, key, message

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.client.catch_up.on_click(
            interaction, self.action, self.key, int(self.message)
        )


BUTTONS = {
    "send": ("▶ Send now", discord.ButtonStyle.primary),
    "drop": ("✖ Drop", discord.ButtonStyle.secondary),
}


def offer_view(key: str, message_id: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for action in BUTTONS:
        view.add_item(LateButton(action, key, str(message_id)))
    return view


class CatchUp:
    """One server's catch-up: which channels, their history, the old messages' buttons."""

    def __init__(self, bot: BridgeClient, handled: HandledMessages) -> None:
        self.bot = bot
        self.handled = handled
        self.window = bot.cfg.catch_up_minutes * 60
        self.relay: Relay | None = None  # set in setup_hook, with the relay
        self.connected_at = time.time()
        self._running = asyncio.Lock()  # one catch-up at a time (a READY during one)

    def keys(self) -> list[str]:
        """This server's mapped channels and listed threads (a thread first used from Discord
        is listed then: ``SessionManager.register_thread``)."""
        keys = set()
        for project in self.bot.server.projects:
            keys.add(project.channel_id)
            keys.update(entry.channel_id for entry in project.threads)
        return sorted(keys)

    def holding(self) -> bool:
        """Whether live messages wait for a catch-up that has not run."""
        return self.handled.holding()

    def connected(self) -> None:
        """A fresh gateway session (READY): live messages wait until their channel's history
        is read (``on_ready`` comes after the guilds, and messages may come before it)."""
        self.connected_at = time.time()
        self.handled.hold(self.keys())

    async def run(self) -> None:
        """Read every channel's history since the last message handled, all at once (one
        slow session start does not hold up the others)."""
        async with self._running:
            try:
                keys = self.keys()
                self.handled.hold(keys)
                await asyncio.gather(*(self._catch_up_key(key) for key in keys))
            finally:  # whatever happened, live messages never wait for nothing
                self.handled.release_all()

    async def _catch_up_key(self, key: str) -> None:
        try:
            await self._catch_up(key)
        except discord.HTTPException as err:  # no Read Message History there, say
            log.warning(
                "%s: could not read what was sent to %s while away: %s",
                self.bot.server.name,
                key,
                err,
            )
        except Exception:
            log.exception("%s: could not catch up on %s", self.bot.server.name, key)
        finally:
            self.handled.release(key)

    async def _catch_up(self, key: str) -> None:
        relay, me = self.relay, self.bot.user
        channel = await self._channel(key)
        if relay is None or me is None or channel is None:
            return
        record = await self.handled.get(key)
        if record is None:  # never seen (or no record it trusts): from now on
            await self.handled.start_at(key, channel.last_message_id or 0)
            return
        typing, last_seen, count = record.typing, record.last, 0
        async for raw in self._pages(channel.id, record.last):
            message = self._message(channel, raw)
            last_seen = message.id
            target = relay.addressed(message, me.id)
            if target is None or target.key != key:
                continue  # a stranger's, a bot's, a webhook's, a system message: never typed
            if await self._was_handled(key, raw, typing):
                log.info("message %s in %s was handled before the bot stopped", message.id, key)
                await self.handled.done(key, message.id)
                continue
            count += 1
            await self._hand_over(relay, message, target, raw)
        now = await self.handled.get(key)
        if now is None or last_seen > now.last or now.typing is not None:
            await self.handled.done(key, last_seen)  # past the messages that were no prompts
        if count:
            log.info("caught up on %d message(s) sent to %s while away", count, key)

    async def _hand_over(
        self, relay: Relay, message: discord.Message, target: SessionTarget, raw: dict
    ) -> None:
        """Type a message younger than the window (after a note); offer an older one."""
        sent_at = sent_time(raw)
        age = max(0.0, time.time() - sent_at)
        if age > self.window:
            await self._offer(message, target.key, sent_at, age)
            await self.handled.offered(target.key, message.id)
            return
        if sent_at < self.connected_at:  # not one that came in while this catch-up ran
            await _reply(message, NOTE.format(ago=format_age(age)))
        await relay.handle(message, target)

    async def _offer(self, message: discord.Message, key: str, sent_at: float, age: float) -> None:
        when = dt.datetime.fromtimestamp(sent_at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        text = OFFER.format(ago=format_age(age), when=when, quote=quote(message))
        await _reply(message, text, offer_view(key, message.id))

    async def _was_handled(self, key: str, raw: dict, typing: Typing | None) -> bool:
        """Whether a message got through before the bot stopped (killed between handling it
        and recording it): the bot's ✅ is on it, the queue or a screen's hold has it, or it
        was being typed and Claude Code's transcript has its prompt since."""
        if any(_own_check(r) for r in raw.get("reactions") or []):
            return True
        typed = typing if typing is not None and typing.message_id == _id(raw) else None
        return await asyncio.to_thread(self._recorded, key, str(raw.get("id")), typed)

    def _recorded(self, key: str, message_id: str, typing: Typing | None) -> bool:
        rt = self.bot.runtime
        if any(e.get("message_id") == message_id for e in queued_prompts.entries(rt, key)):
            return True
        if any(m.get("id") == message_id for m in held_messages.load(rt, key)["messages"]):
            return True
        if typing is None:
            return False
        path = (session_record.read_record(rt, key) or {}).get("transcript_path")
        if transcript.prompt_since(path, typing.at, typing.digest):
            return True
        unwritten = typing.at + PROMPT_WRITE_GRACE - time.time()
        if unwritten <= 0:
            return False
        time.sleep(min(unwritten, PROMPT_WRITE_GRACE))  # Claude Code may not have written it
        return transcript.prompt_since(path, typing.at, typing.digest)

    async def _pages(self, channel_id: int, after: int) -> AsyncIterator[dict[str, Any]]:
        """The channel's messages after ``after``, oldest first, each id once."""
        for _ in range(MAX_PAGES):
            page: list[Any] = await self.bot.http.logs_from(channel_id, PAGE, after=after)
            fresh = sorted({_id(m): m for m in page if _id(m) > after}.items())
            for _, raw in fresh:
                yield raw
            if not fresh or len(page) < PAGE:
                return
            after = fresh[-1][0]

    def _message(self, channel: discord.abc.MessageableChannel, raw: Any) -> discord.Message:
        """A page's message as discord.py builds one (its ``history()`` does the same)."""
        return self.bot._connection.create_message(channel=channel, data=raw)

    async def _channel(self, key: str) -> discord.TextChannel | discord.Thread | None:
        channel = self.bot.get_channel(int(key))
        if channel is None:
            try:  # a thread the gateway did not list (archived): only its own request says
                channel = await self.bot.fetch_channel(int(key))
            except discord.HTTPException as err:
                log.info("catch-up: channel %s: %s", key, err)
                return None
        if not isinstance(channel, discord.TextChannel | discord.Thread):
            return None
        if isinstance(channel, discord.Thread) and channel.archived:
            return None  # a message there would have un-archived it
        if target_of(self.bot.sessions, channel) is None:
            return None
        return channel

    async def on_click(
        self, interaction: BotInteraction, action: str, key: str, message_id: int
    ) -> None:
        """Send now / Drop: the first click decides (the record's offer is taken first)."""
        await interaction.response.defer()
        before = interaction.message.content if interaction.message else ""
        outcome = await self._decide(action, key, message_id)
        try:
            await interaction.edit_original_response(content=f"{before}\n{outcome}", view=None)
        except discord.HTTPException as err:
            log.warning("could not update the offer of %s: %s", message_id, err)

    async def _decide(self, action: str, key: str, message_id: int) -> str:
        if not await self.handled.take_offer(key, message_id):
            return "Already sent or dropped."
        if action == "drop":
            log.info("message %s of %s dropped: not typed", message_id, key)
            return "✖ Dropped: not typed."
        channel, relay = await self._channel(key), self.relay
        if channel is None or relay is None:
            return "⚠️ Not typed: this channel has no session now."
        try:
            message = await channel.fetch_message(message_id)
        except discord.NotFound:
            return "✖ Not typed: the message was deleted meanwhile."
        target = relay.addressed(message, self.bot.user.id if self.bot.user else None)
        if target is None:
            return "⚠️ Not typed: it is not a prompt for this session."
        await relay.handle(message, target, again=True)
        return "▶ Sent."


def sent_time(raw: dict) -> float:
    """When a message was sent (its ``timestamp``; else the time its id says)."""
    stamp = raw.get("timestamp")
    if isinstance(stamp, str):
        try:
            return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return discord.utils.snowflake_time(_id(raw)).timestamp()


def format_age(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return "less than a minute"
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} days"


def quote(message: discord.Message) -> str:
    """What the message was, quoted: its text (cut), and its files or voice message."""
    text = message.content.strip()
    if len(text) > QUOTE_CHARS:
        text = text[: QUOTE_CHARS - 1] + "…"
    lines = [f"> {line}" for line in text.splitlines() if line.strip()]
    if message.flags.voice:
        lines.append("> 🎤 a voice message")
    elif message.attachments:
        lines.append(f"> 📎 {len(message.attachments)} attached file(s)")
    return "\n".join(lines) or "> (no text)"


def _id(raw: dict) -> int:
    value = raw.get("id")
    return int(value) if isinstance(value, str) and value.isdigit() else 0


def _own_check(reaction: object) -> bool:
    """The bot's own ✅ on a message: it was typed."""
    if not isinstance(reaction, dict) or not reaction.get("me"):
        return False
    emoji = reaction.get("emoji")
    return isinstance(emoji, dict) and emoji.get("name") == DELIVERED


async def _reply(message: discord.Message, text: str, view: discord.ui.View | None = None) -> None:
    try:
        if view is None:
            await message.reply(text, mention_author=False)
        else:
            await message.reply(text, mention_author=False, view=view)
    except discord.HTTPException as err:
        log.warning("could not answer %s: %s", message.id, err)
