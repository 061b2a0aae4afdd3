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


def token_count(input_tokens: int, window: int = 258400) -> str:
    last = {"input_tokens": input_tokens, "output_tokens": 10, "total_tokens": input_tokens + 10}
    info = {"last_token_usage": last, "model_context_window": window}
    payload = {"type": "token_count", "info": info}
    record = {"timestamp": "2026-11-29T08:14:11.779Z", "type": "event_msg", "payload": payload}
    return json.dumps(record)


def test_the_footers_figures_are_the_latest_turns_token_count(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-11-29T08-14-00-01a2265e.jsonl"
    context = json.dumps({"type": "turn_context", "payload": {"model": "gpt-fake"}})
    lines = [context, message("user", "hi"), message("assistant", "Hello."), token_count(2584)]
    path.write_text("\n".join(lines) + "\n")
    usage = rollout.last_usage(str(path))
    assert usage == {
        "model": "gpt-fake",
        "text": "Hello.",
        "context_tokens": 2584,
        "context_window": 258400,
        "at": usage and usage["at"],
    }
    assert usage["at"] is not None
    with path.open("a") as out:
        out.write(message("user", "next") + "\n")
    assert rollout.last_usage(str(path)) is None  # the new turn has no figures yet
    renamed = tmp_path / "01a2265e.jsonl"  # not a rollout's name: not read as one
    path.rename(renamed)
    assert rollout.last_usage(str(renamed)) is None
