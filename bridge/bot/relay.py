"""Discord message → the right Claude Code pane, typed as one prompt.

A message in a project's channel goes to that channel's session; a message in a thread under
it goes to the thread's own session (started on the owner's first message there, the thread
then listed in the config): never one into the other.

Only the owner and ``allowedUserIds`` reach a pane; messages from anyone else, from bots and
from the bot itself type nothing. Text is stripped of control characters and escape
sequences (newlines and tabs kept) and a leading ``!``, ``/``, ``#`` or ``&`` is defused,
because Claude Code would run it as a shell command, slash command or other mode switch.
A voice message is typed as its transcript (``bot/voice.py``).
The user's message gets a ✅ once typed, or a reply saying why it could not be delivered; a
message that meets a Claude Code screen no hook reports is held and the screen offered on
Discord (``bot/screens.py``), the ✅ coming once it is typed.
"""

from __future__ import annotations

import asyncio
import logging
import time

import aiohttp
import discord

from bridge.bot.client import target_of
from bridge.bot.downloads import save_attachments
from bridge.bot.queue import PromptQueue
from bridge.bot.screens import ScreenPrompts
from bridge.bot.voice import VoicePrompts, is_spoken
from bridge.bot.voice_replies import VoiceReplies
from bridge.config import BridgeConfig, Project, Server
from bridge.sessions.manager import ClaudeDidNotStart, SessionManager
from bridge.sessions.pane_input import NoInputBox
from bridge.sessions.targets import SessionTarget
from bridge.sessions.typed_text import sanitize_prompt
from bridge.state import runtime

log = logging.getLogger(__name__)

DELIVERED = "✅"
SPECIAL_PREFIXES = ("!", "#", "&")
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
    ) -> None:
        self.cfg = cfg
        self.server = server
        self.sessions = sessions
        self.runtime = rt
        self.http = http
        self.screens = screens
        self.queue = queue  # messages that wait for the running turn (bot/queue.py)
        self.voice = VoicePrompts(cfg, http, rt)  # voice messages → transcripts
        self.voice_replies = voice_replies  # whose replies are spoken back

    async def on_message(self, message: discord.Message, bot_user_id: int | None) -> None:
        if message.author.bot or message.author.id == bot_user_id:
            return
        if message.type not in TYPED_MESSAGES:
            return
        target = target_of(self.sessions, message.channel)
        if target is None:
            await self._point_at_projects(message)
            return
        if not self.server.may_act(message.author.id):
            log.info("ignored message from %s in #%s: not an allowed user",
                     message.author.id, message.channel.id)  # fmt: skip
            return
        await self.sessions.register_thread(target)
        # One message at a time per channel or thread, from download to Enter, so a message
        # with a slow attachment is not overtaken by the next one.
        async with self.sessions.lock(target.key):
            if target_of(self.sessions, message.channel) is None:
                return  # unmapped meanwhile (/project remove): nothing may start there now
            delivered = await self._deliver(message, target)
        if not delivered:
            return
        try:
            await message.add_reaction(DELIVERED)
        except discord.HTTPException as err:
            log.warning("could not react to %s: %s", message.id, err)

    async def _point_at_projects(self, message: discord.Message) -> None:
        """The owner typing in the control panel's channel meant Claude: say where to type
        (no one else gets an answer; other channels stay silent: they may be anybody's)."""
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
            await _reply(message, err.discord_text("⚠️ Not delivered to Claude Code"))
            return False
        except Exception as err:
            log.exception("delivery to %s failed", target.label)
            await _reply(message, f"⚠️ Not delivered to Claude Code: {_short(err)}")
            return False
        await asyncio.to_thread(self.sessions.touch, target.key)  # an fsync: off the loop
        if self.voice_replies is not None:  # a voice prompt's reply is spoken (voice.replies)
            self.voice_replies.prompted(target.key, spoken=is_spoken(message))
        if steering and self.queue is not None:  # its receipt: move it after the turn, or not
            await self.queue.steered(message, target.key, prompt)
        log.info("typed message %s into %s (%d chars, %d attachments) in %.0f ms (%s)",
                 message.id, target.label, len(prompt), len(paths),
                 (time.monotonic() - started) * 1000, timings)  # fmt: skip
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


def defuse_prefix(text: str) -> str:
    """Messages are prompts, never terminal commands.

    A leading space keeps ``!`` (bash mode: a shell command with no permission check), ``#``
    and ``&`` from switching modes; Claude Code trims it before looking for slash commands,
    so a ``/command`` gets a backslash instead (``\\/model`` reaches the model as text). A
    path such as ``/etc/hosts …`` is left alone: Claude Code does not take it for a command.

    Claude Code's trim is JavaScript's: every Unicode space (NBSP, U+3000 …) and line break,
    so ``"\\u00a0/model x"`` is the command ``/model x``. Leading whitespace of every kind
    (``str.isspace``, a superset of JavaScript's) goes first, so the check sees the first
    character Claude Code sees.
    """
    text = text.lstrip()
    if text.startswith("/"):
        first_word = text.split(maxsplit=1)[0]
        return "\\" + text if "/" not in first_word[1:] else text
    return " " + text if text.startswith(SPECIAL_PREFIXES) else text


def panel_hint(projects: list[Project]) -> str:
    """Where to type instead of the control panel: each project's channel."""
    where = ", ".join(f"<#{p.channel_id}>" for p in projects) or "a project's channel"
    return (
        "This channel is the control panel: it shows the sessions, nothing here reaches "
        f"Claude. To talk to Claude, type in {where} (or one of its threads)."
    )


def compose_prompt(text: str, attachment_paths: list[str]) -> str:
    """The text, then one ``Attached file: /path`` line per download.

    Not ``[attachment: /path]``: Claude Code 2.1.330 does not submit an input whose line is
    a bracketed absolute path (Enter is swallowed), measured in tmux. Leading newlines go, so
    that :func:`defuse_prefix` sees the real first character.
    """
    lines = [f"Attached file: {path}" for path in attachment_paths]
    return "\n".join([text, *lines] if text else lines).strip("\n")


def _short(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


async def _reply(message: discord.Message, text: str) -> None:
    try:
        await message.reply(text, mention_author=False)
    except discord.HTTPException as err:
        log.warning("could not reply to %s: %s", message.id, err)
