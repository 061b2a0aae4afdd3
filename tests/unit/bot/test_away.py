"""The away watch's decisions with an injected clock: when a limit resumes, in which order,
what its message says; budgets against Claude Code's cost; the config keys."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from bridge.bot.away.budget_figures import raised_cap
from bridge.bot.away.watch import POLL_UNKNOWN, RESUME_GAP, AwayWatch
from bridge.bot.control.panel import render
from bridge.config import BridgeConfig, ConfigError
from bridge.handlers.away import parse_reset
from bridge.sessions.targets import SessionTarget
from bridge.state import away, runtime, status_cache, usage_totals
from bridge.state.budget import Spend

NOW = 1_800_000_000.0
CHANNELS = ["100000000000000011", "100000000000000012", "100000000000000013"]


def config(tmp_path, **top: object) -> BridgeConfig:
    projects = [
        {"name": f"p{i}", "channelId": c, "projectPath": str(tmp_path / f"p{i}")}
        for i, c in enumerate(CHANNELS)
    ]
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "srv",
                "discord": {"botToken": "t", "ownerUserId": "100000000000000002"},
                "projects": projects,
            }
        ],
        **top,
    }
    return BridgeConfig(raw)


@pytest.fixture
def rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


class Sent:
    """A Discord message as the watch posts and edits it."""

    def __init__(self, log: list, key: str, content: str) -> None:
        self.id, self.log, self.key = 900000000000000000 + len(log), log, key
        log.append(("send", key, content))

    async def edit(self, content: str = "", view: object = None) -> None:
        self.log.append(("edit", self.key, content))


class Channel:
    def __init__(self, log: list, key: str) -> None:
        self.log, self.key = log, key

    async def send(self, content: str, view: object = None) -> Sent:
        return Sent(self.log, self.key, content)

    def get_partial_message(self, message_id: int) -> Sent:
        message = Sent.__new__(Sent)
        message.id, message.log, message.key = message_id, self.log, self.key
        return message


class Bot:
    def __init__(self) -> None:
        self.log: list = []

    def get_partial_messageable(self, channel_id: int) -> Channel:
        return Channel(self.log, str(channel_id))


class Sessions:
    """What the watch asks of the session manager: the typing is recorded."""

    def __init__(self, cfg: BridgeConfig) -> None:
        self.server = cfg.servers[0]
        self.typed: list[tuple[str, str]] = []

    def target_for_key(self, key: str) -> SessionTarget | None:
        project = self.server.project_for_channel(key)
        return SessionTarget.for_project(project) if project else None

    def lock(self, key: str) -> contextlib.AbstractAsyncContextManager:
        return contextlib.nullcontext()  # type: ignore[return-value]

    async def ensure_running(self, target: SessionTarget) -> str:
        return "%1"

    async def type_prompt(self, key: str, pane_id: str, text: str) -> None:
        self.typed.append((key, text))

    def touch(self, key: str) -> None:
        pass


def watch(tmp_path, rt, **top: object) -> tuple[AwayWatch, Bot, Sessions, Clock]:
    cfg = config(tmp_path, **top)
    bot, sessions, clock = Bot(), Sessions(cfg), Clock()
    return AwayWatch(bot, cfg, cfg.servers[0], sessions, rt, clock), bot, sessions, clock  # type: ignore[arg-type]


def wait_for_limit(rt, key: str, resets_at: float | None, **extra: object) -> None:
    away.save(
        rt,
        "limit",
        key,
        {
            "server": "srv",
            "key": key,
            "session": None,
            "state": "waiting",
            "hit_at": NOW - 10,
            "resets_at": resets_at,
            "exact": True,
            "said": "You've hit your 5-hour limit",
            **extra,
        },
    )


def test_several_sessions_at_a_limit_resume_one_by_one_in_reset_order(tmp_path, rt) -> None:
    w, bot, sessions, clock = watch(tmp_path, rt, limits={"resumeMarginSeconds": 5})
    wait_for_limit(rt, CHANNELS[0], NOW + 100)
    wait_for_limit(rt, CHANNELS[1], NOW + 50)
    wait_for_limit(rt, CHANNELS[2], NOW + 60)
    asyncio.run(w.tick())
    assert [e[0] for e in bot.log] == ["send"] * 3 and sessions.typed == []
    assert bot.log[1][2].startswith(f"⏸ Usage limit — resumes at <t:{int(NOW + 50)}:t>")
    clock.now = NOW + 54
    asyncio.run(w.tick())
    assert sessions.typed == []  # the margin is not over
    clock.now = NOW + 101
    asyncio.run(w.tick())  # all three are due: the earliest reset first, one per gap
    assert sessions.typed == [(CHANNELS[1], "continue")]
    clock.now += RESUME_GAP - 1
    asyncio.run(w.tick())
    assert len(sessions.typed) == 1
    clock.now += 1
    asyncio.run(w.tick())
    clock.now += RESUME_GAP
    asyncio.run(w.tick())
    assert [k for k, _ in sessions.typed] == [CHANNELS[1], CHANNELS[2], CHANNELS[0]]
    assert away.all_of(rt, "limit") == {}
    edits = [e for e in bot.log if e[0] == "edit"]
    assert len(edits) == 3 and all("▶️ Usage limit over — typed “continue”" in e[2] for e in edits)


def test_an_unknown_reset_polls_gently_and_says_so(tmp_path, rt) -> None:
    w, bot, sessions, clock = watch(tmp_path, rt)
    wait_for_limit(rt, CHANNELS[0], None)
    asyncio.run(w.tick())
    nxt = int(NOW - 10 + POLL_UNKNOWN)
    assert bot.log[0][2].startswith(
        f"⏸ Usage limit — reset time unknown; trying again every 15 min (next <t:{nxt}:R>)"
    )
    clock.now = nxt - 1
    asyncio.run(w.tick())
    assert sessions.typed == []
    clock.now = nxt
    asyncio.run(w.tick())
    assert sessions.typed == [(CHANNELS[0], "continue")]


def test_auto_resume_off_waits_for_the_owner_and_a_prompt_ends_the_wait(tmp_path, rt) -> None:
    w, bot, sessions, clock = watch(
        tmp_path, rt, limits={"autoResume": False, "continuePrompt": "go on"}
    )
    wait_for_limit(rt, CHANNELS[0], NOW + 5)
    asyncio.run(w.tick())
    assert bot.log[0][2].startswith(f"⏸ Usage limit — resets at <t:{int(NOW + 5)}:t>")
    assert "Auto-resume is off (`limits.autoResume`)" in bot.log[0][2]
    clock.now = NOW + 3600
    asyncio.run(w.tick())
    assert sessions.typed == []
    # Claude Code's own continue at the reset reached the session (UserPromptSubmit):
    away.update(
        rt,
        "limit",
        CHANNELS[0],
        state="ended",
        ended_by="Your claude.ai usage limit has reset. Continue the task",
    )
    asyncio.run(w.tick())
    assert bot.log[-1] == (
        "edit",
        CHANNELS[0],
        "▶️ Usage limit over — Claude Code continued by itself at the reset.",
    )
    assert away.all_of(rt, "limit") == {}


def test_another_servers_wait_is_not_touched(tmp_path, rt) -> None:
    w, bot, sessions, _ = watch(tmp_path, rt)
    wait_for_limit(rt, CHANNELS[0], NOW - 100, server="other")
    asyncio.run(w.tick())
    assert bot.log == [] and sessions.typed == []


def test_the_clis_reset_line_is_read_to_the_end_of_its_minute() -> None:
    now = time.mktime((2026, 11, 25, 13, 0, 0, 0, 0, -1))
    at = parse_reset("You've hit your 5-hour limit · resets 1:51pm (UTC)", now)
    assert at == now + 51 * 60 + 60
    tomorrow = parse_reset("resets 9am", now)
    assert tomorrow == now - 4 * 3600 + 86400 + 60
    assert parse_reset("API Error: Request rejected (429)", now) is None


def test_spend_against_the_budget_with_raises(tmp_path, rt) -> None:
    cfg = config(tmp_path, budget={"sessionUsd": 2, "dayUsd": 10})
    budget = cfg.servers[0].projects[0].budget
    status_cache.write_status(rt, "s1", {"cost_usd": 1.7})
    usage_totals.add(rt, "s1", 1.7, NOW)
    usage_totals.add(rt, "s2", 7.0, NOW)
    spend = Spend(rt, budget, "s1", NOW)
    assert spend.over(0.8) == [("session", 1.7, 2.0), ("day", 8.7, 10.0)]
    assert spend.over() == []
    assert spend.left_text() == "session $0.30 of $2.00 left · today $1.30 of $10.00 left"
    status_cache.write_status(rt, "s1", {"cost_usd": 2.1})
    assert [w for w, *_ in Spend(rt, budget, "s1", NOW).over()] == ["session"]
    away.add_raise(rt, "raise", "s1", 5.0)
    assert Spend(rt, budget, "s1", NOW).over() == []
    assert Spend(rt, budget, "s2", NOW).session_cap == 2.0  # a raise is the session's own


def test_continue_adds_its_amount_past_what_was_spent_not_past_the_old_cap() -> None:
    """One answer can cost more than a small cap: the old cap + $N could leave the session
    over budget still, stopped again at its next tool call (seen with `try --budget 0.13`)."""
    assert raised_cap({"cap": 0.13, "spent": 0.20}, 0.13) == (0.33, 0.2)
    assert raised_cap({"cap": 5.0, "spent": 4.99}, 5.0) == (10.0, 5.0)  # a call in the moment
    assert raised_cap({"cap": "?", "spent": True}, 5.0) == (5.0, 5.0)  # a record gone wrong


def test_a_projects_budget_replaces_the_top_levels_values(tmp_path) -> None:
    cfg = config(tmp_path, budget={"sessionUsd": 2, "dayUsd": 10})
    cfg.raw["servers"][0]["projects"][1]["budget"] = {"sessionUsd": 8}
    cfg = BridgeConfig(cfg.raw)
    first, second, _ = cfg.servers[0].projects
    assert (first.budget.session_usd, first.budget.day_usd) == (2.0, 10.0)
    assert (second.budget.session_usd, second.budget.day_usd) == (8.0, 10.0)
    assert second.budget.continue_usd == 5.0
    assert not config(tmp_path).servers[0].projects[0].budget.any
    assert cfg.auto_resume and cfg.continue_prompt == "continue" and cfg.resume_margin == 30


@pytest.mark.parametrize(
    ("top", "problem"),
    [
        ({"limits": {"autoResume": "yes"}}, "limits.autoResume"),
        ({"limits": {"continuePrompt": " "}}, "limits.continuePrompt"),
        ({"limits": {"resumeMarginSeconds": -1}}, "limits.resumeMarginSeconds"),
        ({"budget": {"sessionUsd": 0}}, "budget.sessionUsd"),
        ({"budget": {"dayUsd": "5"}}, "budget.dayUsd"),
        ({"budget": []}, "budget: expected an object"),
    ],
)
def test_bad_limits_and_budgets_are_refused_clearly(tmp_path, top: dict, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config(tmp_path, **top)
    assert any(p.startswith(problem) for p in caught.value.problems), caught.value.problems


def test_the_panel_shows_limits_and_budgets_left(tmp_path, rt) -> None:
    w, *_ = watch(tmp_path, rt, budget={"dayUsd": 10})
    wait_for_limit(rt, CHANNELS[1], NOW + 600)
    usage_totals.add(rt, "s9", 2.5, NOW)
    lines = w.summary_lines()
    assert lines[0] == f"⏸ <#{CHANNELS[1]}> at a usage limit, resets <t:{int(NOW + 600)}:R>"
    assert "💰 p0: today $7.50 of $10.00 left" in lines
    assert render([], [], [w.panel_section()]).splitlines()[1:] == lines


def test_a_scheduled_prompt_skips_a_session_at_a_limit_or_stopped_at_its_budget(rt) -> None:
    from bridge.bot.away.scheduler import limit_reason

    assert limit_reason(rt, CHANNELS[0]) is None
    wait_for_limit(rt, CHANNELS[0], NOW + 60)
    assert limit_reason(rt, CHANNELS[0]) == "the session is at its usage limit"
    away.save(rt, "budget", CHANNELS[1], {"server": "srv", "which": "session"})
    assert limit_reason(rt, CHANNELS[1]) == "the session is over its budget"


def test_a_budget_stopped_by_the_owner_holds_the_queue_until_the_owners_next_prompt(rt) -> None:
    """**Stop** at the budget keeps the session's queued prompts waiting (typed, each would
    spend until its first tool call is denied); the owner's next prompt (its UserPromptSubmit
    hook) lets them go. A question not answered yet is not ended by a prompt."""
    from types import SimpleNamespace

    from bridge.handlers import away as away_hook

    key = CHANNELS[0]
    stopped = {"server": "srv", "which": "session", "message_id": "1", "state": "stopped"}
    away.save(rt, "budget", key, stopped)
    assert away.holds(rt, key) and away.held_by(rt, key) == "stopped"  # the notices say so
    prompt = SimpleNamespace(channel_id=key, runtime=rt, event={"prompt": "go on with less"})
    away_hook.on_prompt(prompt)  # type: ignore[arg-type]
    assert not away.holds(rt, key)
    away.save(rt, "budget", key, {"server": "srv", "which": "session", "message_id": "2"})
    away_hook.on_prompt(prompt)  # type: ignore[arg-type]
    assert away.held_by(rt, key) == "budget"  # Continue or Stop decide that one
