"""The statusLine command: install/uninstall keep the user's own statusLine, the command runs it
unchanged (or prints a compact line), and caches the figures of bridge sessions only."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bridge.claude import settings as claude_settings
from bridge.handlers import status_line
from bridge.state import status_cache
from bridge.state.runtime import Runtime

CHANNEL = "100000000000000003"
EVENT = {
    "session_id": "cbe55835-1c2d-4e5f-8a9b-0123456789ab",
    "cwd": "/nonexistent",
    "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"},
    "cost": {"total_cost_usd": 2.7232160000000007, "total_duration_ms": 846761},
    "context_window": {"context_window_size": 1000000, "used_percentage": 2},
    "version": "2.1.330",
}
PREVIOUS = {
    "type": "command",
    "command": "printf '%s' \"$(cat | head -c 40)\"; echo ' it''s \"mine\" # ünï'",
    "padding": 0,
}


# --- settings.json ---------------------------------------------------------------------------


def install_then_uninstall(tmp_path: Path, settings: dict) -> tuple[dict, dict]:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    claude_settings.install(str(path))
    installed = json.loads(path.read_text())
    claude_settings.uninstall(str(path))
    return installed, json.loads(path.read_text())


def test_install_saves_previous_statusline_and_uninstall_restores_it_exactly(tmp_path) -> None:
    settings = {"model": "opus", "statusLine": PREVIOUS, "theme": "dark"}
    installed, restored = install_then_uninstall(tmp_path, settings)
    ours = installed["statusLine"]
    assert claude_settings.is_ours(ours) and ours["padding"] == 0  # the user's padding kept
    assert " -I -S " in ours["command"] and "hooks/status_line.py" in ours["command"]
    assert claude_settings.saved_previous(ours) == PREVIOUS
    assert restored == settings
    assert list(restored) == ["model", "statusLine", "theme"]  # same place in the file


def test_without_previous_statusline_uninstall_removes_the_key(tmp_path) -> None:
    installed, restored = install_then_uninstall(tmp_path, {"model": "opus"})
    assert "--previous" not in installed["statusLine"]["command"]
    assert restored == {"model": "opus"}


def test_a_null_statusline_is_restored_as_null() -> None:
    settings = claude_settings.install_status_line({"statusLine": None})
    assert claude_settings.uninstall_status_line(settings) == {"statusLine": None}


def test_reinstall_keeps_the_saved_command_and_never_saves_its_own(tmp_path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"statusLine": PREVIOUS}))
    assert claude_settings.install(str(path)) is True
    first = path.read_text()
    assert claude_settings.install(str(path)) is False
    assert path.read_text() == first
    # a bridge moved to another interpreter: the command changes, the saved one does not
    settings = claude_settings.install_status_line(json.loads(first), python="/opt/other/python3")
    assert settings["statusLine"]["command"].startswith("/opt/other/python3 -I -S ")
    assert claude_settings.saved_previous(settings["statusLine"]) == PREVIOUS
    assert claude_settings.uninstall_status_line(settings)["statusLine"] == PREVIOUS


def test_uninstall_leaves_a_statusline_the_user_set_after_install(tmp_path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"statusLine": PREVIOUS}))
    claude_settings.install(str(path))
    settings = json.loads(path.read_text())
    mine = {"type": "command", "command": "my-new-line"}
    path.write_text(json.dumps({**settings, "statusLine": mine}))
    claude_settings.uninstall(str(path))
    assert json.loads(path.read_text())["statusLine"] == mine


# --- the command, run as Claude Code runs it ---------------------------------------------------


@pytest.fixture
def bridge_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A bridge home whose one project is ``tmp/project``; runtime dir in tmp. The commands
    built here carry both on their command line, as `hooks install` writes them."""
    home = tmp_path / "bridge-home"
    home.mkdir(mode=0o700)
    (tmp_path / "project").mkdir()
    cfg = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "unused", "ownerUserId": "100000000000000002"},
                "projects": [
                    {"name": "p", "channelId": CHANNEL, "projectPath": str(tmp_path / "project")}
                ],
            }
        ],
    }
    (home / "config.json").write_text(json.dumps(cfg))
    (home / "config.json").chmod(0o600)
    monkeypatch.setenv("DISCORD_BRIDGE_HOME", str(home))
    monkeypatch.setenv("DISCORD_BRIDGE_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("DISCORD_BRIDGE_STATE_DIR", str(tmp_path / "runtime"))
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "DISCORD_BRIDGE_HOME": str(home),
        "DISCORD_BRIDGE_RUNTIME_DIR": str(tmp_path / "runtime"),
        "DISCORD_BRIDGE_STATE_DIR": str(tmp_path / "runtime"),
    }


def run_command(
    command: str, event: dict | str, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess:
    stdin = event if isinstance(event, str) else json.dumps(event)
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=stdin.encode(),
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=30,
    )


def cache_file(env: dict[str, str], session_id: str = EVENT["session_id"]) -> Path:
    return Path(env["DISCORD_BRIDGE_RUNTIME_DIR"]) / "status" / f"{session_id}.json"


def test_previous_command_gets_the_same_stdin_and_its_output_passes_unchanged(
    tmp_path, bridge_env
) -> None:
    result = run_command(claude_settings.status_line_command(PREVIOUS), EVENT, bridge_env, tmp_path)
    direct = run_command(PREVIOUS["command"], EVENT, bridge_env, tmp_path)
    assert result.returncode == 0 and result.stderr == b""
    assert result.stdout == direct.stdout
    assert result.stdout.startswith(json.dumps(EVENT)[:40].encode())


