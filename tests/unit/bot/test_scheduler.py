"""The scheduler's decisions at clocks the test chooses: a prompt missed while no bot ran
runs once with a note saying how many runs were missed, a session at its usage limit is
skipped with a note (the limits feature's seam), a paused entry waits, and a repeating entry
moves on to its next run after now. Discord and tmux are stand-ins here: what reaches the
channel and the pane is recorded (tests/e2e/test_schedule.py shows it with the real CLI)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from bridge.bot import scheduler as scheduler_module
from bridge.bot.scheduler import Scheduler
from bridge.state import runtime, schedules
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

        async def add_reaction(emoji: str) -> None:
            self.said.append(emoji)

        return SimpleNamespace(add_reaction=add_reaction)


class Sessions:
    def __init__(self, rt: runtime.Runtime) -> None:
        self.runtime = rt
        self.server = SimpleNamespace(name="main")
        self.tmux = SimpleNamespace(capture=lambda pane_id: IDLE_SCREEN)
        self.typed: list[str] = []
        self.pending = 0  # looks for which a prompt typed by someone else has not shown as a turn
        self.mapped = True  # the channel is still a project's
        self._lock = asyncio.Lock()

    def awaiting_turn(self, key: str) -> bool:
        self.pending = max(0, self.pending - 1)
        return self.pending > 0

    def target_for_key(self, key: str) -> SimpleNamespace | None:
        if not self.mapped:
            return None
        return SimpleNamespace(key=key, label="alpha", thread_id=None)

    async def live_pane(self, key: str) -> str:
        return "%1"

    async def register_thread(self, target: object) -> None:
        pass

    def lock(self, key: str) -> asyncio.Lock:
        return self._lock

    async def type_prompt(self, key: str, pane_id: str, text: str) -> None:
        self.typed.append(text)

    def touch(self, key: str) -> None:
        pass


def rig(tmp_path, now: list[float]) -> tuple[Scheduler, Sessions, list[str]]:
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    sessions = Sessions(rt)
    said: list[str] = []
    client = SimpleNamespace(get_partial_messageable=lambda channel_id: Channel(said))
    return Scheduler(client, sessions, clock=lambda: now[0], idle_poll=0.01), sessions, said


def hourly(**changes: object) -> Schedule:
    fields = {"id": "0123abcd", "server": "main", "key": KEY, "prompt": "check the build",
              "rule": {"kind": "hours", "hours": 1, "anchor": T0}, "next_run": T0}  # fmt: skip
    return Schedule(**{**fields, **changes})  # type: ignore[arg-type]


async def settle(scheduler: Scheduler) -> None:
    for _ in range(200):
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
    on the screen yet: the scheduled prompt waits (typed into that turn, the model would get
    both as one), then goes once the session is idle."""
    now = [T0 + 1]
    scheduler, sessions, _ = rig(tmp_path, now)
    scheduler.started_at = T0 - 60
    schedules.save(sessions.runtime, hourly())
    sessions.pending = 5

    async def scenario() -> None:
        await scheduler.tick()
        await settle(scheduler)

    asyncio.run(scenario())
    assert sessions.pending == 0 and sessions.typed == ["check the build"]  # after, not before


def test_an_entry_waiting_for_its_turn_types_nothing_once_its_project_is_removed(
    tmp_path,
) -> None:
    """``/project remove`` unmaps the channel, stops its session, then drops its schedules:
    an entry that was already waiting for the turn to end must not type into (or start) the
    session in between, whatever project the channel is mapped to next."""
    now = [T0 + 1]
    scheduler, sessions, said = rig(tmp_path, now)
    scheduler.started_at = T0 - 60
    schedules.save(sessions.runtime, hourly())
    sessions.pending = 5

    async def scenario() -> None:
        await scheduler.tick()
        await asyncio.sleep(0)  # the entry has begun to wait for the turn
        sessions.mapped = False  # removed: its file not dropped yet
        await settle(scheduler)

    asyncio.run(scenario())
    assert sessions.typed == []
    assert said[-1].startswith("⏭ Scheduled prompt `0123abcd` skipped: the channel is no longer")


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
