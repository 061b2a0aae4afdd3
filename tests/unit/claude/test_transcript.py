"""Reading the reply from Claude Code's transcript when the Stop event lacks it: bounded."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bridge.claude import transcript
from bridge.claude.transcript import TAIL_LIMIT, reply_and_note


def assistant(msg_id: str, text: str) -> str:
    record = {"type": "assistant", "isSidechain": False,
              "message": {"id": msg_id, "content": [{"type": "text", "text": text}]}}  # fmt: skip
    return json.dumps(record) + "\n"


def test_dev_zero_as_the_transcript_is_not_read_at_all() -> None:
    # Regression: the whole "file" was read: /dev/zero grew the hook until the kernel killed it.
    start = time.perf_counter()
    assert reply_and_note({"transcript_path": "/dev/zero"}) == ("", "")
    assert time.perf_counter() - start < 1


def test_a_huge_transcript_is_read_from_its_end_only(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with path.open("wb") as handle:
        handle.write(assistant("m1", "old").encode())
        handle.truncate(TAIL_LIMIT + (8 << 20))  # sparse: 40 MiB without writing them
        handle.seek(0, 2)
        handle.write(b"\n" + assistant("m2", "the newest reply").encode())
    text, note = reply_and_note({"transcript_path": str(path)})
    assert text == "the newest reply"
    assert "start of this reply may be missing" in note


def test_a_reply_only_before_the_tail_is_reported_as_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with path.open("wb") as handle:
        handle.write(assistant("m1", "too far back").encode())
        handle.truncate(TAIL_LIMIT + (1 << 20))
    text, note = reply_and_note({"transcript_path": str(path)})
    assert text == "" and "could not be read" in note and "32 MiB" in note


def test_a_small_transcript_is_read_whole_without_a_note(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(assistant("m1", "first") + assistant("m2", "a") + assistant("m2", "b"))
    assert reply_and_note({"transcript_path": str(path)}) == ("a\nb", "")
    assert transcript.last_assistant_text(str(path)) == "a\nb"
    assert reply_and_note({"last_assistant_message": "given"}) == ("given", "")


def test_deeply_nested_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(assistant("m1", "ok") + "[" * 100_000 + "]" * 100_000 + "\n")
    assert reply_and_note({"transcript_path": str(path)}) == ("ok", "")
