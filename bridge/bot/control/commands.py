"""Slash commands: the common controls of the session of the channel or thread they are used in.

``/status /start /stop /esc /peek /mode /model /new /resume /clear /compact /keys``. Only the
owner and ``allowedUserIds`` may use them (everyone else gets an ephemeral refusal and nothing
changes); replies are ephemeral. Every command that touches tmux acknowledges first (Discord
allows 3 s), then works; the keys themselves are ``bridge/sessions/pane_ops.py``'s, each through
the session's key gate (``bridge/sessions/key_gate.py``): none while a prompt of the session is
open or a tool call's dialog may be on its way, and ``/esc``, ``/mode``, ``/model``, ``/clear``
and ``/compact`` only while Claude Code shows its input box (else a warning saying what to
answer first). ``/esc`` never answers a dialog, not even with the "No" its Escape would be
there: the prompt's own Deny does that. Text from Discord reaches the pane only as literal keys
through tmux argv, never a shell; ``/keys`` accepts an allow-list of key names and plain text,
and is the raw path: it presses what the user names into any screen no prompt covers.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bridge.bot.client import (
    BotInteraction,
    BridgeClient,
    allowed,
    command_action,
    not_running,
    owner_only,
    target_here,
    target_of,
)
from bridge.bot.control import codex_controls, resume_pick
from bridge.claude.model_names import display_name, session_model
from bridge.claude.screen import mode_name
from bridge.config import MODE_ALIASES
from bridge.sessions import adoption, pane_ops
from bridge.sessions.start_failed import ClaudeDidNotStart
from bridge.state import session_record, session_state
from bridge.state.status_cache import read_status
from bridge.tmux import TmuxError

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager
    from bridge.sessions.targets import SessionTarget

log = logging.getLogger(__name__)

# /mode's choices: what Shift+Tab cycles through. 2.1.332 calls the first "manual", hooks and
# 2.1.197 "default": the choice shows both (Discord's picker finds it by either word).
MODES = (
    ("manual (default)", "manual"),
    ("acceptEdits", "acceptEdits"),
    ("plan", "plan"),
    ("auto", "auto"),
    ("bypassPermissions", "bypassPermissions"),
)
PEEK_INLINE = 1900  # characters of screen shown in a code block; longer → a .txt attachment

# What a command does in its session: (the commands, the target, its pane or None) → answer.
# What a command answers: text, a file, or (a long screen) text with the file attached.
Action = Callable[
    ["Commands", "SessionTarget", Any], Awaitable["str | discord.File | tuple[str, discord.File]"]
]


class BridgeCommandTree(app_commands.CommandTree[BridgeClient]):
    """Refuses whoever may not do what a command needs (``client.COMMAND_ACTIONS``) before
    any command or autocomplete runs (discord.py asks the tree first, for both)."""

    async def interaction_check(self, interaction: BotInteraction) -> bool:
        return await allowed(interaction, command_action(interaction))

    async def on_error(
        self, interaction: BotInteraction, error: app_commands.AppCommandError
    ) -> None:
        if isinstance(error, app_commands.CheckFailure):
            return
        log.exception("slash command failed", exc_info=error)
        await _say(interaction, f"⚠️ {_short(error)}")


async def sync(tree: app_commands.CommandTree, guild_id: str | None) -> None:
    """Register the commands: per guild when it is known (instant), else globally."""
    guild = discord.Object(int(guild_id)) if guild_id else None
    if guild is not None:
        tree.copy_global_to(guild=guild)
    await tree.sync(guild=guild)


# --- the commands: each finds the bot's parts on ``interaction.client``, as items do ----------


@app_commands.command(name="status", description="This session: state, model, mode, worktree, pane")
async def status(interaction: BotInteraction) -> None:
    await run(interaction, Commands.status, running=False)


@app_commands.command(name="start", description="Start this channel's Claude Code session")
async def start(interaction: BotInteraction) -> None:
    await run(interaction, Commands.start, running=False)


@app_commands.command(name="stop", description="Stop this session: Claude exits, pane closed")
async def stop(interaction: BotInteraction) -> None:
    await run(interaction, Commands.stop, running=False)


@app_commands.command(name="esc", description="Interrupt Claude now (Escape)")
async def esc(interaction: BotInteraction) -> None:
    await run(interaction, Commands.esc)


@app_commands.command(name="peek", description="Show the pane's screen as text")
@app_commands.describe(lines="lines from the bottom (default: the screen)")
async def peek(
    interaction: BotInteraction, lines: app_commands.Range[int, 1, 500] | None = None
) -> None:
    await run(interaction, lambda here, t, p: here.peek(t, p, lines or 0))


@app_commands.command(name="mode", description="Switch the permission mode")
@app_commands.choices(mode=[app_commands.Choice(name=name, value=value) for name, value in MODES])
async def mode(interaction: BotInteraction, mode: app_commands.Choice[str]) -> None:
    await run(interaction, lambda here, t, p: here.mode(t, p, mode.value))


@app_commands.command(name="model", description="Switch the model of this session")
async def model(interaction: BotInteraction, name: str) -> None:
    await run(interaction, lambda here, t, p: here.model(t, p, name))


@model.autocomplete("name")
async def _model_names(interaction: BotInteraction, current: str) -> list[app_commands.Choice[str]]:
    """A Codex session's: Codex's own catalog. Claude Code's: none (the user names one)."""
    target = target_of(interaction.client.sessions, interaction.channel)
    if target is None or not codex_controls.is_codex(target):
        return []
    return await codex_controls.model_choices(target, current)


