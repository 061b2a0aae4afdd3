"""The routes of sessions adopted by a bot with a config of its own (``try``, ``run --config``):
written by that bot in the bridge home, followed by a hook only to a registered config while
that bot runs, and never from a file that is not this user's private regular file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.state import adoptions, locations, runtime

SESSION = "cbe55835-1c2d-4e5f-8a9b-0123456789ab"
OTHER_SESSION = "8eee36f1-e3c7-4476-b0d3-591be9f4b59b"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    return home


@pytest.fixture
def trial(tmp_path: Path, home: Path) -> tuple[Path, runtime.Runtime]:
    """A config of its own, registered with its own dirs, as ``discord-bridge try`` does."""
    env = {runtime.ENV_HOME: str(home)}
    config = tmp_path / "try" / "config.json"
    rt = runtime.Runtime(str(tmp_path / "try-run"), str(tmp_path / "try-state")).ensure()
    locations.register_config(str(config), env)
    locations.record_config_locations(str(config), rt, env)
    return config, rt


def hook_env(tmp_path: Path, home: Path) -> dict[str, str]:
    """A hand-started session's hook locations: the home's, from its command line."""
    argv = ["--home", str(home), "--runtime-dir", str(tmp_path / "home-run"), "-"]
    (tmp_path / "home-run").mkdir(mode=0o700, exist_ok=True)
    return locations.hook_locations(argv, {})


def test_an_adopted_session_is_routed_to_the_bots_config_and_dirs_while_it_runs(
    tmp_path: Path, home: Path, trial: tuple[Path, runtime.Runtime]
) -> None:
    config, rt = trial
    env = {runtime.ENV_HOME: str(home)}
    assert not adoptions.follow_route(hook_env(tmp_path, home), SESSION)  # nobody adopted it
    assert not (home / adoptions.ROUTES).exists()

    adoptions.route(SESSION, str(config), env)
    routes = home / adoptions.ROUTES
    assert routes.stat().st_mode & 0o777 == 0o600
    assert json.loads(routes.read_text())[SESSION]["config"] == str(config)
    assert adoptions.routed_to(SESSION, env) == str(config)

    followed = hook_env(tmp_path, home)
    assert adoptions.follow_route(followed, SESSION)
    assert runtime.config_path(followed) == str(config)
    assert runtime.Runtime.from_env(followed).root == rt.root
    assert runtime.Runtime.from_env(followed).state_root == rt.state_root
    other = hook_env(tmp_path, home)
    assert not adoptions.follow_route(other, OTHER_SESSION)  # only the session adopted
    assert runtime.config_path(other) == str(home / "config.json")
    assert runtime.Runtime.from_env(other).root == str(tmp_path / "home-run")

    adoptions.unroute(SESSION, env)  # Release
    assert not adoptions.follow_route(hook_env(tmp_path, home), SESSION)
    assert not routes.exists()  # the last route gone: the hooks' read is a failed open again

    adoptions.route(SESSION, str(config), env)
    adoptions.route(OTHER_SESSION, str(config), env)
    adoptions.unroute_all(env)  # the bot stops
    assert not routes.exists()


def test_a_route_of_a_bot_that_is_gone_or_to_an_unregistered_config_is_not_followed(
    tmp_path: Path, home: Path, trial: tuple[Path, runtime.Runtime]
) -> None:
    config, _ = trial
    routes = home / adoptions.ROUTES
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = {"config": str(config), "pid": int(gone.stdout), "start": "1"}
    routes.write_text(json.dumps({SESSION: dead}))  # a bot killed without a word
    routes.chmod(0o600)
    env = hook_env(tmp_path, home)
    assert not adoptions.follow_route(env, SESSION)
    assert runtime.config_path(env) == str(home / "config.json")
    assert adoptions.routed_to(SESSION, {runtime.ENV_HOME: str(home)}) == ""

    # The bot's process, but a config `run --config` never registered: not followed either.
    adoptions.route(SESSION, str(tmp_path / "unregistered.json"), {runtime.ENV_HOME: str(home)})
    assert dead not in json.loads(routes.read_text()).values()  # a gone bot's route is dropped
    env = hook_env(tmp_path, home)
    assert not adoptions.follow_route(env, SESSION)
    assert runtime.config_path(env) == str(home / "config.json")


def plant(routes: Path, form: str, good: bytes) -> None:
    """A routes file that is not this user's private regular file (or not routes at all)."""
    routes.unlink(missing_ok=True)
    if form == "symlink":
        target = routes.with_name("elsewhere.json")
        target.write_bytes(good)
        target.chmod(0o600)
        routes.symlink_to(target)
        return
    if form == "directory":
        routes.mkdir()
        return
    data = {"garbage": b"{not json", "list": b"[1, 2]", "huge": b" " * (1 << 17) + good}
    routes.write_bytes(data.get(form, good))
    routes.chmod({"world-writable": 0o666, "group-readable": 0o640}.get(form, 0o600))
    if form == "someone-else's":
        os.chown(routes, 65534, 65534)


FORMS = [
    "symlink",
    "directory",
    "world-writable",
    "group-readable",
    "someone-else's",
    "garbage",
    "list",
    "huge",
]


@pytest.mark.parametrize("form", FORMS)
def test_a_routes_file_that_is_not_a_private_file_of_ours_is_ignored(
    tmp_path: Path, home: Path, trial: tuple[Path, runtime.Runtime], form: str
) -> None:
    config, _ = trial
    adoptions.route(SESSION, str(config), {runtime.ENV_HOME: str(home)})
    routes = home / adoptions.ROUTES
    good = routes.read_bytes()
    env = hook_env(tmp_path, home)
    assert adoptions.follow_route(env, SESSION)  # the same content, as the bot wrote it
    plant(routes, form, good)
    env = hook_env(tmp_path, home)
    assert not adoptions.follow_route(env, SESSION)
    assert runtime.config_path(env) == str(home / "config.json")
    assert runtime.Runtime.from_env(env).root == str(tmp_path / "home-run")


@pytest.mark.parametrize("session_id", ["../x", "", None, 7, "a" * 65, SESSION + "/.."])
def test_a_session_id_that_is_not_one_is_never_looked_up(
    tmp_path: Path, home: Path, session_id: object
) -> None:
    env = hook_env(tmp_path, home)
    before = dict(env)
    assert not adoptions.follow_route(env, session_id)
    assert env == before
    with pytest.raises(ValueError):
        adoptions.route(str(session_id), str(tmp_path / "c.json"), {runtime.ENV_HOME: str(home)})


def test_the_home_bot_routes_nothing(tmp_path: Path, home: Path) -> None:
    """Its sessions' hooks read its config already: its adoptions work as they always did."""
    env = {runtime.ENV_HOME: str(home), "HOME": str(tmp_path)}
    assert not adoptions.routes_needed(str(home / "config.json"), env)
    assert adoptions.routes_needed(str(tmp_path / "try" / "config.json"), env)
