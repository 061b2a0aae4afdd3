"""Discord message → the right Claude Code pane, typed as one prompt.

A message in a project's channel goes to that channel's session; a message in a thread under
it goes to the thread's own session (started on the owner's first message there, the thread
then listed in the config): never one into the other.

Only the owner and ``allowedUserIds`` reach a pane; messages from anyone else, from bots,
webhooks and the bot itself, and system messages, type nothing. Text is stripped of control
characters and escape sequences (newlines and tabs kept) and a leading ``!``, ``/``, ``#``
or ``&`` is defused, because Claude Code would run it as a shell command, slash command or
other mode switch.
A voice message is typed as its transcript (``bot/voice/messages.py``).
The user's message gets a ✅ once typed, or a reply saying why it could not be delivered; a
message that meets a Claude Code screen no hook reports is held and the screen offered on
Discord (``bot/prompts/screens.py``), the ✅ coming once it is typed. Each channel's last message
handled is recorded (``bot/turn/handled.py``): a message is handled once, live or when the bot is
back and reads what it missed (``bot/turn/catchup.py``, which hands each one to :meth:`handle`).
"""

from __future__ import annotations

import asyncio
import logging
import time

import aiohttp
import discord

from bridge.bot import metrics
from bridge.bot.client import role_ids, target_of
from bridge.bot.downloads import save_attachments
from bridge.bot.prompt_text import DELIVERED, compose_prompt, defuse_prefix
from bridge.bot.prompts.screens import ScreenPrompts
from bridge.bot.turn.handled import HandledMessages
from bridge.bot.turn.queue import PromptQueue
from bridge.bot.voice.messages import VoicePrompts, is_spoken
from bridge.bot.voice.replies import VoiceReplies
from bridge.config import BridgeConfig, Project, Server
from bridge.config.roles import DRIVE
from bridge.sessions.manager import SessionManager
from bridge.sessions.pane_input import NoInputBox
from bridge.sessions.start_failed import ClaudeDidNotStart
from bridge.sessions.targets import SessionTarget
from bridge.sessions.typed_text import sanitize_prompt
from bridge.state import audit, runtime

log = logging.getLogger(__name__)

# What a person types. System messages (type 18 "<owner> started a thread: <name>" in the
# parent channel, pins, joins…) are authored by the user but written by Discord: never prompts.
TYPED_MESSAGES = (discord.MessageType.default, discord.MessageType.reply)