@app_commands.command(name="new", description="A fresh conversation in the same place")
async def new(interaction: BotInteraction) -> None:
    await run(interaction, Commands.new, running=False)


@app_commands.command(name="resume", description="Continue the last conversation, or one named")
@app_commands.describe(conversation="one of the project's past conversations (default: the last)")
async def resume(interaction: BotInteraction, conversation: str | None = None) -> None:
    if conversation:  # a past conversation, as /history's: the owner's
        if not await owner_only(interaction):
            return
        await run(
            interaction,
            lambda here, t, p: resume_pick.resume(here.sessions, t, p, conversation),
            running=False,
        )
    else:
        await run(interaction, Commands.resume, running=False)


@resume.autocomplete("conversation")
async def _conversations(
    interaction: BotInteraction, current: str
) -> list[app_commands.Choice[str]]:
    if str(interaction.user.id) != interaction.client.server.owner_id:
        return []  # the tree let allowed users through; past conversations are the owner's
    target = target_of(interaction.client.sessions, interaction.channel)
    return [] if target is None else await resume_pick.choices(target, current)


@app_commands.command(name="clear", description="Claude Code's /clear")
async def clear(interaction: BotInteraction) -> None:
    await run(interaction, lambda here, t, p: here.slash(t, p, "/clear"))


@app_commands.command(name="compact", description="Claude Code's /compact")
async def compact(interaction: BotInteraction) -> None:
    await run(interaction, lambda here, t, p: here.slash(t, p, "/compact"))


@app_commands.command(name="keys", description="Type raw keys: Enter, Escape, digits, text…")
@app_commands.describe(keys="space-separated: key names (Enter, Escape, Down, C-c…) or text")
async def keys(interaction: BotInteraction, keys: str) -> None:
    await run(interaction, lambda here, t, p: here.keys(t, p, keys))


COMMANDS: tuple[app_commands.Command[Any, ..., None], ...] = (
    status,
    start,
    stop,
    esc,
    peek,
    mode,
    model,
    new,
    resume,
    clear,
    compact,
    keys,
)


def register(bot: BridgeClient) -> None:
    """The session commands, ``/status`` … ``/keys``."""
    for command in COMMANDS:
        bot.tree.add_command(command)


async def run(interaction: BotInteraction, action: Action, running: bool = True) -> None:
    """Find the channel's session, acknowledge, run ``action(commands, target, pane_id)``
    under the session's lock and send its answer as an ephemeral follow-up."""
    target = await target_here(interaction)
    if target is None:
        return
    sessions = interaction.client.sessions
    await interaction.response.defer(ephemeral=True, thinking=True)
    async with sessions.lock(target.key):
        pane_id = await sessions.live_pane(target.key)
        if running and pane_id is None:
            label = sessions.agent_of(target.key).label
            answer: str | discord.File | tuple[str, discord.File] = not_running(label)
        else:
            try:
                answer = await action(Commands(sessions), target, pane_id)
            except ClaudeDidNotStart as err:  # logged by the session manager
                answer = err.discord_text()
            except TmuxError as err:
                answer = f"⚠️ {_short(err)}"
    if isinstance(answer, tuple):
        text, file = answer
        await interaction.followup.send(text[:2000], file=file, ephemeral=True)
    elif isinstance(answer, discord.File):
        await interaction.followup.send(file=answer, ephemeral=True)
    else:
        await interaction.followup.send(str(answer)[:2000], ephemeral=True)


