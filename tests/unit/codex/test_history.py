"""A project's past Codex conversations, read from rollouts laid out as Codex 0.171.0 writes
them: only those whose ``session_meta`` ran in the project, only regular files of Codex's
name, only an id of Codex's shape looked up."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bridge.codex import history

ID = "01a22656-bb46-7c93-b002-84fc9a347e53"
OTHER = "01a22657-0d76-70b2-88ee-4c31709c8e09"


def rollout(home: Path, session_id: str, cwd: Path, prompts: list[str], reply: str) -> Path:
    day = home / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True, exist_ok=True)
    path = day / f"rollout-2026-11-29T08-06-09-{session_id}.jsonl"
    stamp = "2026-11-29T08:06:09.206Z"
    lines = [
        {
            "timestamp": stamp,
            "type": "session_meta",
            "payload": {"id": session_id, "cwd": str(cwd)},
        },
        user("<environment_context>\n  <cwd>x</cwd>"),
        *[user(p) for p in prompts],
        {
            "timestamp": stamp,
            "type": "event_msg",
            "payload": {"type": "task_complete", "last_agent_message": reply},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def user(text: str) -> dict:
    content = [{"type": "input_text", "text": text}]
    return {
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": content},
    }


def test_the_projects_rollouts_summarised_and_found_by_id(tmp_path) -> None:
    home, project, elsewhere = tmp_path / "codex", tmp_path / "project", tmp_path / "other"
    project.mkdir()
    rollout(home, ID, project, ["remember pineapple", "and more"], "Done.")
    rollout(home, OTHER, elsewhere, ["not this project"], "No.")
    (found,) = history.conversations(str(project), str(home))
    assert (found.session_id, found.first_prompt, found.last_reply, found.prompts) == (
        ID,
        "remember pineapple",
        "Done.",
        2,
    )
    assert history.find(str(project), ID, str(home)) == found
    assert history.find(str(project), OTHER, str(home)) is None  # another project's
    assert history.find(str(project), "../../x", str(home)) is None
    assert history.find(str(project), ID[:-1] + "*", str(home)) is None


def test_links_and_conversations_without_a_prompt_are_not_listed(tmp_path) -> None:
    home, project = tmp_path / "codex", tmp_path / "project"
    project.mkdir()
    real = rollout(tmp_path / "elsewhere", ID, project, ["secret"], "x")
    day = home / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True)
    os.symlink(real, day / real.name)
    rollout(home, OTHER, project, [], "never asked")
    assert history.conversations(str(project), str(home)) == []
    assert history.find(str(project), ID, str(home)) is None