class Relay:
    def __init__(
        self,
        cfg: BridgeConfig,
        server: Server,
        sessions: SessionManager,
        rt: runtime.Runtime,
        http: aiohttp.ClientSession,
        screens: ScreenPrompts | None = None,
        queue: PromptQueue | None = None,
        voice_replies: VoiceReplies | None = None,
        handled: HandledMessages | None = None,
    ) -> None:
        self.cfg = cfg
        self.server = server
        self.sessions = sessions
        self.runtime = rt
        self.http = http
        self.screens = screens
        self.queue = queue  # messages that wait for the running turn (bot/turn/queue.py)
        self.voice = VoicePrompts(cfg, http, rt)  # voice messages → transcripts
        self.voice_replies = voice_replies  # whose replies are spoken back
        self.handled = handled  # the messages handled per channel (a restart's catch-up)

    async def on_message(self, message: discord.Message, bot_user_id: int | None) -> None:
        """A live message (MESSAGE_CREATE)."""
        target = self.addressed(message, bot_user_id)
        if target is None:
            await self._point_at_projects(message)
            return
        if self.handled is not None and not await self.handled.admit(target.key, message.id):
            log.info("message %s in %s was handled already", message.id, target.label)
            return
        await self.handle(message, target)

    def addressed(self, message: discord.Message, bot_user_id: int | None) -> SessionTarget | None:
        """The session a message is a prompt for: a person's message (no bot, webhook or
        system message) by the owner or ``allowedUserIds`` in a mapped channel or thread."""
        if message.author.bot or message.author.id == bot_user_id or message.webhook_id:
            return None
        if message.type not in TYPED_MESSAGES:
            return None
        target = target_of(self.sessions, message.channel)
        if target is None:
            return None
        author = message.author
        if not self.server.grant(author.id, role_ids(author), DRIVE, target.project):
            log.info(
                "ignored message from %s in #%s: may not drive there",
                message.author.id,
                message.channel.id,
            )
            return None
        return target

    async def handle(
        self, message: discord.Message, target: SessionTarget, again: bool = False
    ) -> None:
        """Type a message ``addressed`` to ``target`` (or say why not), then record it handled.
        ``again``: a message the record already counts (an old one sent on request)."""
        await self.sessions.register_thread(target)
        # One message at a time per channel or thread, from download to Enter, so a message
        # with a slow attachment is not overtaken by the next one.
        async with self.sessions.lock(target.key):
            if target_of(self.sessions, message.channel) is None:
                return  # unmapped meanwhile (/project remove): nothing may start there now
            handled = self.handled
            if (
                not again
                and handled is not None
                and not await handled.is_new(target.key, message.id)
            ):
                return  # handled while this one waited for the lock (by a catch-up)
            delivered = await self._deliver(message, target)
            if self.handled is not None:
                await self.handled.done(target.key, message.id)
        if not delivered:
            return
        try:
            await message.add_reaction(DELIVERED)
        except discord.HTTPException as err:
            log.warning("could not react to %s: %s", message.id, err)

    async def _point_at_projects(self, message: discord.Message) -> None:
        """The owner typing in the control panel's channel meant Claude: say where to type
        (no one else gets an answer; other channels stay silent: they may be anybody's)."""
        if message.author.bot or message.webhook_id or message.type not in TYPED_MESSAGES:
            return  # a bot's, a webhook's or a system message: nobody meant Claude
        if str(message.channel.id) != self.server.general_channel_id:
            return
        if not self.server.may_act(message.author.id):
            return
        await _reply(message, panel_hint(self.server.projects))

    async def _deliver(self, message: discord.Message, target: SessionTarget) -> bool:
        """Download attachments, then type the prompt. False (and a reply saying why) when
        nothing was typed."""
        prompt = ""
        started = time.monotonic()
        try:
            text, paths = message.content, []
            if is_spoken(message):  # transcribed and echoed (or refused with a reply)
                spoken = await self.voice.transcript(message, target)
                if spoken is None:
                    return False
                text = spoken
            else:
                paths = await self._download(message, target)
            text, queued = split_queue_prefix(text, self.cfg.queue_prefix)
            prompt = defuse_prefix(compose_prompt(sanitize_prompt(text), paths))
            if not prompt.strip():
                return False
            if queued and self.queue is not None and await self.queue.must_wait(target.key):
                await self.queue.hold(message, target.key, prompt)
                return False  # its ✅ comes when it is typed
            steering = self.queue is not None and await self.queue.busy(target.key)
            pane_id = await self.sessions.ensure_running(target)
            if self.screens is not None:  # messages held behind a screen go first
                await self.screens.type_held(target.key, pane_id, message.channel)
            if self.handled is not None:  # what a bot killed from here on finds again
                await self.handled.typing(target.key, message.id, prompt)
            timings = await self.sessions.type_prompt(target.key, pane_id, prompt)
        except NoInputBox as err:
            log.warning("not typed into %s: %s", target.label, err)
            # A screen no prompt of ours covers (folder trust, bypass warning…): offered on
            # Discord, the message held until it is answered.
            if self.screens is not None and await self.screens.offer(
                target.key, message, prompt, err
            ):
                return False
            await _reply(message, f"⚠️ {err}")
            return False
        except ClaudeDidNotStart as err:  # logged by the session manager
            agent = self.sessions.agent_of(target.key).label
            await _reply(message, err.discord_text(f"⚠️ Not delivered to {agent}"))
            return False
        except Exception as err:
            log.exception("delivery to %s failed", target.label)
            agent = self.sessions.agent_of(target.key).label
            await _reply(message, f"⚠️ Not delivered to {agent}: {_short(err)}")
            return False
        await asyncio.to_thread(self.sessions.touch, target.key)  # an fsync: off the loop
        metrics.MESSAGES_RELAYED.labels(target.project.name).inc()
        await asyncio.to_thread(
            audit.record,
            self.runtime,
            "message",
            user=str(message.author.id),
            name=message.author.name,
            session=target.key,
            project=target.project.name,
            length=len(prompt),
            text=prompt if self.cfg.audit_text else None,
        )
        if self.voice_replies is not None:  # a voice prompt's reply is spoken (voice.replies)
            self.voice_replies.prompted(target.key, spoken=is_spoken(message))
        if steering and self.queue is not None:  # its receipt: move it after the turn, or not
            await self.queue.steered(message, target.key, prompt)
        log.info(
            "typed message %s into %s (%d chars, %d attachments) in %.0f ms (%s)",
            message.id,
            target.label,
            len(prompt),
            len(paths),
            (time.monotonic() - started) * 1000,
            timings,
        )
        return True

    async def _download(self, message: discord.Message, target: SessionTarget) -> list[str]:
        if not message.attachments:
            return []
        directory = self.runtime.channel_dir("uploads", target.key)
        paths, failures = await save_attachments(
            self.http, message, directory, self.cfg.download_limit
        )
        if failures:
            await _reply(message, "⚠️ Not downloaded: " + "; ".join(failures))
        return paths


def split_queue_prefix(text: str, prefix: str) -> tuple[str, bool]:
    """``(text without the queue prefix, True)`` for a message that should wait for the
    running turn (``>> run the tests``), else ``(text, False)``."""
    stripped = text.lstrip()
    if prefix and stripped.startswith(prefix):
        return stripped[len(prefix) :].lstrip(), True
    return text, False


def panel_hint(projects: list[Project]) -> str:
    """Where to type instead of the control panel: each project's channel."""
    where = ", ".join(f"<#{p.channel_id}>" for p in projects) or "a project's channel"
    return (
        "This channel is the control panel: it shows the sessions, nothing here reaches "
        f"Claude. To talk to Claude, type in {where} (or one of its threads)."
    )


def _short(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


async def _reply(message: discord.Message, text: str) -> None:
    try:
        await message.reply(text, mention_author=False)
    except discord.HTTPException as err:
        log.warning("could not reply to %s: %s", message.id, err)
