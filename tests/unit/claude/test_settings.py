"""hooks install/uninstall edits settings.json idempotently and touches nothing else."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from bridge.claude import settings as claude_settings
from bridge.cli import main

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"defaultMode": "default"},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}],
    },
}


def test_install_merges_and_is_idempotent(tmp_path, capsys) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(USER_SETTINGS))
    assert main(["hooks", "install", "--settings", str(path)]) == 0
    first = path.read_text()
    settings = json.loads(first)
    assert settings["model"] == "opus" and settings["permissions"] == {"defaultMode": "default"}
    user_pre, *bridge_pre = settings["hooks"]["PreToolUse"]
    assert user_pre == USER_SETTINGS["hooks"]["PreToolUse"][0]  # the user's entry, unchanged
    assert [claude_settings.is_ours(h) for g in bridge_pre for h in g["hooks"]] == [True]
    permission = settings["hooks"]["PermissionRequest"][0]["hooks"][0]
    assert permission["timeout"] > 900  # above the default prompt timeout of 15 min
    stop_commands = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    assert stop_commands[0] == "notify-send done"
    ours = [h for g in settings["hooks"]["Stop"] for h in g["hooks"] if claude_settings.is_ours(h)]
    assert len(ours) == 1 and ours[0]["timeout"] == 60
    assert ours[0]["command"].startswith(sys.executable + " -I ")
    assert "hooks/stop.py" in ours[0]["command"]
    assert json.loads((tmp_path / "settings.json.discord-bridge.bak").read_text()) == USER_SETTINGS

    assert main(["hooks", "install", "--settings", str(path)]) == 0
    assert path.read_text() == first
    assert "already up to date" in capsys.readouterr().out


def test_every_installed_command_runs_a_script_of_this_install(tmp_path) -> None:
    path = tmp_path / "settings.json"
    claude_settings.install(str(path))
    hooks = Path(__file__).resolve().parents[3] / "hooks"  # beside bridge/, found by path
    entries = claude_settings.installed_entries(str(path))
    commands = [entry["command"] for entry in entries.values()]
    commands.append(json.loads(path.read_text())["statusLine"]["command"])
    for command in commands:
        script = claude_settings.python_argv(command)[3]
        assert os.path.dirname(script) == str(hooks) and os.path.isfile(script), command


def test_message_display_runs_niced_and_the_others_do_not(tmp_path) -> None:
    """Claude Code does not wait for MessageDisplay, but starts it just before the Stop hook:
    niced, it leaves the CPU to the reply."""
    path = tmp_path / "settings.json"
    claude_settings.install(str(path))
    for event, command in claude_settings.installed_events(str(path)).items():
        argv = shlex.split(command, comments=True)
        python = claude_settings.python_argv(command)
        assert python[0] == sys.executable and python[1:3] == ["-I", "-S"], command
        if event == "MessageDisplay":
            assert os.path.basename(argv[0]) == "nice" and argv[1:3] == ["-n", "10"]
        else:
            assert argv == python, command


def test_uninstall_removes_exactly_ours(tmp_path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(USER_SETTINGS))
    claude_settings.install(str(path))
    claude_settings.uninstall(str(path))
    assert json.loads(path.read_text()) == USER_SETTINGS


def test_install_creates_missing_file(tmp_path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    claude_settings.install(str(path))
    assert set(claude_settings.installed_events(str(path))) == set(claude_settings.HOOKS)


def test_invalid_settings_are_not_overwritten(tmp_path, capsys) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{broken")
    assert main(["hooks", "install", "--settings", str(path)]) == 1
    assert path.read_text() == "{broken"
    assert "not valid JSON" in capsys.readouterr().err