def bottom_lines(text: str, limit: int) -> str:
    """The last whole lines of ``text`` that fit ``limit`` characters (at least the last line,
    cut to the limit)."""
    kept: list[str] = []
    size = 0
    for line in reversed(text.splitlines()):
        if kept and size + len(line) + 1 > limit:
            break
        kept.append(line[-limit:])
        size += len(line) + 1
    return "\n".join(reversed(kept))


class Commands:
    """What the session commands do, on the sessions of one bot."""

    def __init__(self, sessions: SessionManager) -> None:
        self.sessions = sessions
        self.tmux = sessions.tmux

    # --- the commands ----------------------------------------------------------------

    async def status(self, target: SessionTarget, pane_id: str | None) -> str:
        record = (
            await asyncio.to_thread(session_state.load, self.sessions.runtime, target.key) or {}
        )
        lines = [f"**{discord.utils.escape_markdown(target.label)}**"]
        mode = target.permission or "default"
        if pane_id is None:
            lines.append("state: stopped")
        else:
            screen = self.sessions.keys(target.key, pane_id).screen  # the agent's reader
            seen = await asyncio.to_thread(pane_ops.glance, self.tmux, pane_id, screen)
            mode = seen.mode or mode
            lines.append(f"state: {'working' if seen.busy else 'idle'}")
        live = live_status(self.sessions.runtime, target.key)
        if codex_controls.is_codex(target):
            lines.append(codex_controls.model_line(self.sessions, target, record))
            lines.append(codex_controls.MODE_LINE)
        else:
            lines.append(f"model: {session_model(record.get('model') or target.model, live)}")
            lines.append(f"mode: {mode_name(MODE_ALIASES.get(mode, mode))}")
        if live.get("context_percent") is not None:
            lines.append(f"context: {live['context_percent']}% used")
        worktree = record.get("worktree")
        lines.append(f"worktree: `{worktree['path']}`" if worktree else "worktree: none")
        if pane_id is not None:
            lines.append(
                f"pane: `{pane_id}` in window `{target.window_name}`, cwd `{record.get('cwd')}`"
            )
        session = session_record.read_record(self.sessions.runtime, target.key) or {}
        if session.get("session_id"):
            lines.append(f"conversation: `{session['session_id']}`")
        return "\n".join(lines)

    async def start(self, target: SessionTarget, pane_id: str | None) -> str:
        if pane_id is not None:
            return f"Already running in `{pane_id}`."
        await self.sessions.register_thread(target)
        pane_id = await self.sessions.ensure_running(target)
        return f"Started **{target.label}** in `{pane_id}`."

    async def stop(self, target: SessionTarget, pane_id: str | None) -> str:
        if await asyncio.to_thread(adoption.adopted, self.sessions.runtime, target.key):
            await self.sessions.stop(target.key)  # the bridge never ends what it did not start
            label = self.sessions.agent_of(target.key).label
            return f"Released: that {label} keeps running, no longer linked to this thread."
        stopped = await self.sessions.stop(target.key)
        return f"Stopped **{target.label}**." if stopped else "It was not running."

    async def esc(self, target: SessionTarget, pane_id: str) -> str:
        await asyncio.to_thread(pane_ops.interrupt, self.sessions.keys(target.key, pane_id))
        return "Interrupted (Escape sent)."

    async def peek(
        self, target: SessionTarget, pane_id: str, lines: int
    ) -> str | discord.File | tuple[str, discord.File]:
        """The screen as text (``lines`` from the bottom that say something; 0: all), inline
        while it fits a code block; a longer one shows its bottom lines inline (what a phone
        reader wants: the box and the last output) with the whole attached as a .txt."""
        text = await asyncio.to_thread(pane_ops.peek, self.tmux, pane_id, lines)
        if "```" in text:  # a fence in the screen would end the block: the file alone
            return discord.File(
                io.BytesIO(text.encode()), filename=f"{target.window_name}-screen.txt"
            )
        if len(text) <= PEEK_INLINE:
            return f"```\n{text}\n```"
        tail = bottom_lines(text, PEEK_INLINE - 80)
        note = f"-# the last {len(tail.splitlines())} lines; the whole screen is attached"
        whole = discord.File(io.BytesIO(text.encode()), filename=f"{target.window_name}-screen.txt")
        return f"```\n{tail}\n```\n{note}", whole

    async def mode(self, target: SessionTarget, pane_id: str, wanted: str) -> str:
        """Cycle the modes until Claude Code's footer shows ``wanted`` (either name of the
        manual mode), or give up."""
        if codex_controls.is_codex(target):
            return codex_controls.NO_MODES  # nothing pressed: there is nothing to cycle
        wanted = MODE_ALIASES.get(wanted, wanted)  # as hooks and the footer reader name it
        keys = self.sessions.keys(target.key, pane_id)
        current = await asyncio.to_thread(pane_ops.cycle_mode, keys, wanted)
        if current == wanted:
            await asyncio.to_thread(
                session_state.update, self.sessions.runtime, target.key, mode=wanted
            )
            return f"Mode is now **{mode_name(wanted)}** (read back from Claude Code)."
        hint = (
            " (bypassPermissions is only offered when started with it)"
            if wanted == "bypassPermissions"
            else ""
        )
        shown = mode_name(current) if current else "no mode"
        return f"⚠️ Could not switch to {mode_name(wanted)}{hint}; Claude Code shows {shown}."

    async def model(self, target: SessionTarget, pane_id: str, name: str) -> str:
        if codex_controls.is_codex(target):
            return await codex_controls.switch_model(self.sessions, target, pane_id, name)
        name = name.strip()
        if not name or not all(c.isalnum() or c in "-_.:[]/" for c in name):
            return "⚠️ A model name is letters, digits and - _ . : [ ] / only."
        # Mid-conversation Claude Code asks "Switch model?": /model is the user's explicit
        # answer, so pane_ops confirms it.
        keys = self.sessions.keys(target.key, pane_id)
        await asyncio.to_thread(pane_ops.switch_model, keys, name)
        await asyncio.to_thread(session_state.update, self.sessions.runtime, target.key, model=name)
        return f"Model set to **{display_name(name)}**."

    async def new(self, target: SessionTarget, pane_id: str | None) -> str:
        await self.sessions.stop(target.key)
        pane_id = await self.sessions.ensure_running(target, fresh=True)
        return f"Fresh conversation for **{target.label}** in `{pane_id}`."

    async def resume(self, target: SessionTarget, pane_id: str | None) -> str:
        session_id = self.sessions.resumable(target)
        if pane_id is not None:
            return "Already running: this is the current conversation."
        if session_id is None:
            return "No earlier conversation is known here; /start begins a new one."
        pane_id = await self.sessions.ensure_running(target)
        return f"Resumed conversation `{session_id}` in `{pane_id}`."

    async def slash(self, target: SessionTarget, pane_id: str, command: str) -> str:
        """Type one of Claude Code's own slash commands (only into an empty input box)."""
        await self.sessions.type_prompt(target.key, pane_id, command)
        return f"Sent `{command}`."

    async def keys(self, target: SessionTarget, pane_id: str, names: str) -> str:
        keys = self.sessions.keys(target.key, pane_id)
        sent = await asyncio.to_thread(pane_ops.send_keys, keys, names)
        return "Sent: " + (" ".join(sent) or "nothing")


def live_status(rt: Any, key: str) -> dict:
    """What the statusLine command last saw for the session's conversation (model, context
    use), when that cache exists (``bridge.state.status_cache``, the reply footer's source)."""
    session_id = (session_record.read_record(rt, key) or {}).get("session_id")
    try:
        return read_status(rt, session_id) or {}
    except Exception:
        return {}


async def _say(interaction: BotInteraction, text: str) -> None:
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as err:
        log.warning("could not answer a command: %s", err)


def _short(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return (lines[0] if lines else type(err).__name__)[:300]
