"""Stalls: a turn that shows no progress for ``stallMinutes``, and a Claude Code that died.

A running turn with no progress event (``progress/<channel>.jsonl``: a tool starting or
ending, streamed text) for ``stallMinutes`` (10 by default; fractions allowed) gets one notice:
"Still working? Last: Bash `npm test`, 12 min ago" with **Peek** (the screen, ephemeral),
**⏹ Interrupt** (the status message's own button) and **Keep waiting** (asked again only after
another quiet ``stallMinutes``). A turn that waits for the owner is not stalled: a Discord
prompt of the session open (permission, question, plan), a Claude Code screen offered on
Discord, or a dialog on the screen (no input box) has its own message and reminder.

A session whose Claude Code exited mid-turn (pane gone or dead) is said at once, with
**Restart and resume** (the conversation is resumed, as ``/resume`` does).

The watch runs in the bot on the progress reporter's view of each turn (``bot/turn/progress.py``);
every time it reads is ``clock()``, so tests drive it in seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import discord

from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem
from bridge.bot.turn.interrupt_button import InterruptButton
from bridge.discord import custom_ids
from bridge.sessions import pane_ops
from bridge.sessions.manager import SessionManager
from bridge.sessions.start_failed import ClaudeDidNotStart
from bridge.state import decisions, held_messages, runtime
from bridge.tmux import TmuxError

if TYPE_CHECKING:
    from bridge.bot.turn.progress import ProgressReporter
    from bridge.discord.render.turn_status import TurnProgress

log = logging.getLogger(__name__)

CHECK_EVERY = 1.0  # seconds between looks at the running turns
PEEK_LINES = 40


def died_text(agent: str) -> str:
    """The dead-session notice, naming the session's agent (``Agent.label``)."""
    return f"💀 **{agent} exited** in this session during a turn; nothing is running here now."


def register(bot: BridgeClient) -> None:
    bot.add_dynamic_items(StallButton)


class StallButton(BridgeItem[discord.ui.Button], template=custom_ids.STALL_TEMPLATE):
    """**Peek**, **Keep waiting** or **Restart and resume** on a stall notice."""

    def __init__(self, action: str, key: str) -> None:
        label, emoji, style = BUTTONS[action]
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label, emoji=emoji, style=style, custom_id=custom_ids.stall(action, key)
        )
        super().__init__(button)
        self.action, self.key = action, key

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.client.stalls.on_click(interaction, self.action, self.key)


BUTTONS = {
    "peek": ("Peek", "👀", discord.ButtonStyle.secondary),
    "wait": ("Keep waiting", "⏳", discord.ButtonStyle.secondary),
    "restart": ("Restart and resume", "🔁", discord.ButtonStyle.primary),
}


