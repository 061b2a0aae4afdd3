"""Discord message → the right Claude Code pane, typed as one prompt.

Only the owner and ``allowedUserIds`` reach a pane; messages from anyone else, from bots and
from the bot itself type nothing. Text is stripped of control characters and escape
sequences (newlines and tabs kept) and a leading ``!``, ``/``, ``#`` or ``&`` is defused,
because Claude Code would run it as a shell command, slash command or other mode switch.
The user's message gets a ✅ once typed, or a reply saying why it could not be delivered.
"""

from __future__ import annotations

import logging

import aiohttp
import discord

from bridge import runtime
from bridge.bot.downloads import save_attachments
from bridge.bot.sessions import SessionManager
from bridge.config import BridgeConfig, Server
from bridge.render.prompt_text import sanitize_prompt
from bridge.tmux import NoInputBox

log = logging.getLogger(__name__)

DELIVERED = "✅"
SPECIAL_PREFIXES = ("!", "/", "#", "&")


class Relay:
    def __init__(
        self,
        cfg: BridgeConfig,
        server: Server,
        sessions: SessionManager,
        rt: runtime.Runtime,
        http: aiohttp.ClientSession,
    ) -> None:
        self.cfg = cfg
        self.server = server
        self.sessions = sessions
        self.runtime = rt
        self.http = http

    async def on_message(self, message: discord.Message, bot_user_id: int | None) -> None:
        if message.author.bot or message.author.id == bot_user_id:
            return
        project = self.server.project_for_channel(message.channel.id)
        if project is None:
            return
        if not self.server.may_act(message.author.id):
            log.info("ignored message from %s in #%s: not an allowed user",
                     message.author.id, message.channel.id)  # fmt: skip
            return
        text = defuse_prefix(sanitize_prompt(message.content))
        paths: list[str] = []
        if message.attachments:
            directory = self.runtime.channel_dir("uploads", project.channel_id)
            paths, failures = await save_attachments(
                self.http, message, directory, self.cfg.download_limit
            )
            if failures:
                await _reply(message, "⚠️ Not downloaded: " + "; ".join(failures))
        prompt = compose_prompt(text, paths)
        if not prompt:
            return
        async with self.sessions.lock(project.channel_id):
            try:
                pane_id = await self.sessions.ensure_running(project)
                await self.sessions.type_prompt(pane_id, prompt)
            except NoInputBox as err:
                log.warning("not typed into %s: a dialog is open", project.name)
                await _reply(message, f"⚠️ {err}")
                return
            except Exception as err:
                log.exception("delivery to %s failed", project.name)
                await _reply(message, f"⚠️ Not delivered to Claude Code: {_short(err)}")
                return
        log.info("typed message %s into %s (%d chars, %d attachments)",
                 message.id, project.name, len(prompt), len(paths))  # fmt: skip
        try:
            await message.add_reaction(DELIVERED)
        except discord.HTTPException as err:
            log.warning("could not react to %s: %s", message.id, err)


def defuse_prefix(text: str) -> str:
    """A leading space keeps Claude Code from reading the text as a command or mode switch."""
    return " " + text if text.startswith(SPECIAL_PREFIXES) else text


def compose_prompt(text: str, attachment_paths: list[str]) -> str:
    # Not "[attachment: /path]": Claude Code 2.1.330 does not submit an input whose line is
    # a bracketed absolute path (Enter is swallowed), measured in tmux.
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
