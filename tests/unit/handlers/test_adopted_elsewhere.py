"""A session adopted by a bot with a config of its own (``discord-bridge try``, ``run --config``):
its hooks, which know only the bridge home (``~/.claude/settings.json``), post to that bot's
thread with that bot's config and dirs while it runs, and nowhere once released; a routes file
that is not the bot's own is ignored and the hook still exits 0. The hooks run as Claude Code
runs them (``python -I -S hooks/<script>``, event JSON on stdin, no DISCORD_BRIDGE_* env)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.handlers import context as hook_context
from bridge.state import adoptions, locations, runtime, session_state
from bridge_testkit import hook_input
from tests.unit.state.test_adoption_routes import FORMS, plant

HOOKS = Path(__file__).resolve().parents[3] / "hooks"
CHANNEL, THREAD = "100000000000000003", "100000000000000007"
SESSION = "cbe55835-1c2d-4e5f-8a9b-0123456789ab"
BASH = {"command": "touch made-by-bash.txt", "description": "Create a file"}


class Machine:
    """A bridge home with no config of its own (a user who only ran ``try``), the hooks'
    dirs from their command line, and a bot elsewhere whose config maps ``project``."""

    def __init__(self, tmp_path: Path, own_dirs: bool) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.home = tmp_path / "bridge-home"
        self.home.mkdir(mode=0o700)
        self.home_run = tmp_path / "home-run"
        self.home_run.mkdir(mode=0o700)
        self.config = tmp_path / "elsewhere" / "config.json"
        self.config.parent.mkdir()
        cfg = {
            "schemaVersion": 2,
            "servers": [
                {
                    "name": "main",
                    "permissionTools": ["Bash"],
                    "discord": {
                        "botToken": "unused",
                        "ownerUserId": "100000000000000002",
                        "apiBaseUrl": "http://127.0.0.1:1/api/v10",
                    },
                    "projects": [
                        {"name": "p", "channelId": CHANNEL, "projectPath": str(self.project)}
                    ],
                }
            ],
        }
        self.config.write_text(json.dumps(cfg))
        self.config.chmod(0o600)
        env = self.bot_env = {runtime.ENV_HOME: str(self.home)}
        locations.register_config(str(self.config), env)  # run --config and try both do
        if own_dirs:  # try: dirs of its own
            self.rt = runtime.Runtime(str(tmp_path / "try-run"), str(tmp_path / "try-state"))
            locations.record_config_locations(str(self.config), self.rt.ensure(), env)
        else:  # run --config: the home's dirs, which it records there as the home's bot does
            self.rt = runtime.Runtime(str(self.home_run), str(tmp_path / "home-state")).ensure()
            locations.record_locations(self.rt, env)
        session_state.save(self.rt, THREAD, {"project": "p", "thread_id": THREAD})
        adoptions.adopt(self.rt, SESSION, THREAD, "p", CHANNEL)  # the bot's adoption record

    def argv(self) -> list[str]:
        return ["--home", str(self.home), "--runtime-dir", str(self.home_run)]

    def resolve(self, session_id: str = SESSION) -> hook_context.HookContext | None:
        env = hook_context.hook_env([*self.argv(), "-"], {})
        return hook_context.resolve(
            hook_input("Stop", session_id=session_id, cwd=self.project), env
        )

    def run(self, script: str, event: dict) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-I", "-S", str(HOOKS / script), *self.argv()],
            input=json.dumps(event).encode(),
            cwd=self.project,
            capture_output=True,
            env={"PATH": os.environ["PATH"], "HOME": str(self.home.parent)},
            timeout=30,
        )

    def pre_tool_use(self) -> subprocess.CompletedProcess:
        event = hook_input(
            "PreToolUse",
            session_id=SESSION,
            cwd=self.project,
            permission_mode="default",
            tool_name="Bash",
            tool_input=BASH,
        )
        return self.run("pre_tool_use.py", event)


@pytest.mark.parametrize("own_dirs", [True, False], ids=["try", "run --config"])
def test_an_adopted_sessions_hooks_go_to_the_bot_that_adopted_it_until_released(
    tmp_path: Path, own_dirs: bool
) -> None:
    machine = Machine(tmp_path, own_dirs)
    assert machine.resolve() is None  # the home has no config: not ours, as on main
    quiet = machine.pre_tool_use()
    assert quiet.returncode == 0 and quiet.stdout == b"" and quiet.stderr == b""

    adoptions.route(SESSION, str(machine.config), machine.bot_env)  # Adopt, by that bot
    context = machine.resolve()
    assert context is not None and context.channel_id == THREAD
    assert context.cfg.path == str(machine.config)
    assert context.runtime.root == machine.rt.root
    assert context.runtime.state_root == machine.rt.state_root
    asked = machine.pre_tool_use()  # the real hook: the bot's permissionTools apply
    assert asked.returncode == 0 and asked.stderr == b"", asked.stderr
    assert json.loads(asked.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert machine.resolve("8eee36f1-e3c7-4476-b0d3-591be9f4b59b") is None  # that session only

    adoptions.release(machine.rt, SESSION)  # Release: the record says released
    adoptions.unroute(SESSION, machine.bot_env)
    assert machine.resolve() is None
    assert machine.pre_tool_use().stdout == b""


def test_a_pane_marker_is_not_rerouted(tmp_path: Path) -> None:
    """A pane the home's bot started keeps its own channel, whatever the routes say."""
    machine = Machine(tmp_path, own_dirs=True)
    (machine.home / "config.json").write_bytes(machine.config.read_bytes())  # maps it too
    adoptions.route(SESSION, str(machine.config), machine.bot_env)
    env = hook_context.hook_env([*machine.argv(), "-"], {hook_context.ENV_CHANNEL: CHANNEL})
    event = hook_input("Stop", session_id=SESSION, cwd=machine.project)
    context = hook_context.resolve(event, env)
    assert context is not None and context.channel_id == CHANNEL
    assert context.cfg.path == str(machine.home / "config.json")
    assert context.runtime.root == str(machine.home_run)


@pytest.mark.parametrize("form", FORMS)
def test_a_hostile_routes_file_is_ignored_and_the_hook_exits_0(tmp_path: Path, form: str) -> None:
    machine = Machine(tmp_path, own_dirs=True)
    adoptions.route(SESSION, str(machine.config), machine.bot_env)
    routes = machine.home / adoptions.ROUTES
    plant(routes, form, routes.read_bytes())
    assert machine.resolve() is None
    result = machine.pre_tool_use()
    assert result.returncode == 0 and result.stdout == b"" and result.stderr == b""
    assert not os.path.exists(machine.rt.hook_log)  # nothing went to the bot's dirs either