def test_previous_command_output_and_exit_status_are_byte_exact(tmp_path, bridge_env) -> None:
    previous = {"type": "command", "command": "printf '\\033[1;32mgreen\\033[0m\\nline2'; exit 3"}
    result = run_command(claude_settings.status_line_command(previous), EVENT, bridge_env, tmp_path)
    assert result.stdout == b"\x1b[1;32mgreen\x1b[0m\nline2"
    assert result.returncode == 3


def test_previous_command_that_ignores_stdin_and_a_large_input(tmp_path, bridge_env) -> None:
    previous = {"type": "command", "command": "echo ignored-input"}
    event = {**EVENT, "padding": "x" * 300_000}  # more than a pipe buffer
    result = run_command(claude_settings.status_line_command(previous), event, bridge_env, tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"ignored-input\n", b"")


def test_without_previous_a_compact_line_is_printed(tmp_path, bridge_env) -> None:
    result = run_command(claude_settings.status_line_command(), EVENT, bridge_env, tmp_path)
    assert result.stdout.decode() == "Opus 5.5 · ctx 2% · $2.72\n"
    assert result.returncode == 0


def test_bridge_session_is_cached_by_marker_or_by_cwd(tmp_path, bridge_env) -> None:
    command = claude_settings.status_line_command(PREVIOUS)
    marked = {**bridge_env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
    run_command(command, EVENT, marked, tmp_path)
    assert json.loads(cache_file(bridge_env).read_text()) == {
        "model_id": "claude-opus-5-5",
        "model_name": "Opus 5.5",
        "context_percent": 2,
        "cost_usd": 2.7232160000000007,
        "context_window_size": 1000000,
    }
    assert cache_file(bridge_env).stat().st_mode & 0o777 == 0o600

    other = {**EVENT, "session_id": "by-cwd", "cwd": str(tmp_path / "project" / "sub")}
    run_command(command, other, bridge_env, tmp_path)
    assert cache_file(bridge_env, "by-cwd").exists()


def test_other_sessions_and_unsafe_session_ids_are_not_cached(tmp_path, bridge_env) -> None:
    command = claude_settings.status_line_command()
    run_command(command, EVENT, bridge_env, tmp_path)  # cwd matches no project, no marker
    marked = {**bridge_env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
    for bad in ("../escape", ".hidden", "a/b", "", "-rf", "x" * 200):
        result = run_command(command, {**EVENT, "session_id": bad}, marked, tmp_path)
        assert result.returncode == 0 and result.stdout.startswith(b"Opus 5.5")
    status = Path(bridge_env["DISCORD_BRIDGE_RUNTIME_DIR"]) / "status"
    assert not status.exists() or list(status.iterdir()) == []
    assert not (tmp_path / "escape.json").exists()


@pytest.mark.parametrize("stdin", ["", "{broken", "[1, 2]", '{"model": 5, "cost": "x"}'])
def test_bad_input_never_fails_loudly(tmp_path, bridge_env, stdin: str) -> None:
    marked = {**bridge_env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
    result = run_command(claude_settings.status_line_command(), stdin, marked, tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"\n", b"")


def test_broken_config_is_logged_not_shown(tmp_path, bridge_env) -> None:
    Path(bridge_env["DISCORD_BRIDGE_HOME"], "config.json").write_text("{broken")
    marked = {**bridge_env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
    result = run_command(claude_settings.status_line_command(PREVIOUS), EVENT, marked, tmp_path)
    assert result.returncode == 0 and result.stderr == b"" and b"mine" in result.stdout
    log = Path(bridge_env["DISCORD_BRIDGE_RUNTIME_DIR"]) / "logs" / "hooks.log"
    assert "config" in log.read_text().lower()


# --- the record -------------------------------------------------------------------------------


def test_record_takes_typed_fields_and_rate_limits() -> None:
    event = {
        "model": {"id": "claude-x", "display_name": None},
        "context_window": {"used_percentage": None},
        "cost": {"total_cost_usd": True},
        "rate_limits": {
            "five_hour": {"used_percentage": 23.5, "resets_at": 1738425600},
            "seven_day": {"used_percentage": 41.2},
            "broken": "x",
        },
    }
    assert status_line.status_record(event) == {
        "model_id": "claude-x",
        "model_name": None,
        "context_percent": None,
        "cost_usd": None,
        "context_window_size": None,
        "rate_limits": {"five_hour": 23.5, "seven_day": 41.2},
        "rate_limit_resets": {"five_hour": 1738425600},  # for /usage
    }


def test_remember_skips_unchanged_records_and_read_status_round_trips(tmp_path, bridge_env) -> None:
    env = {**bridge_env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
    path = status_line.remember(EVENT, env)
    assert path is not None
    mtime = os.stat(path).st_mtime_ns
    os.utime(path, ns=(mtime - 10**9, mtime - 10**9))
    assert status_line.remember(EVENT, env) == path
    assert os.stat(path).st_mtime_ns == mtime - 10**9  # not rewritten
    rt = Runtime(env["DISCORD_BRIDGE_RUNTIME_DIR"])
    assert status_cache.read_status(rt, EVENT["session_id"])["model_name"] == "Opus 5.5"
    assert status_cache.read_status(rt, "../../etc/passwd") is None
    assert status_cache.read_status(rt, "missing") is None


@pytest.mark.parametrize(
    ("session_id", "safe"),
    [
        ("cbe55835-1c2d-4e5f-8a9b-0123456789ab", True),
        ("abc_DEF-1", True),
        ("..", False),
        ("a.json", False),
        ("a b", False),
        (None, False),
        (5, False),
        ("-x", False),
    ],
)
def test_session_id_must_be_a_plain_name(session_id: object, safe: bool) -> None:
    assert status_line.is_safe_session_id(session_id) is safe
