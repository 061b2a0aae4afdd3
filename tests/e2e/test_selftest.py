"""``discord-bridge selftest`` names what stops Claude Code, in its own words: a command that
is not there, and a Claude Code that cannot reach its service at its first start (the real
CLI with an empty HOME, offline). A passing run, from the installed command after
``./install.sh``, is in tests/test_install.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_anthropic.claude_cli import claude_available, claude_binary
from tests.e2e.test_sessions import api_host_unreachable

REPO = Path(__file__).resolve().parents[2]


def selftest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``discord-bridge selftest`` as a user with a bridge home of their own runs it."""
    home = tmp_path / "user-home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "DISCORD_BRIDGE_HOME": str(home / ".discord-bridge"),
        "TMPDIR": str(tmp_path),  # where a failed run keeps its throwaway directory
    }
    return subprocess.run(
        [sys.executable, "-m", "bridge.cli", "selftest", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def test_a_command_that_is_not_there_is_named_with_the_fix(tmp_path: Path) -> None:
    done = selftest(tmp_path, "--claude", "claudx")
    assert done.returncode == 1
    assert done.stdout.startswith("✗ Claude Code: `claudx` (--claude) not found\n    fix: ")
    assert "`claudeCommand`" in done.stdout and "selftest: 1 check failed" in done.stdout


def test_the_configs_claude_that_cannot_reach_its_service_is_named_in_its_words(
    tmp_path: Path,
) -> None:
    """The user's claudeCommand (read from their config, never written) is a Claude Code that
    starts with a HOME where it never ran, on a machine that cannot reach Anthropic: the
    CLI prints "Unable to connect to Anthropic services" and exits 1; selftest says so."""
    if not claude_available():
        pytest.fail("Claude Code is missing (./scripts/test.sh installs it)")
    empty = tmp_path / "never-ran-here"
    empty.mkdir()
    offline = " ".join(f"{k}={v}" for k, v in api_host_unreachable().items())
    wrapper = tmp_path / "claude-first-run"
    wrapper.write_text(f'#!/bin/sh\nexec env HOME={empty} {offline} {claude_binary()} "$@"\n')
    wrapper.chmod(0o755)
    bridge_home = tmp_path / "user-home" / ".discord-bridge"
    bridge_home.mkdir(parents=True, mode=0o700)
    config = {
        "schemaVersion": 2,
        "claudeCommand": str(wrapper),
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "MTIz.not-used.here", "ownerUserId": "100000000000000002"},
                "projects": [
                    {"name": "p", "channelId": "100000000000000003", "projectPath": str(tmp_path)}
                ],
            }
        ],
    }
    (bridge_home / "config.json").write_text(json.dumps(config))
    (bridge_home / "config.json").chmod(0o600)
    written = (bridge_home / "config.json").read_bytes()

    done = selftest(tmp_path)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert f"at {wrapper}" in out.splitlines()[0], out  # the config's claudeCommand
    failed = [line for line in out.splitlines() if line.startswith("✗")]
    assert failed == [line for line in failed if "Claude Code did not start" in line], out
    assert "Claude Code could not reach Anthropic's service" in out, out
    assert "Unable to connect to Anthropic services" in out, out
    assert "fix: Check the network of the machine the bot runs on" in out, out
    assert f"kept for a look: {tmp_path}/discord-bridge-selftest-" in out
    assert (bridge_home / "config.json").read_bytes() == written
    assert sorted(p.name for p in bridge_home.iterdir()) == ["config.json"]


def test_a_config_with_a_codex_project_gets_a_codex_round(tmp_path: Path) -> None:
    """The config's codexCommand (the pinned Codex) is run through the bridge offline, on the
    fake Responses API in a private CODEX_HOME: its hooks review trusted from Discord, a reply
    posted by its Stop hook, a command allowed. The user's own ~/.codex is never made. Every
    project runs Codex: no Claude Code round (none is needed)."""
    from bridge.codex import versions
    from bridge_testkit.codex_rig import codex_binary

    bridge_home = tmp_path / "user-home" / ".discord-bridge"
    bridge_home.mkdir(parents=True, mode=0o700)
    project = {
        "name": "p",
        "channelId": "100000000000000003",
        "projectPath": str(tmp_path),
        "agent": "codex",
        "codexCommand": str(codex_binary()),
    }
    config = {
        "schemaVersion": 2,
        "claudeCommand": "no-claude-here",  # never looked for
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "MTIz.not-used.here", "ownerUserId": "100000000000000002"},
                "projects": [project],
            }
        ],
    }
    (bridge_home / "config.json").write_text(json.dumps(config))
    (bridge_home / "config.json").chmod(0o600)

    done = selftest(tmp_path)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert f"✓ Codex: codex-cli {versions.PINNED} at {codex_binary()}" in out
    codex_lines = [line for line in out.splitlines() if "Codex" in line and line[0] == "✓"]
    assert len(codex_lines) == 4, out  # found, the hooks review, the reply, the permission
    assert "its hooks review was offered on Discord and trusted" in out
    assert "the reply was posted (its Stop hook)" in out
    assert "Codex's permission request was posted; Allow ran the command" in out
    assert "selftest: all checks passed" in out
    assert out.startswith("· Claude Code: every project of your config runs Codex, so no Claude")
    assert "no-claude-here" not in out
    assert not (tmp_path / "user-home" / ".codex").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("discord-bridge-selftest-")]


def test_without_a_codex_project_the_selftest_says_it_ran_no_codex_round(tmp_path: Path) -> None:
    done = selftest(tmp_path, "--claude", "claudx")
    assert "· Codex: no project of your config uses it, so no Codex round" in done.stdout


def test_a_config_with_both_agents_gets_both_rounds(tmp_path: Path) -> None:
    from bridge_testkit.codex_rig import codex_binary

    if not claude_available():
        pytest.fail("Claude Code is missing (./scripts/test.sh installs it)")
    bridge_home = tmp_path / "user-home" / ".discord-bridge"
    bridge_home.mkdir(parents=True, mode=0o700)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    projects = [
        {"name": "a", "channelId": "100000000000000003", "projectPath": str(tmp_path / "a")},
        {"name": "b", "channelId": "100000000000000004", "projectPath": str(tmp_path / "b")},
    ]
    projects[1].update(agent="codex", codexCommand=str(codex_binary()))
    config = {
        "schemaVersion": 2,
        "claudeCommand": str(claude_binary()),
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "MTIz.not-used.here", "ownerUserId": "100000000000000002"},
                "projects": projects,
            }
        ],
    }
    (bridge_home / "config.json").write_text(json.dumps(config))
    (bridge_home / "config.json").chmod(0o600)
    done = selftest(tmp_path)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "✓ ⏹ interrupted a running turn" in out  # the Claude Code round's last check
    assert "✓ Codex's permission request was posted; Allow ran the command" in out
    assert "selftest: all checks passed" in out