def stall_view(key: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(StallButton("peek", key))
    view.add_item(InterruptButton(key))
    view.add_item(StallButton("wait", key))
    return view


def died_view(key: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(StallButton("restart", key))
    return view


def stall_text(turn: TurnProgress, quiet_since: float, now: float) -> str:
    """ "Still working? Last: Bash `npm test`, 12 min ago" (what the turn did last)."""
    if turn.tool is not None:
        name, summary, _ = turn.tool
        shown = summary.replace("`", "'")[:120]
        last = f"{name} `{shown}`" if shown else name
        if turn.tool_running:
            last += " (still running)"
    elif turn.text.strip():
        last = "writing its answer"
    else:
        last = "thinking"
    return f"🐢 **Still working?** Last: {last}, {_ago(now - quiet_since)} ago."


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class StallWatch:
    """Notices for the stalled turns and dead sessions of one bot."""

    def __init__(
        self,
        bot: discord.Client,
        sessions: SessionManager,
        rt: runtime.Runtime,
        progress: ProgressReporter,
        stall_minutes: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.bot = bot
        self.sessions = sessions
        self.runtime = rt
        self.progress = progress
        self.stall_seconds = stall_minutes * 60
        self.clock = clock
        self.noticed: dict[str, float] = {}  # key → the quiet period a notice was posted for
        self.waited: dict[str, float] = {}  # key → Keep waiting clicked at

    async def run(self) -> None:
        while True:
            await asyncio.sleep(CHECK_EVERY)
            try:
                await self.check()
            except Exception:
                log.exception("stall check failed")

    async def check(self) -> None:
        now = self.clock()
        for key, turn, last_event in self.progress.running_turns():
            quiet_since = max(last_event, self.waited.get(key, 0.0))
            if now - quiet_since < self.stall_seconds or self.noticed.get(key) == quiet_since:
                continue
            if await self._waiting_for_owner(key, turn):
                continue
            self.noticed[key] = quiet_since
            await self._post(key, stall_text(turn, last_event, now), stall_view(key))
            log.info(
                "%s: no progress for %.0f s, asked whether it still works", key, now - last_event
            )

    async def _waiting_for_owner(self, key: str, turn: TurnProgress) -> bool:
        """A prompt, an offered screen or a dialog waits for the owner: not a stall."""
        if turn.waiting or any(
            p.channel_id == key
            for p in await asyncio.to_thread(decisions.open_prompts, self.runtime)
        ):
            return True
        held = await asyncio.to_thread(held_messages.load, self.runtime, key)
        if held.get("prompt_message_id"):
            return True
        pane = await self.sessions.live_pane(key)
        if pane is None:
            return True  # the dead-session notice says it
        try:
            screen = await asyncio.to_thread(self.sessions.tmux.capture, pane)
        except TmuxError:
            return True
        return self.sessions.agent_of(key).screen.input_box(screen) is None  # a dialog is up

    async def session_died(self, key: str) -> None:
        """The session of a running turn is gone: say so at once, offer a restart."""
        self.noticed.pop(key, None)
        await self._post(key, died_text(self.sessions.agent_of(key).label), died_view(key))

    async def _post(self, key: str, content: str, view: discord.ui.View) -> None:
        try:
            await self.bot.get_partial_messageable(int(key)).send(content, view=view)
        except discord.HTTPException as err:
            log.warning("could not post a stall notice in %s: %s", key, err)

    # --- clicks -----------------------------------------------------------------------------

    async def on_click(self, interaction: BotInteraction, action: str, key: str) -> None:
        if action == "wait":
            self.waited[key] = self.clock()
            minutes = self.stall_seconds / 60
            await interaction.response.edit_message(
                content=f"🐢 Keeping waiting: asked again after {minutes:g} more quiet min.",
                view=None,
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        if action == "peek":
            pane = await self.sessions.live_pane(key)
            text = (
                await asyncio.to_thread(pane_ops.peek, self.sessions.tmux, pane, PEEK_LINES)
                if pane
                else f"{self.sessions.agent_of(key).label} is not running here."
            )
            await interaction.followup.send(f"```\n{text[-1900:]}\n```", ephemeral=True)
            return
        await self._restart(interaction, key)

    async def _restart(self, interaction: BotInteraction, key: str) -> None:
        target = self.sessions.target_for_key(key)
        if target is None:
            await interaction.followup.send("This channel has no session any more.", ephemeral=True)
            return
        async with self.sessions.lock(key):
            if await self.sessions.live_pane(key) is not None:
                answer = "It is running again already."
            else:
                try:
                    pane = await self.sessions.ensure_running(target)
                    answer = f"🔁 Restarted in `{pane}`; the conversation was resumed."
                except ClaudeDidNotStart as err:
                    agent = self.sessions.agent_of(key).label
                    answer = err.discord_text(f"⚠️ {agent} did not start")
        await interaction.followup.send(answer, ephemeral=True)
        if answer.startswith("🔁") and interaction.message is not None:
            try:
                died = died_text(self.sessions.agent_of(key).label)
                await interaction.message.edit(content=f"{died}\n{answer}", view=None)
            except discord.HTTPException as err:
                log.warning("could not close the notice in %s: %s", key, err)
