"""Reading Claude Code's transcript: the reply when the Stop event lacks it (bounded), and
interrupts (only the CLI's own record counts: issue 13, item 12).

The interrupt records below are shaped as Claude Code 2.1.330 writes them (captured from a
real session in the e2e rig: "No" in a terminal permission dialog, then Esc)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bridge.claude import transcript
from bridge.claude.transcript import TAIL_LIMIT, reply_and_note


def assistant(msg_id: str, text: str) -> str:
    record = {
        "type": "assistant",
        "isSidechain": False,
        "message": {"id": msg_id, "content": [{"type": "text", "text": text}]},
    }
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


# --- interrupts ----------------------------------------------------------------------------

INTERRUPT_FOR_TOOL = {
    "parentUuid": "89a0e3dc-5b8c-4045-a389-1fe1922cb6e2",
    "isSidechain": False,
    "promptId": "ec58aa24-f76e-4896-a9aa-9fdca24a0135",
    "type": "user",
    "message": {
        "role": "user",
        "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
    },
    "uuid": "5c5483f9-5d11-4f91-8675-fcc1691909fb",
    "timestamp": "2026-11-23T17:53:24.982Z",
    "sessionId": "e7a63d09-3241-4c22-bf86-2e3112bf2c30",
    "version": "2.1.330",
}
MARKER = "[Request interrupted by user]"
INTERRUPT = {
    **INTERRUPT_FOR_TOOL,
    "message": {"role": "user", "content": [{"type": "text", "text": MARKER}]},
}
ECHOED = "notes.txt says: [Request interrupted by user]\n"
TOOL_RESULT_ECHO = {  # a Read/Bash result that shows a file holding the words
    "type": "user",
    "message": {
        "role": "user",
        "content": [{"tool_use_id": "toolu_1", "type": "tool_result", "content": ECHOED}],
    },
    "toolUseResult": {"stdout": ECHOED, "stderr": "", "interrupted": False},
}
TOOL_RESULT_EXACT = {  # even a result whose whole text is the marker is not an interrupt
    "type": "user",
    "message": {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": [{"type": "text", "text": "[Request interrupted by user]"}],
            }
        ],
    },
    "toolUseResult": {"stdout": "[Request interrupted by user]"},
}
ASSISTANT_QUOTE = {
    "type": "assistant",
    "message": {"id": "msg_1", "content": [{"type": "text", "text": MARKER}]},
}
TYPED_MENTION = {
    "type": "user",
    "message": {"role": "user", "content": "why did I see [Request interrupted by user] earlier?"},
}


def write(path, *records: object, tail: str = "") -> None:
    with open(path, "a") as handle:
        for record in records:
            handle.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
        handle.write(tail)


@pytest.mark.parametrize("record", [INTERRUPT, INTERRUPT_FOR_TOOL])
def test_the_clis_interrupt_record_is_an_interrupt(tmp_path, record: dict) -> None:
    path = tmp_path / "t.jsonl"
    write(path, {"type": "assistant", "message": {"id": "m", "content": []}})
    offset = path.stat().st_size
    assert not transcript.interrupted_since(str(path), offset)
    write(path, record)
    assert transcript.interrupted_since(str(path), offset)


@pytest.mark.parametrize(
    "record",
    [
        TOOL_RESULT_ECHO,
        TOOL_RESULT_EXACT,
        ASSISTANT_QUOTE,
        TYPED_MENTION,
        {"type": "user", "text": "[Request interrupted by user]"},  # not a message at all
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "text", "text": "[Request interrupted by user]"},
                    {"type": "text", "text": "x"},
                ]
            },
        },  # two blocks: not the CLI's record
        '{"type":"user","message":{"content":"x"}} [Request interrupted by user]',  # not JSON
        "[Request interrupted by user]",  # bare text on a line
    ],
)
def test_the_words_anywhere_else_are_not_an_interrupt(tmp_path, record: object) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("")
    write(path, record)
    assert not transcript.interrupted_since(str(path), 0)


def test_only_whole_lines_count_and_only_after_the_offset(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, INTERRUPT)  # before the offset: an earlier turn's interrupt
    offset = path.stat().st_size
    assert not transcript.interrupted_since(str(path), offset)
    line = json.dumps(INTERRUPT_FOR_TOOL)
    write(path, tail=line)  # still being written: no newline yet
    assert not transcript.interrupted_since(str(path), offset)
    write(path, tail="\n")
    assert transcript.interrupted_since(str(path), offset)


def test_no_transcript_is_no_interrupt(tmp_path) -> None:
    assert not transcript.interrupted_since(None, 0)
    assert not transcript.interrupted_since(str(tmp_path / "missing.jsonl"), 0)
    assert not transcript.interrupted_since(str(tmp_path), 0)  # a directory


def answer(text: str, tokens: int) -> str:
    usage = {
        "input_tokens": tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 5,
    }
    message = {
        "id": f"m{tokens}",
        "model": "claude-opus-5-5",
        "usage": usage,
        "content": [{"type": "text", "text": text}],
    }
    record = {
        "type": "assistant",
        "isSidechain": False,
        "message": message,
        "timestamp": "2026-11-21T23:58:04.591Z",
    }
    return json.dumps(record) + "\n"


def test_the_last_answers_usage_is_found_far_from_the_end_and_with_its_time(tmp_path) -> None:
    # The footer reads it: the end of the file first, more only when the answer is not there.
    path = tmp_path / "t.jsonl"
    progress = json.dumps({"type": "progress", "data": "x" * 1000}) + "\n"
    path.write_text(answer("older", 10) + answer("newest", 20) + progress * 200)
    usage = transcript.last_usage(str(path))
    assert usage is not None and usage["text"] == "newest" and usage["context_tokens"] == 20
    assert usage["at"] == 1795305484.591 and usage["model"] == "claude-opus-5-5"


def test_an_answer_longer_than_the_first_look_is_not_taken_for_an_older_one(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(answer("older", 10) + answer("long " * 40_000, 20))  # 200 KB on one line
    usage = transcript.last_usage(str(path))
    assert usage is not None and usage["context_tokens"] == 20


def _prompt_line(text: object, stamp: str, **extra: object) -> str:
    import json

    record = {"type": "user", "message": {"role": "user", "content": text}, "timestamp": stamp}
    return json.dumps({**record, **extra}) + "\n"


def test_a_prompt_typed_since_is_found_by_its_words(tmp_path) -> None:
    """What the catch-up asks after a bot killed between typing and recording: did the prompt
    reach Claude Code? (2026-11-29T02:00:00Z = 1795917600.)"""
    since = 1795917600.0
    digest = transcript.prompt_digest("deploy it\nnow ")
    path = tmp_path / "t.jsonl"
    blocks = [{"type": "text", "text": "deploy it now"}]
    tool_result = _prompt_line(blocks, "2026-11-29T02:00:02.000Z", toolUseResult={})
    path.write_text(
        _prompt_line("deploy it now", "2026-11-29T01:59:00.000Z")  # the same words, before
        + _prompt_line("deploy it", "2026-11-29T02:00:01.000Z")  # other words, after
        + tool_result  # a tool's result: no prompt
    )
    assert not transcript.prompt_since(str(path), since, digest)
    with path.open("a") as handle:
        handle.write(
            _prompt_line([{"type": "text", "text": "deploy it  now"}], "2026-11-29T02:00:03.000Z")
        )
    assert transcript.prompt_since(str(path), since, digest)
    assert not transcript.prompt_since(str(path), since + 10, digest)
    assert not transcript.prompt_since(str(tmp_path / "missing.jsonl"), since, digest)
    assert not transcript.prompt_since(None, since, digest)


def test_a_prompt_taken_into_claude_codes_own_queue_counts_as_typed(tmp_path) -> None:
    """Typed during a turn, a prompt is first an ``enqueue`` line (2.1.332) and a user record
    only once the turn ends: a bot killed meanwhile must not type it a second time."""
    import json

    since, path = 1795917600.0, tmp_path / "t.jsonl"
    digest = transcript.prompt_digest("offline message number 1")

    def enqueue(content: str, stamp: str, operation: str = "enqueue") -> str:
        record = {"type": "queue-operation", "operation": operation, "timestamp": stamp}
        return json.dumps({**record, "content": content}) + "\n"

    path.write_text(
        enqueue("offline message number 1", "2026-11-29T01:59:00.000Z")  # before: not this one
        + enqueue("offline message number 1", "2026-11-29T02:00:02.000Z", "remove")
        + enqueue("offline message number 2", "2026-11-29T02:00:02.000Z")
    )
    assert not transcript.prompt_since(str(path), since, digest)
    with path.open("a") as handle:
        handle.write(enqueue("offline message number 1", "2026-11-29T02:00:03.000Z"))
    assert transcript.prompt_since(str(path), since, digest)


def test_conversation_since_an_offset_is_a_user_or_assistant_record(tmp_path) -> None:
    from bridge.claude.transcript import conversation_since

    path = tmp_path / "t.jsonl"
    assert not conversation_since(str(path), 0)  # none yet: a new conversation's first prompt
    path.write_text(json.dumps({"type": "user", "message": {"content": "old"}}) + "\n")
    offset = path.stat().st_size
    assert not conversation_since(str(path), offset)
    with path.open("a") as f:
        f.write(json.dumps({"type": "file-history-snapshot"}) + "\n")
        f.write('{"type": "user", "mess')  # still being written
    assert not conversation_since(str(path), offset)
    with path.open("a") as f:
        f.write('age": {"content": "new"}}\n')
    assert conversation_since(str(path), offset)
    assert conversation_since(str(tmp_path), 0)  # unreadable: take it as recorded
