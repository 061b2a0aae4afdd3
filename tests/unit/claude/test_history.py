"""``/history``'s reading of Claude Code's transcripts: the folder the CLI names after the
directory, a person's prompts (not tool results or the CLI's own lines), the last reply, and
only the head and tail of a long file."""

from __future__ import annotations

import json
import os

from bridge.claude import history

SESSION = "71313fe6-88f0-4a0f-b883-f3c1c91e1936"


def line(**record) -> str:
    return json.dumps(record) + "\n"


def prompt(text: str) -> str:
    return line(
        type="user", message={"role": "user", "content": text}, timestamp="2026-11-21T23:58:04.591Z"
    )


def reply(message_id: str, text: str) -> str:
    content = [{"type": "text", "text": text}]
    return line(type="assistant", message={"id": message_id, "content": content})


def test_the_folder_is_the_directory_with_every_other_character_a_dash(tmp_path) -> None:
    folder = history.project_dir("/tmp/a_b/project-a.x", str(tmp_path))
    assert folder == str(tmp_path / "projects" / "-tmp-a-b-project-a-x")


def test_a_conversation_is_summarised_from_its_prompts_and_last_reply(tmp_path) -> None:
    folder = tmp_path / "projects" / "-work-app"
    folder.mkdir(parents=True)
    tool_result = [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]
    (folder / f"{SESSION}.jsonl").write_text(
        line(type="user", isMeta=True, message={"content": "<local-command-caveat>"})
        + prompt("remember pineapple")
        + reply("m1", "Noted.")
        + line(type="user", message={"role": "user", "content": tool_result})
        + prompt("and now?")
        + reply("m2", "First part")
        + reply("m2", "second part")
        + '{"type": "assistant", "message": {"id": "m3", "cont'  # still being written
    )
    (folder / "notes.jsonl").write_text(prompt("not a session file"))
    os.symlink(folder / f"{SESSION}.jsonl", folder / "0123abcd-0000-0000-0000-000000000000.jsonl")
    (found,) = history.conversations("/work/app", str(tmp_path))
    assert found.session_id == SESSION
    assert found.first_prompt == "remember pineapple" and found.prompts == 2
    assert found.last_reply == "First part\nsecond part" and not found.partial
    assert found.started is not None
    assert history.find("/work/app", SESSION, str(tmp_path)) == found
    assert history.find("/work/app", "../../etc/passwd", str(tmp_path)) is None


def test_a_long_transcript_is_read_at_its_head_and_tail_only(tmp_path) -> None:
    folder = tmp_path / "projects" / "-work-app"
    folder.mkdir(parents=True)
    filler = reply("mid", "x" * 1000) * (2 * history.HEAD_BYTES // 1000)
    (folder / f"{SESSION}.jsonl").write_text(
        prompt("the first ask") + filler + prompt("a later ask") + reply("end", "the end")
    )
    (found,) = history.conversations("/work/app", str(tmp_path))
    assert found.partial and found.first_prompt == "the first ask"
    assert found.last_reply == "the end" and found.prompts == 2
