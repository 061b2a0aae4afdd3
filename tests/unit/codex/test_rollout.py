"""Codex's rollout transcript as the status message reads it: the newest assistant text of
the latest turn, none of the turn before."""

from __future__ import annotations

import json
from pathlib import Path

from bridge.agents import agent_for
from bridge.codex import rollout


def message(role: str, text: str) -> str:
    kind = "output_text" if role == "assistant" else "input_text"
    payload = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
    return json.dumps({"type": "response_item", "payload": payload})


def event(kind: str) -> str:
    return json.dumps({"type": "event_msg", "payload": {"type": kind, "message": "x"}})


def test_the_latest_turns_assistant_text_and_nothing_of_the_turn_before(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    lines = [
        message("user", "first"),
        message("assistant", "First answer."),
        event("task_complete"),
    ]
    path.write_text("\n".join(lines) + "\n")
    assert rollout.last_assistant_text(str(path)) == "First answer."
    with path.open("a") as out:
        out.write(message("user", "second") + "\n" + event("task_started") + "\n")
    assert rollout.last_assistant_text(str(path)) == ""  # this turn said nothing yet
    with path.open("a") as out:
        out.write(message("assistant", "Checking first.") + '\n{"type": "response_item", "pay')
    assert rollout.last_assistant_text(str(path)) == "Checking first."  # a half-written line
    assert agent_for("codex").last_assistant_text(str(path)) == "Checking first."
    assert agent_for("claude").last_assistant_text(str(path)) == ""  # not its format


def test_no_transcript_reads_as_no_text(tmp_path: Path) -> None:
    assert rollout.last_assistant_text(None) == ""
    assert rollout.last_assistant_text(str(tmp_path / "missing.jsonl")) == ""
    assert rollout.last_assistant_text(str(tmp_path)) == ""  # a directory
