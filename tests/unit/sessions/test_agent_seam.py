"""The agent seam as the sessions use it: a Codex project starts ``codex`` with its own
command line, and the key gate reads the session's own agent's screen: a message goes into
Codex's input box (which Claude Code's reading would not find), and never into its dialog."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.agents import agent_for
from bridge.config import BridgeConfig
from bridge.sessions import pane_input
from bridge.sessions.key_gate import DialogOnScreen, NoInputBox, SessionKeys
from bridge.sessions.manager import SessionManager
from bridge.sessions.targets import SessionTarget
from bridge.state import runtime
from bridge.tmux import TmuxSessions

CHANNEL, CODEX_CHANNEL = "100000000000000003", "100000000000000004"
SCREENS = Path(__file__).parents[1] / "codex" / "screens"


def manager_for(tmp_path: Path) -> SessionManager:
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "discord": {"botToken": "tok", "ownerUserId": "100000000000000002"},
                "projects": [
                    {"name": "alpha", "channelId": CHANNEL, "projectPath": str(tmp_path / "a")},
                    {
                        "name": "beta",
                        "channelId": CODEX_CHANNEL,
                        "projectPath": str(tmp_path / "b"),
                        "agent": "codex",
                        "codexCommand": "/opt/codex/bin/codex",
                        "model": "gpt-5",
                        "codexArgs": ["--search"],
                    },
                ],
            }
        ],
    }
    cfg = BridgeConfig(raw, str(tmp_path / "bridge.json"), env={})
    return SessionManager(cfg, cfg.servers[0], runtime.Runtime(str(tmp_path / "rt")).ensure())


def test_a_codex_project_starts_codex_and_a_claude_project_claude(tmp_path) -> None:
    manager = manager_for(tmp_path)
    alpha, beta = (SessionTarget.for_project(p) for p in manager.server.projects)
    codex = manager.launch_argv(beta)
    assert codex[:2] == ["nice", "-n"] and codex[3] == "/opt/codex/bin/codex"
    assert codex[4:6] == ["-c", "features.daemon_auto_start=false"]
    assert codex[codex.index("--model") + 1] == "gpt-5" and codex[-1] == "--search"
    assert codex[codex.index("--add-dir") + 1] == manager.runtime.path("outputs", CODEX_CHANNEL)
    assert "--settings" not in codex and "--append-system-prompt" not in codex
    assert any(a.startswith("developer_instructions=") for a in codex)
    assert "claude" in manager.launch_argv(alpha)
    assert "CLAUDE_CODE_DISABLE_AGENT_VIEW" not in manager.pane_env(beta)
    assert manager.pane_env(beta)[runtime.ENV_CHANNEL] == CODEX_CHANNEL
    assert manager.agent_of(CODEX_CHANNEL).name == "codex"
    assert manager.agent_of(CHANNEL).name == "claude"


def test_an_unknown_agent_name_picks_no_program() -> None:
    with pytest.raises(ValueError, match="unknown agent 'sh'"):
        agent_for("sh")


@pytest.fixture
def tmux() -> Iterator[TmuxSessions]:
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    yield TmuxSessions("unit", socket)
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


def pane_showing(tmux: TmuxSessions, tmp_path: Path, name: str) -> str:
    """A pane that shows a captured Codex screen, then echoes the keys it gets."""
    screen = (SCREENS / f"0.171.0-{name}.txt").read_text(encoding="utf-8").rstrip("\n")
    drawn = tmp_path / f"{name}.txt"
    drawn.write_text(screen + "\n", encoding="utf-8")
    program = ["sh", "-c", f"cat {drawn}; exec cat -v"]
    pane = tmux.start(CODEX_CHANNEL, "ui", str(tmp_path), program, {})
    last = [line for line in screen.splitlines() if line.strip()][-1].strip()
    tmux.wait_for(pane.pane_id, lambda shown: last in shown, 5.0)
    return pane.pane_id


def test_the_gate_reads_the_sessions_own_agents_screen(tmux, tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    pane = pane_showing(tmux, tmp_path, "idle")
    claude_keys = SessionKeys(tmux, pane, rt, CODEX_CHANNEL)
    with pytest.raises(NoInputBox):  # Claude Code's box (❯ between rules) is not there
        claude_keys.require_input_box("your message")
    codex_keys = SessionKeys(tmux, pane, rt, CODEX_CHANNEL, agent=agent_for("codex"))
    assert codex_keys.require_input_box("your message")
    codex_keys.type_literal("hello")
    tmux.wait_for(pane, lambda shown: "hello" in shown, 5.0)


def test_nothing_is_typed_into_codexs_hooks_dialog(tmux, tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    pane = pane_showing(tmux, tmp_path, "trust")
    keys = SessionKeys(tmux, pane, rt, CODEX_CHANNEL, agent=agent_for("codex"))
    with pytest.raises(DialogOnScreen) as refused:
        pane_input.type_into_box(keys, "2")
    assert str(refused.value).startswith("Codex is showing a dialog")
    assert "Hooks need review" in refused.value.screen
    assert "\n2" not in tmux.capture(pane).split("enter confirm")[-1]
    with pytest.raises(DialogOnScreen, match=r"^Codex is showing a screen that needs an answer"):
        pane_input.wait_ready(tmux, pane, 5.0, agent=agent_for("codex"))


def test_a_dialog_right_after_codexs_box_is_waited_for_at_start(tmux, tmp_path) -> None:
    """Codex showed its box, then "Hooks need review" (measured under load): the start is
    not ready, the dialog is."""
    idle, trust = (SCREENS / "0.171.0-idle.txt", SCREENS / "0.171.0-trust.txt")
    program = ["sh", "-c", f"cat {idle}; sleep 1; clear; cat {trust}; exec cat -v"]
    pane = tmux.start(CODEX_CHANNEL, "ui", str(tmp_path), program, {}).pane_id
    with pytest.raises(DialogOnScreen) as raised:
        pane_input.wait_ready(tmux, pane, 10.0, agent=agent_for("codex"))
    assert "Hooks need review" in raised.value.screen
