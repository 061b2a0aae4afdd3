"""One live status message per turn, edited in place, with an ⏹ Interrupt button.

Hooks append progress events to ``progress/<channel>.jsonl`` (``bridge/handlers/progress.py``
writes them, ``bridge/state/progress_log.py`` keeps the file); this module watches that folder,
folds each channel's events into a ``TurnProgress`` (``bridge/discord/render/turn_status.py``)
and edits the turn's status message at most once per ``MIN_EDIT_INTERVAL`` however fast Claude
streams. A turn that ends within ``STATUS_AFTER`` seconds never gets a status message (its
reply is all the user needs). An interrupt produces no Stop: the bridge's own ⏹ closes the
message at once, and an Escape or terminal "No" is seen in the transcript. The record of the
message still open, closed by a restarted bot, is ``bot/turn/open_status.py``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from bridge.agents import Agent, agent_for
from bridge.bot import metrics
from bridge.bot.client import BotInteraction
from bridge.bot.turn.interrupt_button import interrupt_view
from bridge.bot.turn.limit_on_screen import ended_at_limit
from bridge.bot.turn.open_status import close_messages_left_open, remember_open
from bridge.bot.turn.queue import PromptQueue, queue_lines
from bridge.bot.turn.taken_back import silent_end
from bridge.claude import transcript
from bridge.discord.render.turn_status import TurnProgress, turn_cost
from bridge.sessions import pane_ops
from bridge.state import decisions, progress_log, queued_prompts, runtime, status_cache
from bridge.tmux import TmuxError

log = logging.getLogger(__name__)

MIN_EDIT_INTERVAL = 1.5  # seconds between two edits of one status message
STATUS_AFTER = 2.0  # a turn shorter than this gets no status message
TICK = 1.0  # seconds between checks for interrupts and elapsed-time refreshes
PANE_CHECK_TICKS = 5  # every 5 s: is the session of an open turn still running?
ELAPSED_REFRESH = 5.0  # refresh the shown elapsed time this often while nothing else changes
ROTATE_BYTES = 64 * 1024
# seconds after a turn's end in which its events, not the screen, say it is over (on a busy
# machine Claude Code's screen showed the ended turn running for ~0.5 s after the Stop hook)
SCREEN_LAG = 5.0
COST_WAIT = 6.0  # seconds to wait after Stop for the statusLine's figures of the last reply


class _Status:
    """One turn and its status message. A turn keeps its own message and writer, so a turn
    that ends just as the next one starts still gets its message closed."""

    def __init__(self, turn: TurnProgress) -> None:
        self.turn = turn
        self.message: discord.PartialMessage | discord.Message | None = None
        self.last_shown = ""
        self.dirty = asyncio.Event()
        self.writer: asyncio.Task | None = None
        self.end_told = False  # the queue heard that this turn ended


class _Channel:
    """The status of one channel or thread: its current turn and its message."""

    def __init__(self, key: str, offset: int) -> None:
        self.key = key
        self.offset = offset
        self.status: _Status | None = None
        self.last_edit = 0.0
        self.transcript_offset: int | None = None  # where the turn's interrupts are looked for
        self.last_event = time.time()  # when the turn last showed progress (bot/turn/stalls.py)
        self.ended_prompt: str | None = None  # Claude Code's prompt_id of the turn last ended
        self.project = "other"  # the project its turns are counted under (bot/metrics.py)

    @property
    def turn(self) -> TurnProgress | None:
        return self.status.turn if self.status else None


def _late_text(channel: _Channel, event: dict) -> bool:
    """A text record of the turn that just ended (its MessageDisplay hook can land after the
    Stop hook's "done", seen in CI on a busy machine) must not start a turn that never ends."""
    prompt = event.get("prompt")
    return event.get("kind") == "text" and prompt is not None and prompt == channel.ended_prompt


class ProgressReporter:
    """Status messages for the sessions of one configured server."""

    def __init__(self, bot: discord.Client, server_name: str, rt: runtime.Runtime) -> None:
        self.bot = bot
        self.server_name = server_name
        self.runtime = rt
        self.channels: dict[str, _Channel] = {}
        self._stop = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()  # waiting for a turn's cost
        self.queue: PromptQueue | None = None  # prompts typed when a turn ends (bot/turn/queue.py)
        self.on_died: Callable[[str], Awaitable[None]] | None = None  # a session died mid-turn

    # --- watching ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Watch the progress folder until :meth:`stop`; an error is logged and watching
        starts again, so one bad file never silences every status message."""
        self._skip_old_events()
        await close_messages_left_open(self.bot, self.runtime, self.server_name)
        ticker = asyncio.create_task(self._tick())
        try:
            while not self._stop.is_set():
                try:
                    await self._watch()
                except Exception:
                    log.exception("progress watcher failed; watching again")
                    await asyncio.sleep(1.0)
        finally:
            ticker.cancel()

    def _skip_old_events(self) -> None:
        """Events from before this bot started are stale: their turns are long over."""
        for name in os.listdir(self.runtime.progress):
            if name.endswith(".jsonl") and name[:-6].isdigit():
                key = name[: -len(".jsonl")]
                self.channels[key] = _Channel(key, transcript.size(self._path(key)))  # its length

    def _remember_open(self, key: str, message_id: int | None) -> None:
        remember_open(self.runtime, self.server_name, key, message_id)

    async def _watch(self) -> None:
        import watchfiles

        async for changes in watchfiles.awatch(
            self.runtime.progress, stop_event=self._stop, debounce=100, step=20
        ):
            for _, path in changes:
                name = os.path.basename(path)
                if name.endswith(".jsonl") and name[:-6].isdigit():
                    self._feed(name[:-6])

    def stop(self) -> None:
        self._stop.set()

    def _path(self, key: str) -> str:
        return os.path.join(self.runtime.progress, f"{key}.jsonl")

    def _feed(self, key: str) -> None:
        channel = self.channels.setdefault(key, _Channel(key, 0))
        events, channel.offset = progress_log.read_events(self._path(key), channel.offset)
        for event in events:
            if event.get("server") == self.server_name:
                self._apply(channel, event)

    def _apply(self, channel: _Channel, event: dict) -> None:
        turn, kind = channel.turn, event.get("kind")
        channel.last_event = time.time()
        if kind in ("done", "failed") and event.get("prompt"):  # seen even with no turn open
            channel.ended_prompt = event["prompt"]  # (a bot started mid-turn)
        if turn is None or turn.outcome:
            if kind not in ("turn", "tool", "text") or _late_text(channel, event):
                return
            turn = TurnProgress(float(event["t"]))
            channel.status, channel.transcript_offset = _Status(turn), None
            if self.queue is not None:
                self.queue.turn_started(channel.key)
        elif kind == "turn":  # a message queued mid-turn joins the running turn
            return
        was_open = not turn.outcome
        turn.apply(event)
        if was_open and turn.outcome:
            channel.project = metrics.count_turn(self.bot, event.get("project"), turn.outcome)
        if channel.transcript_offset is None and turn.transcript:
            channel.transcript_offset = transcript.size(turn.transcript)  # only what comes now
        if event.get("kind") == "tool" and not turn.from_display:
            agent = self._agent(channel.key)
            turn.show_transcript_text(agent.last_assistant_text(turn.transcript))
        if event.get("kind") == "done" and turn.cost is None:
            task = asyncio.create_task(self._settle_cost(channel, turn, float(event["t"])))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self._changed(channel)

    def _agent(self, key: str) -> Agent:
        """The agent of ``key``'s session (its transcript's format)."""
        sessions: Any = getattr(self.bot, "sessions", None)
        return sessions.agent_of(key) if sessions is not None else agent_for(None)

    async def _settle_cost(self, channel: _Channel, turn: TurnProgress, ended: float) -> None:
        """The turn's cost: Claude Code refreshes its statusLine after the last reply, often
        after Stop; wait (at most ``COST_WAIT``) for that refresh, then show the figure."""
        if turn.session is None:
            return
        path = status_cache.status_path(self.runtime, turn.session)
        deadline = time.monotonic() + COST_WAIT
        while time.monotonic() < deadline:
            try:
                if os.stat(path).st_mtime >= ended:
                    break
            except OSError:
                pass
            await asyncio.sleep(0.25)
        record = await asyncio.to_thread(status_cache.read_status, self.runtime, turn.session)
        cost = turn_cost(turn.cost0, (record or {}).get("cost_usd"))
        metrics.TURN_COST.labels(channel.project).inc(max(cost or 0.0, 0.0))
        if cost is not None and channel.turn is turn:
            turn.cost = cost
            self._changed(channel)

    async def _tick(self) -> None:
        ticks = 0
        while True:
            await asyncio.sleep(TICK)
            ticks += 1
            try:
                self._check_active_turns()
                if ticks % PANE_CHECK_TICKS == 0:
                    await self._close_turns_of_gone_sessions()
            except Exception:  # one bad file must not stop every status message
                log.exception("progress tick failed")

    def _active_turns(self) -> list[tuple[_Channel, TurnProgress]]:
        """Each channel whose turn has not ended yet, with that turn."""
        return [(c, turn) for c in self.channels.values() if (turn := c.turn) and not turn.outcome]

    async def _close_turns_of_gone_sessions(self) -> None:
        """A turn no Stop will end (``taken_back.silent_end``, a usage limit on the agent's
        screen: ``limit_on_screen``): close its status."""
        sessions: Any = getattr(self.bot, "sessions", None)
        for channel, turn in self._active_turns() if sessions is not None else ():
            if await ended_at_limit(sessions, self.runtime, self.server_name, channel.key, turn):
                self._changed(channel)
                continue
            outcome = await silent_end(sessions, channel.key, turn, channel.transcript_offset)
            if outcome is not None and self.turn_running(channel.key) and channel.turn is turn:
                turn.finish(outcome, time.time())
                self._changed(channel)
                if outcome == "ended" and self.on_died is not None:
                    await self.on_died(channel.key)

    def _check_active_turns(self) -> None:
        """Open prompts, interrupts seen in the transcript, and the elapsed time."""
        active = self._active_turns()
        if not active:
            return
        asking = {p.channel_id for p in decisions.open_prompts(self.runtime)}
        for channel, turn in active:
            if turn.waiting != (channel.key in asking):
                turn.waiting = channel.key in asking
                self._changed(channel)
            elif self._interrupted_in_transcript(channel):
                turn.finish("interrupted", time.time())
                self._changed(channel)
            elif time.monotonic() - channel.last_edit >= ELAPSED_REFRESH:
                self._changed(channel)

    def _interrupted_in_transcript(self, channel: _Channel) -> bool:
        path = channel.turn.transcript if channel.turn else None
        if channel.transcript_offset is None:
            return False
        return transcript.interrupted_since(path, channel.transcript_offset)

    # --- showing ----------------------------------------------------------------------------

    def refresh(self, key: str) -> None:
        """Show the running turn's status again (its queue changed)."""
        channel = self.channels.get(key)
        if channel is not None and channel.turn is not None and not channel.turn.outcome:
            self._changed(channel)

    def end_turn(self, key: str, outcome: str) -> None:
        """Close ``key``'s running turn: its session is stopped on purpose (no Stop comes)."""
        channel = self.channels.get(key)
        if channel is not None and channel.turn is not None and not channel.turn.outcome:
            channel.turn.finish(outcome, time.time())
            self._changed(channel)

    def running_turns(self) -> list[tuple[str, TurnProgress, float]]:
        """Each running turn: its channel, the turn, when it last showed progress."""
        return [(c.key, turn, c.last_event) for c, turn in self._active_turns()]

    def turn_running(self, key: str) -> bool | None:
        """Whether a turn of ``key`` runs, as its events say, read up to now (the watcher
        hands them over ≥ 100 ms late: its debounce, seconds on a busy machine): True while
        one runs; False for a while after one ended, when the screen may still show it
        running (Claude Code redraws after its Stop hook has exited; a message sent right
        after the reply must not be taken for one into a running turn); None: the events
        do not say (no turn seen, or it ended long ago): look at the screen."""
        if os.path.exists(self._path(key)):
            self._feed(key)
        channel = self.channels.get(key)
        turn = channel.turn if channel else None
        if turn is None:
            return None
        if not turn.outcome:
            return True
        return False if turn.ended and time.time() - turn.ended < SCREEN_LAG else None

    def _changed(self, channel: _Channel) -> None:
        status = channel.status
        if status is None:
            return
        if status.turn.outcome and not status.end_told:
            status.end_told = True
            # an API error ends a turn as Stop does (a usage limit or a budget stop holds the
            # queue: the hook records that hold before the turn's end, PromptQueue.held)
            if self.queue is not None and status.turn.outcome in ("done", "interrupted", "failed"):
                self.queue.turn_ended(channel.key)
        status.dirty.set()
        if status.writer is None or status.writer.done():
            status.writer = asyncio.create_task(self._write(channel, status))

    async def _write(self, channel: _Channel, status: _Status) -> None:
        """Coalesce changes: one edit per MIN_EDIT_INTERVAL, the latest state wins."""
        turn = status.turn
        while status.dirty.is_set():
            wait = max(
                channel.last_edit + MIN_EDIT_INTERVAL - time.monotonic(),
                0 if status.message or turn.outcome else turn.started + STATUS_AFTER - time.time(),
            )
            if wait > 0:
                await asyncio.sleep(wait)
            status.dirty.clear()
            try:
                await self._show(channel, status)
            except discord.HTTPException as err:
                log.warning("status message in %s: %s", channel.key, err)
            if turn.outcome and channel.status is status:
                self._rotate(channel)

    async def _show(self, channel: _Channel, status: _Status) -> None:
        turn = status.turn
        content = turn.render(time.time())
        queued = queued_prompts.entries(self.runtime, channel.key) if not turn.outcome else []
        if queued:
            content = "\n".join([content, *queue_lines(queued)])[:2000]
        if content == status.last_shown:
            return
        view = (
            interrupt_view(channel.key, queued) if not turn.outcome else _closed_view(channel, turn)
        )
        if status.message is None:
            on_reply = bool((turn.changes or {}).get("on_reply", True))
            if turn.outcome and turn.outcome != "failed" and (view is None or on_reply):
                return  # ended before a status was worth showing: the reply says it all
            target = self.bot.get_partial_messageable(int(channel.key))
            sent = target.send(content, view=view) if view is not None else target.send(content)
            status.message = await sent
            if not turn.outcome:
                self._remember_open(channel.key, status.message.id)
        else:
            await status.message.edit(content=content, view=view)
            if turn.outcome:
                self._remember_open(channel.key, None)
        channel.last_edit, status.last_shown = time.monotonic(), content

    def _rotate(self, channel: _Channel) -> None:
        """Start the channel's event file afresh between turns once it has grown."""
        path = self._path(channel.key)
        try:
            if os.path.getsize(path) < ROTATE_BYTES:
                return
            os.rename(path, path + ".old")
            self._feed_old(channel, path + ".old")
        except OSError as err:
            log.warning("could not rotate %s: %s", path, err)

    def _feed_old(self, channel: _Channel, old: str) -> None:
        events, _ = progress_log.read_events(old, channel.offset)
        channel.offset = 0
        os.unlink(old)
        for event in events:
            if event.get("server") == self.server_name:
                self._apply(channel, event)

    # --- the ⏹ button -----------------------------------------------------------------------

    async def interrupt(self, interaction: BotInteraction, key: str) -> None:
        channel = self.channels.get(key)
        status = channel.status if channel else None
        if channel is None or status is None or status.turn.outcome:
            await interaction.response.send_message(
                "Claude is not working on a turn here.", ephemeral=True
            )
            return
        # Only through the key gate and while Claude Code shows its input box: in a dialog
        # (permission, question, plan) Escape would answer it ("No"). The gate may wait up to
        # a few seconds (a tool call just started), so the click is acknowledged first.
        await interaction.response.defer()
        sessions = interaction.client.sessions
        pane = await sessions.live_pane(key)
        keys = sessions.keys(key, pane) if pane is not None else None
        if keys is not None:
            try:
                await asyncio.to_thread(keys.require_input_box, "the interrupt (Escape)")
            except TmuxError as err:
                await interaction.followup.send(f"⚠️ {err}", ephemeral=True)
                return
        if status.turn.outcome:  # the turn ended while the gate waited
            return
        turn = status.turn
        turn.finish("interrupted", time.time(), str(interaction.user.id))
        content = turn.render(time.time())
        await interaction.edit_original_response(content=content, view=None)
        clicked = getattr(interaction.message, "id", None)
        if status.message is not None and clicked == status.message.id:
            status.last_shown, channel.last_edit = content, time.monotonic()
            self._remember_open(key, None)
        else:
            self._changed(channel)  # the button was on an older message: close this one too
        if keys is not None:
            try:  # the gate and the screen are read again right before the key
                await asyncio.to_thread(pane_ops.interrupt, keys)
            except TmuxError as err:
                log.warning("did not interrupt %s: %s", key, err)
                await interaction.followup.send(f"⚠️ {err}", ephemeral=True)
                return
        log.info("interrupted %s for %s", key, interaction.user.id)


def _closed_view(channel: _Channel, turn: TurnProgress) -> discord.ui.View | None:
    """A closed status message keeps a **Diff** button when the turn changed files."""
    if turn.outcome != "done" or not turn.changes or not turn.changes.get("old"):
        return None
    from bridge.bot.changes.diff import diff_view

    return diff_view(channel.key, turn.changes)
