"""Scheduled prompts run: at their time, into an idle session, typed as the owner's message.

The runner (:meth:`Scheduler.run`, one task per bot) sleeps until the soonest entry of
``bridge/state/schedules.py`` is due (at most :data:`MAX_SLEEP`, so a suspended machine's
wall clock is read again soon after it wakes; a change wakes it at once), then fires every
due entry in a task of its own:

1. the session's channel or thread must still be a project's (else it is skipped, logged);
2. a session at its usage limit or over its budget is skipped with a note
   (:func:`limit_reason`: the seam of the limits and budget feature);
3. a stopped session is started if the entry says so (``start``), else skipped with a note;
4. a note in the channel says what is being typed (and, for an entry due while no bot ran,
   that it was missed: it runs once now, however many times it was missed);
5. it waits until the session is idle (:meth:`Scheduler.wait_behind_turn`: no turn running,
   no prompt or screen waiting for the owner), then types the prompt through the same path as
   a Discord message (``SessionManager.type_prompt``: the input box only, every key through
   the key gate) and puts ✅ on the note.

Then the entry moves on: a one-off is removed, a repeating one gets its next run after now.
An entry is advanced only once it was typed or skipped, so a bot stopped while one waits for
its turn runs it at the next start, as missed. ``clock`` is injectable (tests choose "now").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import discord

from bridge import schedule_times
from bridge.bot.relay import DELIVERED, defuse_prefix
from bridge.claude.hook_table import PROMPT_TIMEOUT_MARGIN
from bridge.claude.screen import input_box, is_busy
from bridge.sessions.manager import SessionManager
from bridge.sessions.targets import SessionTarget
from bridge.state import away, decisions, held_messages, runtime, schedules
from bridge.state.schedules import Schedule

log = logging.getLogger(__name__)

MAX_SLEEP = 30.0  # seconds between looks at the wall clock, whatever is due
IDLE_POLL = 1.0  # seconds between looks at a busy session while an entry waits for it
EXCERPT = 300  # characters of the prompt quoted in the channel's note


class Skipped(Exception):
    """The entry does not run this time; the text says why (posted in the channel)."""


def at_usage_limit(rt: runtime.Runtime, key: str) -> bool:
    """True while session ``key`` waits for its usage limit to reset (``away/limit-<key>``,
    ``bot/away.py``)."""
    try:
        return (away.load(rt, "limit", key) or {}).get("state") == "waiting"
    except ValueError:
        return False


def over_budget(rt: runtime.Runtime, key: str) -> bool:
    """True while session ``key`` is stopped at its spend budget and the owner has not said
    **Continue** or **Stop** yet (``away/budget-<key>``, ``bot/away.py``)."""
    try:
        return away.exists(rt, "budget", key)
    except ValueError:
        return False


def limit_reason(rt: runtime.Runtime, key: str) -> str | None:
    """Why a scheduled prompt must not run in session ``key`` now, or None."""
    if at_usage_limit(rt, key):
        return "the session is at its usage limit"
    if over_budget(rt, key):
        return "the session is over its budget"
    return None


def is_idle(sessions: SessionManager, key: str, pane_id: str) -> bool:
    """No turn running (none just typed, no spinner), the input box on screen, nothing
    waiting for the owner (a permission prompt or question whose hook runs, messages held
    behind a screen)."""
    rt = sessions.runtime
    if sessions.awaiting_turn(key) or decisions.asking(rt, key, PROMPT_TIMEOUT_MARGIN):
        return False
    if held_messages.load(rt, key)["messages"]:
        return False
    screen = sessions.tmux.capture(pane_id)
    return not is_busy(screen) and input_box(screen) is not None


class Scheduler:
    """The scheduled prompts of one bot (its server's entries)."""

    def __init__(
        self,
        client: discord.Client,
        sessions: SessionManager,
        clock: Callable[[], float] = time.time,
        idle_poll: float = IDLE_POLL,
    ) -> None:
        self.client = client
        self.sessions = sessions
        self.runtime = sessions.runtime
        self.server = sessions.server.name
        self.clock = clock
        self.idle_poll = idle_poll
        self.started_at = clock()  # an entry due before this was missed while no bot ran
        self.on_change: Callable[[], None] = lambda: None  # the panel refreshes
        self._wake = asyncio.Event()
        self._firing: dict[str, asyncio.Task] = {}

    # --- what commands and buttons reach ---------------------------------------------

    def entries(self) -> list[Schedule]:
        return schedules.all_entries(self.runtime, self.server)

    def changed(self) -> None:
        """Entries changed on disk: look again now, and show it on the panel."""
        self._wake.set()
        self.on_change()

    def run_now(self, entry: Schedule) -> bool:
        """**Run now**: fire ``entry`` at once (its times stay as they are); False if it is
        already running."""
        return self._fire(entry, manual=True)

    def waiting(self, schedule_id: str) -> bool:
        return schedule_id in self._firing

    # --- the runner ------------------------------------------------------------------

    async def run(self) -> None:
        while True:
            try:
                delay = await self.tick()
            except Exception:
                log.exception("scheduled prompts: could not look at the schedule")
                delay = MAX_SLEEP
            try:
                await asyncio.wait_for(self._wake.wait(), delay)
            except TimeoutError:
                pass
            self._wake.clear()

    async def tick(self) -> float:
        """Fire what is due; seconds until the next look."""
        now = self.clock()
        soonest = now + MAX_SLEEP
        for entry in await asyncio.to_thread(self.entries):
            if entry.paused or entry.next_run is None or entry.id in self._firing:
                continue
            if entry.next_run <= now:
                missed = 0
                if entry.next_run < self.started_at:
                    missed = schedule_times.runs_between(entry.rule, entry.next_run, now)
                self._fire(entry, missed=missed)
            else:
                soonest = min(soonest, entry.next_run)
        return max(0.05, soonest - now)

    def _fire(self, entry: Schedule, missed: int = 0, manual: bool = False) -> bool:
        if entry.id in self._firing:
            return False
        task = asyncio.create_task(self._run_entry(entry, missed, manual))
        self._firing[entry.id] = task
        return True

    async def _run_entry(self, entry: Schedule, missed: int, manual: bool) -> None:
        try:
            result = await self._deliver(entry, missed, manual)
        except Skipped as why:
            result = f"skipped: {why}"
            await self._say(entry.key, f"⏭ Scheduled prompt `{entry.id}` skipped: {why}."
                            + self._next_words(entry, manual))  # fmt: skip
        except Exception as err:
            log.exception("scheduled prompt %s failed", entry.id)
            result = f"failed: {_short(err)}"
            await self._say(entry.key, f"⚠️ Scheduled prompt `{entry.id}` not typed: "
                            f"{_short(err)}." + self._next_words(entry, manual))  # fmt: skip
        finally:
            self._firing.pop(entry.id, None)
        await asyncio.to_thread(self._advance, entry.id, result, manual)
        self.changed()

    async def _deliver(self, entry: Schedule, missed: int, manual: bool) -> str:
        target = self.sessions.target_for_key(entry.key)
        if target is None:
            log.warning("scheduled prompt %s: channel %s is no project's", entry.id, entry.key)
            return "skipped: the channel is no longer a project's"
        reason = limit_reason(self.runtime, entry.key)
        if reason:
            raise Skipped(reason)
        if not entry.start and await self.sessions.live_pane(entry.key) is None:
            raise Skipped(
                "the session is stopped, and this schedule does not start it (`/start` it, "
                "or schedule with `start: True`)"
            )
        note = await self._say(entry.key, self._note(entry, missed, manual))
        typed = await self.wait_behind_turn(entry, target, manual)
        if not typed:
            return "cancelled"
        if note is not None:
            try:
                await note.add_reaction(DELIVERED)
            except discord.HTTPException as err:
                log.warning("could not react to the note of %s: %s", entry.id, err)
        log.info("typed scheduled prompt %s into %s", entry.id, target.label)
        return "typed"

    async def wait_behind_turn(self, entry: Schedule, target: SessionTarget, manual: bool) -> bool:
        """Type the entry's prompt once the session is idle (started first if the entry says
        so). False if the entry was deleted or paused meanwhile.

        SEAM(away-queue): until messages can queue behind a turn, this polls the session
        every ``idle_poll`` seconds; with the queue, the prompt joins it instead (in order
        with the owner's queued messages) and this returns once it is typed.
        """
        key = target.key
        text = defuse_prefix(entry.prompt)
        await self.sessions.register_thread(target)
        while True:
            current = await asyncio.to_thread(schedules.load, self.runtime, entry.id)
            if current is None or (current.paused and not manual):
                return False
            reason = limit_reason(self.runtime, key)  # a limit reached by the turn it waited for
            if reason:
                raise Skipped(reason)
            async with self.sessions.lock(key):
                if self.sessions.target_for_key(key) is None:  # its project removed meanwhile
                    raise Skipped("the channel is no longer a project's")
                pane_id = await self.sessions.live_pane(key)
                if pane_id is None:
                    if not entry.start:
                        raise Skipped("the session stopped before it was idle")
                    pane_id = await self.sessions.ensure_running(target)
                if await asyncio.to_thread(is_idle, self.sessions, key, pane_id):
                    await self.sessions.type_prompt(key, pane_id, text)
                    await asyncio.to_thread(self.sessions.touch, key)
                    return True
            await asyncio.sleep(self.idle_poll)

    def _advance(self, schedule_id: str, result: str, manual: bool) -> None:
        """After a run: a one-off is done (removed); a repeating entry's next run is the
        first after now (a manual run leaves it as it was)."""
        entry = schedules.load(self.runtime, schedule_id)
        if entry is None:
            return  # deleted meanwhile
        now = self.clock()
        entry.last_run, entry.last_result = now, result
        if entry.once:
            schedules.remove(self.runtime, schedule_id)
            return
        if not manual or entry.next_run is None:
            entry.next_run = schedule_times.next_run(entry.rule, max(now, entry.next_run or now))
        schedules.save(self.runtime, entry)

    # --- what the channel is told ----------------------------------------------------

    def _note(self, entry: Schedule, missed: int, manual: bool) -> str:
        now = self.clock()
        rule = schedule_times.describe(entry.rule, now)
        if manual:
            lead = f"⏰ Scheduled prompt `{entry.id}` · {rule} · run now by hand:"
        elif missed:
            due = schedule_times.show_moment(entry.next_run or now, now)
            times = "" if missed == 1 else f" ({missed} runs missed)"
            lead = (
                f"⏰ Missed while the bot was off: scheduled prompt `{entry.id}` · {rule} · "
                f"was due at {due}{times}. Running it once now:"
            )
        else:
            lead = f"⏰ Scheduled prompt `{entry.id}` · {rule}:"
        prompt = entry.prompt if len(entry.prompt) <= EXCERPT else entry.prompt[:EXCERPT] + "…"
        quoted = "\n".join("> " + line for line in prompt.splitlines() or [""])
        return f"{lead}\n{quoted}"

    def _next_words(self, entry: Schedule, manual: bool) -> str:
        if entry.once and not manual:
            return ""
        now = self.clock()
        after = max(now, entry.next_run or now)
        upcoming = entry.next_run if manual else schedule_times.next_run(entry.rule, after)
        if upcoming is None:
            return ""
        return f" Next run: {schedule_times.show_moment(upcoming, now)}."

    async def _say(self, key: str, text: str) -> discord.Message | None:
        try:
            channel = self.client.get_partial_messageable(int(key))
            return await channel.send(text[:2000], allowed_mentions=discord.AllowedMentions.none())
        except discord.HTTPException as err:
            log.warning("could not post in %s: %s", key, err)
            return None


def _short(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return (lines[0] if lines else type(err).__name__)[:300]
