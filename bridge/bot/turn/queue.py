"""Messages that wait for the turn: queued while Claude works, typed when the turn ends.

A message sent while Claude works is typed at once and Claude Code folds it into the running
turn (steering). A message that starts with the queue prefix (``>>``, ``queue.prefix`` in the
config) or is sent with ``/queue`` waits instead: it is kept in the durable state dir
(``bridge/state/queued_prompts.py``) and answered with a notice (**▶ Send now**, **⏹ Interrupt
and send**, **✖ Cancel**); each time a turn of that session ends (Stop, an API error, an
interrupt) the oldest queued prompt is typed, so each is a turn of its own, in order, and the
message gets its ✅. The running turn's status message lists them. Sent while nothing runs, it
is typed at once.

After a bot restart the queue is still on disk; a session whose turn the new bot never saw
start is drained once its screen shows it idle (checked every :data:`IDLE_CHECK` seconds).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

import discord

from bridge.bot.client import BotInteraction
from bridge.bot.turn.queue_buttons import notice_view, receipt_view
from bridge.sessions import pane_ops
from bridge.sessions.manager import SessionManager
from bridge.sessions.pane_input import NoInputBox
from bridge.sessions.start_failed import ClaudeDidNotStart
from bridge.state import audit, away, queued_prompts, runtime
from bridge.tmux import TmuxError

log = logging.getLogger(__name__)

IDLE_CHECK = 3.0  # seconds between looks at sessions with a queue and no turn seen running
CANCEL_BUTTONS = 9  # ✖ buttons on a status message (Discord: 5 per row, 5 rows)
PREVIEW = 80  # characters of a queued prompt shown in lists
NOTHING_RUNS = "Nothing is running here: typed at once."


STEERED = "✅ Typed into the running turn: Claude reads it at its next step."

# What a queued prompt waits for, by what holds its session (``away.held_by``).
TYPED_WHEN = {
    "": "typed when Claude's turn ends.",
    "limit": "typed once the session goes on after its limit.",
    "budget": "typed once the budget question is answered and the session goes on.",
    "stopped": "stopped at the budget: typed after the next message you send.",
}


def preview(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW else line[: PREVIEW - 1] + "…"


class PromptQueue:
    """The queued prompts of one bot's sessions: kept, listed, typed when a turn ends."""

    def __init__(self, bot: discord.Client, sessions: SessionManager, rt: runtime.Runtime) -> None:
        self.bot = bot
        self.sessions = sessions
        self.runtime = rt
        # set by the bot: the progress reporter's view (None: it does not know, ask the screen)
        self.turn_running: Callable[[str], bool | None] = lambda key: None
        self.on_change = lambda key: None  # set by the bot: refresh the status message
        self._tasks: set[asyncio.Task] = set()
        # entry id → typed (True) or taken off the queue (False): what join()'s caller awaits
        self._outcomes: dict[str, asyncio.Future[bool]] = {}

    # --- queueing ---------------------------------------------------------------------------

    async def busy(self, key: str) -> bool:
        """A turn of the session is running (seen by its events, or on its screen), or a
        prompt was just typed and its turn has not shown yet."""
        if self.sessions.awaiting_turn(key):
            return True
        running = self.turn_running(key)
        if running is not None:
            return running
        pane = await self.sessions.live_pane(key)
        if pane is None:
            return False
        try:
            return (await asyncio.to_thread(pane_ops.glance, self.sessions.tmux, pane)).busy
        except TmuxError:
            return False

    async def must_wait(self, key: str) -> bool:
        """A prompt for ``key`` must queue: a turn runs, others wait before it, or the
        session waits at a usage limit or its spend budget."""
        if queued_prompts.entries(self.runtime, key) or await self.held(key):
            return True
        return await self.busy(key)

    async def held(self, key: str) -> bool:
        """The session waits at a usage limit or was stopped at its spend budget (bot/away/watch.py
        resumes it; the queue goes on when that turn ends)."""
        return await asyncio.to_thread(away.holds, self.runtime, key)

    async def hold(self, message: discord.Message, key: str, prompt: str) -> None:
        """Queue a Discord message's prompt and answer it with the queued notice."""
        entry = await self.add(key, prompt, "discord", str(message.id), str(message.author.id))
        notice = await _reply(message, self.notice_text(key), notice_view(key, entry["id"]))
        await self.noticed(key, entry, notice)

    async def add(
        self, key: str, prompt: str, source: str, message_id: str | None, author: str | None
    ) -> dict:
        """Queue ``prompt`` (ready to type) for ``key``; the entry."""
        entry = await asyncio.to_thread(
            queued_prompts.queue_prompt, self.runtime, key, prompt, source, message_id, author
        )
        log.info("queued a prompt (%s) for %s", source, key)
        return entry

    def notice_text(self, key: str, number: int | None = None) -> str:
        """The notice of queued prompt ``number`` (default: the last) of ``key``."""
        count = number or len(queued_prompts.entries(self.runtime, key))
        return f"⏭ Queued (#{count}): {TYPED_WHEN[away.held_by(self.runtime, key)]}"

    async def held_notices(self, key: str) -> None:
        """The session was stopped at its budget: each queued prompt's notice says what it
        waits for now (its turn has ended, so "typed when Claude's turn ends" no longer holds)."""
        channel = self.bot.get_partial_messageable(int(key))
        entries = await asyncio.to_thread(queued_prompts.entries, self.runtime, key)
        for number, entry in enumerate(entries, 1):
            if not entry.get("notice_id"):
                continue
            text = await asyncio.to_thread(self.notice_text, key, number)
            try:  # the content alone: its buttons stay (Send now still types it)
                await channel.get_partial_message(int(entry["notice_id"])).edit(content=text)
            except (discord.HTTPException, ValueError) as err:
                log.warning("queued notice of %s: %s", key, err)

    async def noticed(self, key: str, entry: dict, notice: discord.Message | None) -> None:
        """The notice of ``entry`` was posted: remember it (closed when typed or cancelled)."""
        if notice is not None:
            await asyncio.to_thread(
                queued_prompts.update, self.runtime, key, entry["id"], notice_id=str(notice.id)
            )
        self.on_change(key)
        if not await self.busy(key):  # the turn ended meanwhile, or none ran (/queue)
            self._spawn(self.type_next(key))

    async def dropped(self, key: str, entries: list[dict], text: str) -> None:
        """``entries`` were taken out of the queue of ``key`` (its project was removed): their
        notices say ``text`` and lose their buttons."""
        for entry in entries:
            await self._close(key, entry, text)
            self._settle(entry["id"], False)  # a scheduled prompt waiting on it gives up

    async def join(self, key: str, prompt: str, source: str, message_id: str | None) -> str:
        """Queue ``prompt`` behind the session's turn and what waits before it (a scheduled
        prompt), once per ``source``: an entry of that source still queued (by the bot
        before a restart) is the one waited for. Its id: :meth:`outcome` says when it goes."""
        items = await asyncio.to_thread(queued_prompts.entries, self.runtime, key)
        entry = next((e for e in items if e.get("source") == source), None)
        if entry is None:
            entry = await self.add(key, prompt, source, message_id, None)
        self.outcome(entry["id"])  # before any typing can settle it
        await self.noticed(key, entry, None)
        return entry["id"]

    def outcome(self, entry_id: str) -> asyncio.Future[bool]:
        """True once the entry is typed, False once it is taken off the queue untyped."""
        future = self._outcomes.get(entry_id)
        if future is None:
            future = self._outcomes[entry_id] = asyncio.get_running_loop().create_future()
        return future

    def forget(self, entry_id: str) -> None:
        """The caller of :meth:`join` has its answer (or gave up waiting)."""
        self._outcomes.pop(entry_id, None)

    async def withdraw(self, key: str, entry_id: str) -> None:
        """Take an entry off the queue untyped (its scheduled prompt was deleted or paused)."""
        async with self.sessions.lock(key):  # not while type_next types it
            await asyncio.to_thread(queued_prompts.remove, self.runtime, key, entry_id)
        self._settle(entry_id, False)
        self.on_change(key)

    def _settle(self, entry_id: str, typed: bool) -> None:
        future = self._outcomes.get(entry_id)  # only join()'s entries are waited for
        if future is not None and not future.done():
            future.set_result(typed)

    # --- typing -----------------------------------------------------------------------------

    def turn_ended(self, key: str) -> None:
        """A turn of ``key`` ended (Stop, an API error, interrupt): type the next queued prompt
        (``type_next`` leaves it while a usage limit or the spend budget holds the session)."""
        self.sessions.turn_shown(key)
        if queued_prompts.entries(self.runtime, key):
            self._spawn(self.type_next(key))

    def turn_started(self, key: str) -> None:
        self.sessions.turn_shown(key)

    async def run(self) -> None:
        """Drain sessions whose queue waits for a turn this bot never saw (after a restart)."""
        while True:
            await asyncio.sleep(IDLE_CHECK)
            try:
                for key in await asyncio.to_thread(queued_prompts.keys_with_entries, self.runtime):
                    if self.sessions.target_for_key(key) is None:
                        continue
                    if not await self.busy(key):
                        await self.type_next(key)
            except Exception:
                log.exception("queued prompts: idle check failed")

    async def type_next(self, key: str, entry_id: str | None = None, steer: bool = False) -> bool:
        """Type the oldest queued prompt of ``key`` (or ``entry_id``) if the session is idle
        (``steer``: into the running turn). True if one was typed."""
        target = self.sessions.target_for_key(key)
        if target is None:
            return False
        async with self.sessions.lock(key):
            if self.sessions.target_for_key(key) is None:  # its project removed meanwhile
                return False
            items = queued_prompts.entries(self.runtime, key)
            entry = next((e for e in items if entry_id in (None, e["id"])), None)
            if entry is None or (not steer and (await self.held(key) or await self.busy(key))):
                return False
            try:
                pane = await self.sessions.ensure_running(target)
                await self.sessions.type_prompt(key, pane, entry["text"])
            except (NoInputBox, ClaudeDidNotStart, TmuxError) as err:
                log.warning("queued prompt for %s not typed yet: %s", key, err)
                return False
            await asyncio.to_thread(queued_prompts.remove, self.runtime, key, entry["id"])
        self._settle(entry["id"], True)
        log.info("typed queued prompt %s into %s", entry["id"], key)
        await asyncio.to_thread(self.sessions.touch, key)
        await asyncio.to_thread(
            audit.record,
            self.runtime,
            "message",
            user=entry.get("author"),
            session=key,
            project=target.project.name,
            length=len(entry["text"]),
            source=entry.get("source"),
            text=entry["text"] if self.sessions.cfg.audit_text else None,
        )
        await self._close(key, entry, "✅ Typed (was queued).")
        self.on_change(key)
        return True

    async def _close(self, key: str, entry: dict, text: str) -> None:
        """The queued message's ✅ (when typed) and its notice closed."""
        channel = self.bot.get_partial_messageable(int(key))
        try:
            if text.startswith("✅") and entry.get("message_id"):
                await channel.get_partial_message(int(entry["message_id"])).add_reaction("✅")
            if entry.get("notice_id"):
                notice = channel.get_partial_message(int(entry["notice_id"]))
                await notice.edit(content=f"{text} {preview(entry['text'])}", view=None)
        except (discord.HTTPException, ValueError) as err:
            log.warning("queued message of %s: %s", key, err)

    # --- clicks -----------------------------------------------------------------------------

    async def on_click(
        self, interaction: BotInteraction, action: str, key: str, entry_id: str
    ) -> None:
        entry = next(
            (e for e in queued_prompts.entries(self.runtime, key) if e["id"] == entry_id), None
        )
        if entry is None:
            await interaction.response.send_message(
                "That message is no longer queued (typed or cancelled).", ephemeral=True
            )
            return
        if action == "cancel":
            await asyncio.to_thread(queued_prompts.remove, self.runtime, key, entry_id)
            await interaction.response.send_message(
                "✖ Cancelled: it will not be typed.", ephemeral=True
            )
            await self._close(key, entry, "✖ Cancelled:")
            self._settle(entry_id, False)
            self.on_change(key)
            return
        await interaction.response.defer()
        if action == "int" and await self.busy(key):
            try:
                await self._interrupt(key)
            except TmuxError as err:
                await interaction.followup.send(f"⚠️ {err}", ephemeral=True)
                return
            self.sessions.turn_shown(key)  # interrupted: nothing typed before is pending
            await self._wait_idle(key)
        if not await self.type_next(key, entry_id, steer=action == "now"):
            await interaction.followup.send("⚠️ Not typed yet: it stays queued.", ephemeral=True)

    # --- a message typed into the running turn ----------------------------------------------

    async def steered(self, message: discord.Message, key: str, prompt: str) -> None:
        """``message`` was typed into a running turn: its receipt, with the buttons that
        switch it to after the turn or interrupt the turn for it."""
        await asyncio.to_thread(
            queued_prompts.remember_steered, self.runtime, key, str(message.id), prompt
        )
        await _reply(message, STEERED, receipt_view(key, str(message.id)))

    async def on_steer_click(
        self, interaction: BotInteraction, action: str, key: str, message_id: str
    ) -> None:
        text = queued_prompts.steered_text(self.runtime, key, message_id)
        pane = await self.sessions.live_pane(key)
        if text is None or pane is None:
            await interaction.response.send_message(
                "That message is no longer in a running turn.", ephemeral=True
            )
            return
        await interaction.response.defer()
        keys = self.sessions.keys(key, pane)
        try:
            if action == "stop":
                await asyncio.to_thread(pane_ops.interrupt, keys)
                agent = self.sessions.agent_of(key).label
                await _edit(interaction, f"⏹ Turn interrupted: {agent} sends your message now.")
                return
            async with self.sessions.lock(key):
                taken = await asyncio.to_thread(pane_ops.withdraw_queued, keys, text)
        except TmuxError as err:
            log.warning("%s of message %s in %s: %s", action, message_id, key, err)
            await interaction.followup.send(f"⚠️ {err}", ephemeral=True)
            return
        log.info("message %s of %s taken back from the turn: %s", message_id, key, taken)
        if not taken:
            await interaction.followup.send(
                "Claude has already read it in this turn: nothing to move.", ephemeral=True
            )
            return
        entry = await self.add(key, text, "discord", message_id, str(interaction.user.id))
        await _edit(interaction, self.notice_text(key), notice_view(key, entry["id"]))
        notice = interaction.message
        await self.noticed(key, entry, notice)

    async def _interrupt(self, key: str) -> None:
        pane = await self.sessions.live_pane(key)
        if pane is None:
            return
        keys = self.sessions.keys(key, pane)
        await asyncio.to_thread(keys.require_input_box, "the interrupt (Escape)")
        await asyncio.to_thread(pane_ops.interrupt, keys)

    async def _wait_idle(self, key: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pane = await self.sessions.live_pane(key)
            if pane is None:
                return
            if not (await asyncio.to_thread(pane_ops.glance, self.sessions.tmux, pane)).busy:
                return
            await asyncio.sleep(0.2)

    def _spawn(self, work: Coroutine[Any, Any, object]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def panel_section(sessions: SessionManager, rt: runtime.Runtime) -> str:
    """The control panel's line: ``⏭ Queued: project-a 2 · ↳ fix-login 1``."""
    parts = []
    for key in queued_prompts.keys_with_entries(rt):
        target = sessions.target_for_key(key)
        if target is None:
            continue  # another server's session, or one no longer mapped
        name = target.thread_name or target.project.name
        prefix = "↳ " if target.thread_id else ""
        count = len(queued_prompts.entries(rt, key))
        parts.append(f"{prefix}{discord.utils.escape_markdown(name)} {count}")
    return "⏭ Queued: " + " · ".join(parts) if parts else ""


def queue_lines(items: list[dict]) -> list[str]:
    """What a status message shows of the session's queue."""
    if not items:
        return []
    return [f"⏭ Queued, typed after this turn ({len(items)}):"] + [
        f"{i}. {preview(e['text'])}" for i, e in enumerate(items, 1)
    ]


async def _edit(
    interaction: BotInteraction, text: str, view: discord.ui.View | None = None
) -> None:
    try:
        await interaction.edit_original_response(content=text, view=view)
    except discord.HTTPException as err:
        log.warning("could not edit a receipt: %s", err)


async def _reply(
    message: discord.Message, text: str, view: discord.ui.View
) -> discord.Message | None:
    try:
        return await message.reply(text, view=view, mention_author=False)
    except discord.HTTPException as err:
        log.warning("could not reply to %s: %s", message.id, err)
        return None
