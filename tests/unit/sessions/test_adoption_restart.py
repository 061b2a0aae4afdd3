"""A bot with a config of its own (``try``) starts again: the sessions it adopted that still run
are routed to it again, except one the bridge home's bot adopted while it was away (released
here: one session, one thread); the home's bot routes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bridge.sessions import adoption, machine
from bridge.state import adoptions, locations, runtime, session_state

SESSION = "cbe55835-1c2d-4e5f-8a9b-0123456789ab"
THREAD = "100000000000000007"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv(runtime.ENV_HOME, str(home))
    monkeypatch.delenv(runtime.ENV_CONFIG, raising=False)
    return home


def adopted_here(tmp_path: Path) -> runtime.Runtime:
    """``try``'s dirs, holding an adoption of a Claude Code that still runs (this process)."""
    rt = runtime.Runtime(str(tmp_path / "try-run"), str(tmp_path / "try-state")).ensure()
    live = {
        "address": "x:%1",
        "pid": os.getpid(),
        "proc_start": machine.proc_start(os.getpid()),
        "session_id": SESSION,
    }
    session_state.save(rt, THREAD, {"project": "p", "thread_id": THREAD, "adopted": live})
    adoptions.adopt(rt, SESSION, THREAD, "p", "100000000000000003")
    return rt


def test_a_restarted_bot_routes_its_live_adoptions_to_itself_again(
    tmp_path: Path, home: Path
) -> None:
    rt = adopted_here(tmp_path)
    config = str(tmp_path / "try" / "config.json")
    assert adoption.route_live(rt, str(home / "config.json")) == 0  # the home's bot: no route
    assert not (home / adoptions.ROUTES).exists()
    assert adoption.route_live(rt, config) == 1
    routes = json.loads((home / adoptions.ROUTES).read_text())
    assert routes[SESSION]["config"] == config and routes[SESSION]["pid"] == os.getpid()


def test_a_session_the_homes_bot_adopted_meanwhile_is_released_not_routed(
    tmp_path: Path, home: Path
) -> None:
    rt = adopted_here(tmp_path)
    bot = runtime.Runtime(str(tmp_path / "bot-run"), str(tmp_path / "bot-state")).ensure()
    locations.record_locations(bot)
    adoptions.adopt(bot, SESSION, "100000000000000009", "p", "100000000000000003")
    assert adoption.route_live(rt, str(tmp_path / "try" / "config.json")) == 0
    assert not (home / adoptions.ROUTES).exists()
    assert adoption.adopted(rt, THREAD) is None  # released in try's thread
    assert adoptions.lookup(bot, SESSION)["key"] == "100000000000000009"  # the home's holds it


def test_sessions_says_a_session_another_bot_adopted_is_taken(tmp_path: Path, home: Path) -> None:
    """``/sessions`` of either bot: ``try``'s route is seen by the home's bot, the home's
    record by ``try``'s bot; neither offers **Adopt** for the other's session."""
    from types import SimpleNamespace

    from bridge.bot.reach.adopt import adopted_elsewhere

    trial = str(tmp_path / "try" / "config.json")
    bot = runtime.Runtime(str(tmp_path / "bot-run"), str(tmp_path / "bot-state")).ensure()
    locations.record_locations(bot)
    home_bot = SimpleNamespace(config_path=str(home / "config.json"), runtime=bot)
    try_bot = SimpleNamespace(config_path=trial, runtime=adopted_here(tmp_path))
    assert not adopted_elsewhere(home_bot, SESSION)  # type: ignore[arg-type]
    adoptions.route(SESSION, trial)
    assert adopted_elsewhere(home_bot, SESSION)  # type: ignore[arg-type]
    assert not adopted_elsewhere(try_bot, SESSION)  # type: ignore[arg-type]  # its own
    adoptions.unroute(SESSION)
    adoptions.adopt(bot, SESSION, "100000000000000009", "p", "100000000000000003")
    assert adopted_elsewhere(try_bot, SESSION)  # type: ignore[arg-type]
    adoptions.release(bot, SESSION)
    assert not adopted_elsewhere(try_bot, SESSION)  # type: ignore[arg-type]
