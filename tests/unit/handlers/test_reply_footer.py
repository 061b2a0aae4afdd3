"""The footer the bot brings in after the reply: what the hook hands it, what it may trust of
that, and the one line it changes."""

from __future__ import annotations

import json

import pytest

from bridge import fastjson
from bridge.handlers import reply_footer as footers
from bridge.state import private_files
from bridge.state.runtime import Runtime

SESSION = "5e551017-0000-4000-8000-00000000f007"
MENTION = "<@100000000000000042>"
EVENT = {"session_id": SESSION, "transcript_path": f"/home/u/.claude/projects/p/{SESSION}.jsonl"}


def test_the_bot_gets_the_end_of_the_reply_and_the_line_it_may_change() -> None:
    spec = footers.pending(EVENT, "x" * 10_000 + " the end  ", "-# 🔔 " + MENTION, MENTION)
    assert spec is not None
    assert spec["reply"] == ("x" * 10_000 + " the end")[-footers.REPLY_TAIL :]
    assert footers.read_pending(json.loads(json.dumps(spec))) == spec  # as the entry holds it


@pytest.mark.parametrize(
    "event",
    [
        {**EVENT, "session_id": "../../etc/passwd"},
        {**EVENT, "transcript_path": "relative/s.jsonl"},
        {**EVENT, "transcript_path": "/etc/shadow"},
        {**EVENT, "transcript_path": "/home/u/.claude/projects/p/another-session.jsonl"},
        {**EVENT, "transcript_path": None},
        {"transcript_path": EVENT["transcript_path"]},
    ],
)
def test_nothing_is_brought_in_for_ids_the_cli_does_not_make(event) -> None:
    assert footers.pending(event, "reply", "-# line", "") is None


def test_nothing_is_brought_in_without_a_line_to_change() -> None:
    assert footers.pending(EVENT, "reply", "", "") is None


@pytest.mark.parametrize(
    "change",
    [
        {"transcript_path": "/etc/passwd"},
        {"session_id": "a/b"},
        {"line": ""},
        {"line": 3},
        {"reply": "x" * (footers.REPLY_TAIL + 1)},
        {"mention": "x" * 200},
    ],
)
def test_an_entry_of_another_shape_brings_nothing_in(change) -> None:
    spec = footers.pending(EVENT, "reply", "-# line", MENTION)
    assert footers.read_pending({**spec, **change}) is None
    assert footers.read_pending("not a dict") is None


def test_the_edit_changes_the_footer_line_and_nothing_else() -> None:
    line = f"-# Opus 5.5 · ctx 3% · $0.43 · 🔔 {MENTION}"
    spec = footers.pending(EVENT, "reply", line, MENTION)
    content = f"The reply.\n📝 2 files\n{line}"
    new = footers.edited_content(content, spec, "-# Opus 5.5 · ctx 50% · $0.43")
    assert new == f"The reply.\n📝 2 files\n-# Opus 5.5 · ctx 50% · $0.43 · 🔔 {MENTION}"
    assert footers.edited_content(content, spec, "-# Opus 5.5 · ctx 3% · $0.43") is None  # same
    assert footers.edited_content("someone changed it", spec, "-# Opus") is None
    first = footers.pending(EVENT, "reply", f"-# 🔔 {MENTION}", MENTION)  # no footer known yet
    assert footers.edited_content(f"Hi.\n\n-# 🔔 {MENTION}", first, "-# Opus 5.5 · ctx 1%") == (
        f"Hi.\n\n-# Opus 5.5 · ctx 1% · 🔔 {MENTION}"
    )


def test_the_room_is_at_least_the_longest_line_the_edit_can_make(tmp_path) -> None:
    rt = Runtime(str(tmp_path / "runtime")).ensure()
    limits = {f"window_{i}": 99.5 for i in range(8)}
    record = {
        "model_name": None,
        "context_percent": None,
        "cost_usd": 1234.5,
        "rate_limits": limits,
        "context_window_size": 1,
    }
    private_files.write_atomic(f"{rt.status}/{SESSION}.json", fastjson.dumps(record).encode())
    transcript = tmp_path / f"{SESSION}.jsonl"
    usage = {"input_tokens": 10**9, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    line = {
        "type": "assistant",
        "timestamp": "2099-01-01T00:00:00Z",
        "message": {
            "model": "m" * 300,
            "usage": usage,
            "content": [{"type": "text", "text": "reply"}],
        },
    }
    transcript.write_text(json.dumps(line) + "\n")
    footer, final = footers.current_footer(rt, SESSION, str(transcript), "reply")
    assert final and footer.startswith("-# " + "m" * 59 + "… · ctx 100%")
    room = footers.longest_line(rt, SESSION, MENTION)
    assert len(room) >= len(footers.ending_line(footer, MENTION)) + footers.ROOM_MARGIN
