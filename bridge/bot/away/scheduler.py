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
5. the prompt joins the session's queue (:meth:`Scheduler.wait_behind_turn`, ``bot/turn/queue.py``):
   behind the running turn and the owner's queued messages, in order, listed on the turn's
   status message; the queue types it when the turn before it ends (the one path that
   decides "idle", the same as a queued Discord message: the input box only, every key
   through the key gate) and puts ✅ on the note.

Then the entry moves on: a one-off is removed, a repeating one gets its next run after now.
An entry is advanced only once it was typed or skipped, so a bot stopped while one waits for
its turn runs it at the next start, as missed. ``clock`` is injectable (tests choose "now").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol

import discord

from bridge import schedule_times
from bridge.bot.prompt_text import defuse_prefix
from bridge.sessions.manager import SessionManager
from bridge.sessions.targets import SessionTarget
from bridge.state import away, runtime, schedules
from bridge.state.schedules import Schedule

log = logging.getLogger(__name__)


class Queue(Protocol):
    """What the scheduler asks of the session's queue (``bot/turn/queue.py``'s
    ``PromptQueue``, which sits in a room above this one): a seat behind the turn, word when
    the prompt is typed or taken off, and taking it off."""

    async def join(self, key: str, prompt: str, source: str, message_id: str | None) -> str: ...

    def outcome(self, entry_id: str) -> asyncio.Future[bool]: ...

    async def withdraw(self, key: str, entry_id: str) -> None: ...

    def forget(self, entry_id: str) -> None: ...


MAX_SLEEP = 30.0  # seconds between looks at the wall clock, whatever is due
IDLE_POLL = 1.0  # seconds between looks at a queued entry's schedule (deleted? paused?)
EXCERPT = 300  # characters of the prompt quoted in the channel's note


class Skipped(Exception):
    """The entry does not run this time; the text says why (posted in the channel)."""


def at_usage_limit(rt: runtime.Runtime, key: str) -> bool:
    """True while session ``key`` waits for its usage limit to reset (``away/limit-<key>``,
    ``bot/away/watch.py``)."""
    try:
        return (away.load(rt, "limit", key) or {}).get("state") == "waiting"
    except ValueError:
        return False


def over_budget(rt: runtime.Runtime, key: str) -> bool:
    """True while session ``key`` is stopped at its spend budget and the owner has not said
    **Continue** or **Stop** yet (``away/budget-<key>``, ``bot/away/watch.py``)."""
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


class Scheduler:
    """The scheduled prompts of one bot (its server's entries)."""

    def __init__(
        self,
        client: discord.Client,
        sessions: SessionManager,
        queue: Queue,
        clock: Callable[[], float] = time.time,
        idle_poll: float = IDLE_POLL,
    ) -> None:
        self.client = client
        self.sessions = sessions
        self.queue = queue  # types the prompt when the turns before it have ended
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
        # The entry counts as firing until its next run is on disk: a tick before that would
        # fire it again from the old next_run (a unit test caught the gap under load).
        try:
            result = await self._outcome(entry, missed, manual)
            await asyncio.to_thread(self._advance, entry.id, result, manual)
        finally:
            self._firing.pop(entry.id, None)
        self.changed()

    async def _outcome(self, entry: Schedule, missed: int, manual: bool) -> str:
        try:
            return await self._deliver(entry, missed, manual)
        except Skipped as why:
            await self._say(
                entry.key,
                f"⏭ Scheduled prompt `{entry.id}` skipped: {why}."
                + self._next_words(entry, manual),
            )
            return f"skipped: {why}"
        except Exception as err:
            log.exception("scheduled prompt %s failed", entry.id)
            await self._say(
                entry.key,
                f"⚠️ Scheduled prompt `{entry.id}` not typed: "
                f"{_short(err)}." + self._next_words(entry, manual),
            )
            return f"failed: {_short(err)}"

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
        typed = await self.wait_behind_turn(entry, target, manual, note)
        if not typed:
            return "cancelled"
        log.info("typed scheduled prompt %s into %s", entry.id, target.label)
        return "typed"

    async def wait_behind_turn(
        self, entry: Schedule, target: SessionTarget, manual: bool, note: discord.Message | None
    ) -> bool:
        """Queue the entry's prompt (``bot/turn/queue.py`` types it, ✅ on ``note``) and wait for
        it to be typed. False if the entry was deleted or paused meanwhile (taken off the
        queue); skipped if the session meets a limit or stops first."""
        key = target.key
        await self.sessions.register_thread(target)
        queued = await self.queue.join(
            key,
            defuse_prefix(entry.prompt),
            f"schedule:{entry.id}",
            str(note.id) if note is not None else None,
        )
        outcome = self.queue.outcome(queued)
        try:
            while not outcome.done():
                await asyncio.wait({outcome}, timeout=self.idle_poll)
                if outcome.done():
                    break
                reason = await self._withdraw_reason(entry, key, manual)
                if reason is not None:
                    await self.queue.withdraw(key, queued)
                    if reason:
                        raise Skipped(reason)
            return outcome.result()
        finally:
            self.queue.forget(queued)

    async def _withdraw_reason(self, entry: Schedule, key: str, manual: bool) -> str | None:
        """Why the queued prompt must come off the queue ("": the entry is gone or paused),
        or None while it may wait."""
        current = await asyncio.to_thread(schedules.load, self.runtime, entry.id)
        if current is None or (current.paused and not manual):
            return ""
        reason = limit_reason(self.runtime, key)  # a limit reached by the turn it waited for
        if reason:
            return reason
        if self.sessions.target_for_key(key) is None:  # its project removed meanwhile
            return "the channel is no longer a project's"
        if not entry.start and await self.sessions.live_pane(key) is None:
            return "the session stopped before it was idle"
        return None

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
