"""A hook whose bridge code cannot be imported still exits 0 with no decision
(bridge.handlers.run_hook)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bridge_testkit import hook_input

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("script", ["stop.py", "pre_tool_use.py", "permission_request.py"])
def test_a_broken_install_gives_no_decision_and_exit_0(tmp_path, script: str) -> None:
    shutil.copytree(REPO / "hooks", tmp_path / "hooks")
    shutil.copytree(REPO / "bridge", tmp_path / "bridge")
    for module in ("handlers/events.py", "handlers/permission.py"):
        with open(tmp_path / "bridge" / module, "a") as handle:
            handle.write("\ndef broken(:\n")  # a syntax error, as after a bad upgrade
    home, project = tmp_path / "home", tmp_path / "project"  # a bridge session: its handler
    home.mkdir(mode=0o700)  # is imported (a session not the bridge's exits before that)
    project.mkdir()
    (home / "config.json").write_text(
        json.dumps(
            {
                "schemaVersion": 2,
                "servers": [
                    {
                        "discord": {"botToken": "t", "ownerUserId": "100000000000000002"},
                        "projects": [
                            {
                                "name": "p",
                                "channelId": "100000000000000003",
                                "projectPath": str(project),
                            }
                        ],
                    }
                ],
            }
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            str(tmp_path / "hooks" / script),
            "--home",
            str(home),
            "--runtime-dir",
            str(tmp_path / "rt"),
            "--state-dir",
            str(tmp_path / "st"),
        ],
        input=json.dumps(
            hook_input("PreToolUse", cwd=project, tool_name="Bash", tool_input={"command": "ls"})
        ).encode(),
        capture_output=True,
        timeout=30,
        cwd=project,
    )
    assert done.returncode == 0 and done.stdout == b""
    assert b"discord-bridge hook cannot start: SyntaxError" in done.stderr


def test_every_hook_script_runs_the_handler_the_hook_table_names() -> None:
    from bridge.claude.hook_table import CODEX_HOOKS, HOOKS

    scripts = {path.name for path in (REPO / "hooks").glob("*.py")}
    for hook in [*HOOKS.values(), *CODEX_HOOKS.values()]:
        assert hook.script in scripts, hook.event
        text = (REPO / "hooks" / hook.script).read_text()
        assert f'run_hook("{hook.module}", "{hook.function}")' in text, hook.event
        module = __import__(hook.module, fromlist=[hook.function])
        assert callable(getattr(module, hook.function)), hook.event
