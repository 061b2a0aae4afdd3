"""The scheduler's decisions at clocks the test chooses: a prompt missed while no bot ran
runs once with a note saying how many runs were missed, a session at its usage limit is
skipped with a note (the limits feature's seam), a paused entry waits, and a repeating entry
moves on to its next run after now. Discord and tmux are stand-ins here: what reaches the
channel and the pane is recorded (tests/e2e/test_schedule.py shows it with the real CLI)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from bridge.bot.away import scheduler as scheduler_module
from bridge.bot.away.scheduler import Scheduler
from bridge.bot.turn.queue import PromptQueue
from bridge.state import queued_prompts, runtime, schedules
from bridge.state.schedules import Schedule

KEY = "123456789012345678"
IDLE_SCREEN = "────────\n❯ \n────────\n  ? for shortcuts\n"
HOUR = 3600.0
T0 = 1_800_000_000.0  # the entry's first run


class Channel:
    def __init__(self, said: list[str]) -> None:
        self.said = said

    async def send(self, text: str, **_: object) -> SimpleNamespace:
        self.said.append(text)
        return self.get_partial_message(len(self.said))

    def get_partial_message(self, message_id: int) -> SimpleNamespace:
        async def add_reaction(emoji: str) -> None:
            self.said.append(emoji)

        return SimpleNamespace(id=message_id, add_reaction=add_reaction)


class Sessions:
    def __init__(self, rt: runtime.Runtime) -> None:
        self.runtime = rt
        self.server = SimpleNamespace(name="main")
        self.cfg = SimpleNamespace(audit_text=False)
        self.typed: list[str] = []
        self.pending = False  # a prompt typed by someone else has not shown as a turn yet
        self.mapped = True  # the channel is still a project's
        self._lock = asyncio.Lock()

    def awaiting_turn(self, key: str) -> bool:
        return self.pending

    def turn_shown(self, key: str) -> None:
        self.pending = False

    def target_for_key(self, key: str) -> SimpleNamespace | None:
        if not self.mapped:
            return None
        project = SimpleNamespace(name="alpha")
        return SimpleNamespace(key=key, label="alpha", thread_id=None, project=project)

    async def live_pane(self, key: str) -> str:
        return "%1"

    async def ensure_running(self, target: object) -> str:
        return "%1"

    async def register_thread(self, target: object) -> None:
        pass

    def lock(self, key: str) -> asyncio.Lock:
        return self._lock

    async def type_prompt(self, key: str, pane_id: str, text: str) -> None:
        self.typed.append(text)
        self.pending = True  # as the real manager: a prompt just typed is a turn pending

    def touch(self, key: str) -> None:
        pass


def rig(tmp_path, now: list[float]) -> tuple[Scheduler, Sessions, list[str]]:
    """A scheduler whose prompts go through a real queue (``bot/turn/queue.py``) into stand-ins."""
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    sessions = Sessions(rt)
    said: list[str] = []
    client = SimpleNamespace(get_partial_messageable=lambda channel_id: Channel(said))
    queue = PromptQueue(client, sessions, rt)  # type: ignore[arg-type]
    queue.turn_running = lambda key: False  # no turn runs unless the test says so
    scheduler = Scheduler(client, sessions, queue, clock=lambda: now[0], idle_poll=0.01)
    return scheduler, sessions, said


def hourly(**changes: object) -> Schedule:
    fields = {
        "id": "0123abcd",
        "server": "main",
        "key": KEY,
        "prompt": "check the build",
        "rule": {"kind": "hours", "hours": 1, "anchor": T0},
        "next_run": T0,
    }
    return Schedule(**{**fields, **changes})  # type: ignore[arg-type]


# The scheduler's file writes run in worker threads: on a loaded machine (load 20 on 2 cores)
# an entry took over the 2 s these waits once allowed. They end as soon as the thing is done.
PATIENCE = 30.0


async def until(check, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


def queued(sessions: Sessions) -> list[str]:
    return [e["text"] for e in queued_prompts.entries(sessions.runtime, KEY)]


async def settle(scheduler: Scheduler) -> None:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if not scheduler._firing:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the entry never finished")


def test_runs_missed_while_no_bot_ran_are_run_once_with_a_note(tmp_path) -> None:
    now = [T0 + 2 * HOUR + 300]  # the bot starts 2 h 5 min after the first run was due
    scheduler, sessions, said = rig(tmp_path, now)
    schedules.save(sessions.runtime, hourly())

    async def scenario() -> None:
        assert await scheduler.tick() == pytest.approx(scheduler_module.MAX_SLEEP)
        await settle(scheduler)
        await until(lambda: "✅" in said, "the ✅ on the note")  # after the entry settles

    asyncio.run(scenario())
    assert sessions.typed == ["check the build"]  # once, not three times
    assert said[0].startswith("⏰ Missed while the bot was off: scheduled prompt `0123abcd`")
    assert "(3 runs missed). Running it once now:\n> check the build" in said[0]
    assert said[1] == "✅"
    after = schedules.load(sessions.runtime, "0123abcd")
    assert after is not None and after.next_run == T0 + 3 * HOUR and after.last_result == "typed"


def test_a_due_entry_runs_without_a_missed_note_and_a_later_one_is_slept_for(tmp_path) -> None:
    now = [T0 - 20]
    scheduler, sessions, said = rig(tmp_path, now)
    schedules.save(sessions.runtime, hourly())
    schedules.save(sessions.runtime, hourly(id="0123abce", next_run=T0 - 1, paused=True))

    async def scenario() -> None:
        assert await scheduler.tick() == pytest.approx(20)  # sleeps until it is due
        now[0] = T0 + 1
        await scheduler.tick()
        await settle(scheduler)

    asyncio.run(scenario())
    assert sessions.typed == ["check the build"]  # the paused one did not run
    assert said[0] == "⏰ Scheduled prompt `0123abcd` · every hour:\n> check the build"


def test_a_prompt_just_typed_by_the_owner_is_waited_behind_before_its_turn_shows(tmp_path) -> None:
    """The owner's prompt was typed a moment ago and its turn shows neither in its events nor
    on the screen yet: the scheduled prompt waits in the queue (typed into that turn, the
    model would get both as one), and goes when that turn ends, not by a look of its own."""
    now = [T0 + 1]
    scheduler, sessions, said = rig(tmp_path, now)
    scheduler.started_at = T0 - 60
    schedules.save(sessions.runtime, hourly())
    sessions.pending = True

    async def scenario() -> None:
        await scheduler.tick()
        await until(lambda: queued(sessions), "the prompt queued")
        await asyncio.sleep(0.2)  # twenty of the scheduler's looks: none types it
        assert sessions.typed == []
        assert queued(sessions) == ["check the build"]  # on the turn's status message too
        scheduler.queue.turn_ended(KEY)
        await settle(scheduler)
        # The queue reacts after it hands the outcome over: the entry may settle first (a
        # full unit run at load 22 saw the ✅ not there yet).
        await until(lambda: "✅" in said, "the ✅ on the note")

    asyncio.run(scenario())
    assert sessions.typed == ["check the build"]
    assert said[-1] == "✅"  # on the note, by the queue
    assert queued_prompts.entries(sessions.runtime, KEY) == []


def test_a_scheduled_prompt_joins_the_queue_behind_the_owners_queued_messages(tmp_path) -> None:
    now = [T0 + 1]
    scheduler, sessions, _ = rig(tmp_path, now)
    scheduler.started_at = T0 - 60
    schedules.save(sessions.runtime, hourly())
    queued_prompts.queue_prompt(sessions.runtime, KEY, "the owner's first", "discord")
    sessions.pending = True

    async def scenario() -> None:
        await scheduler.tick()
        await until(lambda: len(queued(sessions)) == 2, "the prompt queued")
        scheduler.queue.turn_ended(KEY)  # the owner's queued message is typed
        await until(lambda: sessions.typed, "the first typed")
        await asyncio.sleep(0.05)  # its turn runs: nothing more may be typed
        assert sessions.typed == ["the owner's first"]
        scheduler.queue.turn_ended(KEY)  # its turn ended: the scheduled prompt
        await settle(scheduler)

    asyncio.run(scenario())
    assert sessions.typed == ["the owner's first", "check the build"]


def test_a_deleted_entry_comes_off_the_queue_untyped(tmp_path) -> None:
    now = [T0 + 1]
    scheduler, sessions, _ = rig(tmp_path, now)
    scheduler.started_at = T0 - 60
    schedules.save(sessions.runtime, hourly(rule={"kind": "once", "at": T0}))
    sessions.pending = True

    async def scenario() -> None:
        await scheduler.tick()
        await until(lambda: queued(sessions), "the prompt queued")
        schedules.remove(sessions.runtime, "0123abcd")
        await settle(scheduler)
        scheduler.queue.turn_ended(KEY)
        await asyncio.sleep(0.05)  # a typing task would have run by now

    asyncio.run(scenario())
    assert sessions.typed == [] and queued_prompts.entries(sessions.runtime, KEY) == []


def test_an_entry_waiting_for_its_turn_types_nothing_once_its_project_is_removed(
    tmp_path,
) -> None:
    """``/project remove`` unmaps the channel, stops its session, then drops its schedules:
    an entry already queued behind the turn must not type into (or start) the session in
    between, whatever project the channel is mapped to next."""
    now = [T0 + 1]
    scheduler, sessions, said = rig(tmp_path, now)
    scheduler.started_at = T0 - 60
    schedules.save(sessions.runtime, hourly())
    scheduler.queue.turn_running = lambda key: True  # it waits behind a turn

    async def scenario() -> None:
        await scheduler.tick()
        await until(lambda: queued(sessions), "the prompt queued")
        sessions.mapped = False  # removed: its schedule file not dropped yet
        await settle(scheduler)
        scheduler.queue.turn_running = lambda key: False
        scheduler.queue.turn_ended(KEY)
        await asyncio.sleep(0.05)  # a typing task would have run by now

    asyncio.run(scenario())
    assert sessions.typed == [] and queued(sessions) == []
    skipped = "⏭ Scheduled prompt `0123abcd` skipped: the channel is no longer a project's"
    assert any(line.startswith(skipped) for line in said), said


def test_a_session_at_its_usage_limit_is_skipped_with_a_note(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(scheduler_module, "at_usage_limit", lambda rt, key: key == KEY)
    now = [T0 + 1]
    scheduler, sessions, said = rig(tmp_path, now)
    scheduler.started_at = T0 - 60  # the bot was running when it came due
    schedules.save(sessions.runtime, hourly())

    async def scenario() -> None:
        await scheduler.tick()
        await settle(scheduler)

    asyncio.run(scenario())
    assert sessions.typed == []
    assert said[0].startswith(
        "⏭ Scheduled prompt `0123abcd` skipped: the session is at its usage limit. Next run: "
    )
    after = schedules.load(sessions.runtime, "0123abcd")
    assert after is not None and after.next_run == T0 + HOUR
    assert after.last_result == "skipped: the session is at its usage limit"


def test_the_limit_seams_hold_nothing_back_until_limits_exist(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    assert scheduler_module.limit_reason(rt, KEY) is None
