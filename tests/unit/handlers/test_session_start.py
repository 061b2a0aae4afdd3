"""What the SessionStart hook records for resume: only sessions the bridge started."""

from __future__ import annotations

import json
import os

from bridge.handlers import context as hook_context
from bridge.handlers import session_start
from bridge.state import runtime, session_record
from bridge_testkit import hook_input

CHANNEL = "100000000000000003"


def write_config(tmp_path) -> str:
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "discord": {"botToken": "tok", "ownerUserId": "100000000000000002"},
                "projects": [
                    {"name": "alpha", "channelId": CHANNEL, "projectPath": str(tmp_path / "proj")}
                ],
            }
        ],
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return str(path)


def start(tmp_path, monkeypatch, session_id: str, marker: bool) -> None:
    env = {
        runtime.ENV_CONFIG: write_config(tmp_path),
        runtime.ENV_RUNTIME_DIR: str(tmp_path / "rt"),
        runtime.ENV_STATE_DIR: str(tmp_path / "state"),
        "TMUX_PANE": "%7",
    }
    if marker:
        env[hook_context.ENV_CHANNEL] = CHANNEL
    for name in (hook_context.ENV_CHANNEL, hook_context.ENV_THREAD):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    event = hook_input(
        "SessionStart",
        session_id=session_id,
        transcript_path="/t.jsonl",
        cwd=tmp_path / "proj",
        source="startup",
    )
    context = hook_context.resolve(event, dict(os.environ))  # as if from its command line
    assert context is not None and context.channel_id == CHANNEL
    session_start.on_session_start(context)


def test_a_session_the_bridge_did_not_start_never_replaces_the_resume_record(
    tmp_path, monkeypatch
) -> None:
    start(tmp_path, monkeypatch, "bridge-session", marker=True)
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state"))
    assert session_record.read_record(rt, CHANNEL)["session_id"] == "bridge-session"
    # The owner runs their own `claude` in the project directory (no marker on that process):
    # the hooks find the project by cwd, but a restart must still resume the bridge's session.
    start(tmp_path, monkeypatch, "terminal-session", marker=False)
    assert session_record.read_record(rt, CHANNEL)["session_id"] == "bridge-session"
