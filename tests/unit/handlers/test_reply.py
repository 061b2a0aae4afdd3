"""How a reply ends: the footer line from the statusLine cache, and a very long reply cut short
with the whole of it attached as reply.md."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from bridge import fastjson
from bridge.discord.render.footer import footer_line, summary
from bridge.handlers.reply import FULL_REPLY_NOTE, SLOW_REPLY_NOTE, Tail, build_posts
from bridge.handlers.reply_footer import reply_footer
from bridge.state import private_files
from bridge.state.runtime import Runtime

RECORD = {
    "model_id": "claude-opus-5-5",
    "model_name": "Opus 5.5",
    "context_percent": 12,
    "cost_usd": 0.4312,
}


# --- footer -----------------------------------------------------------------------------------


def test_footer_line() -> None:
    assert footer_line(RECORD) == "-# Opus 5.5 · ctx 12% · $0.43"


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({**RECORD, "context_percent": None}, "Opus 5.5 · $0.43"),  # before the first API call
        ({**RECORD, "model_name": None}, "Opus 5.5 · ctx 12% · $0.43"),
        ({**RECORD, "context_percent": 7.6, "cost_usd": 0}, "Opus 5.5 · ctx 8% · $0.00"),
        (
            {**RECORD, "rate_limits": {"five_hour": 23.5, "seven_day": 41.2, "new_window": 3}},
            "Opus 5.5 · ctx 12% · $0.43 · 5h 24% · 7d 41% · new window 3%",
        ),
        (
            {"model_name": "Evil\n@everyone\x1b[31m", "cost_usd": float("nan")},
            "Evil @everyone [31m",
        ),
        ({"model_name": "x" * 200}, "x" * 59 + "…"),
        ({"context_percent": True, "cost_usd": "1"}, ""),
        ({}, ""),
    ],
)
def test_summary_leaves_out_what_is_missing_and_keeps_to_one_line(record, expected) -> None:
    assert summary(record) == expected
    assert footer_line(record) == (f"-# {expected}" if expected else "")


def test_reply_footer_reads_the_session_cache(tmp_path) -> None:
    rt = Runtime(str(tmp_path / "runtime")).ensure()
    private_files.write_atomic(f"{rt.status}/sess-1.json", fastjson.dumps(RECORD).encode())
    assert reply_footer(rt, "sess-1") == "-# Opus 5.5 · ctx 12% · $0.43"
    before_any_answer = {**RECORD, "context_percent": None, "cost_usd": 0}
    private_files.write_atomic(
        f"{rt.status}/sess-0.json", fastjson.dumps(before_any_answer).encode()
    )
    assert reply_footer(rt, "sess-0") == ""
    assert reply_footer(rt, "sess-2") == ""
    assert reply_footer(rt, None) == ""
    assert reply_footer(rt, "../status/sess-1") == ""


def transcript_with(path: Path, text: str, tokens: int, at: str, model: str = "claude-opus-5-5"):
    usage = {
        "input_tokens": tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 12,
    }
    record = {
        "type": "assistant",
        "isSidechain": False,
        "timestamp": at,
        "message": {
            "id": "m1",
            "model": model,
            "usage": usage,
            "content": [{"type": "text", "text": text}],
        },
    }
    with path.open("a") as handle:
        handle.write(fastjson.dumps(record) + "\n")
    return str(path)


def test_footer_of_a_first_reply_comes_from_the_transcript(tmp_path) -> None:
    # Regression: the statusLine refreshes after the Stop hook: a first reply had no footer.
    rt = Runtime(str(tmp_path / "runtime")).ensure()
    before_any_answer = {
        **RECORD,
        "context_percent": None,
        "cost_usd": 0,
        "context_window_size": 1_000_000,
    }
    private_files.write_atomic(
        f"{rt.status}/sess-0.json", fastjson.dumps(before_any_answer).encode()
    )
    path = transcript_with(tmp_path / "t.jsonl", "Hello!", 14_293, "2026-01-01T00:00:00Z")
    assert reply_footer(rt, "sess-0", path, "Hello!") == "-# Opus 5.5 · ctx 1%"
    # no statusLine at all: the model's id, a 200k window
    assert reply_footer(rt, "sess-9", path, "Hello!") == "-# Opus 5.5 · ctx 7%"


def test_footer_prefers_a_cache_newer_than_the_reply_and_replaces_a_stale_one(tmp_path) -> None:
    rt = Runtime(str(tmp_path / "runtime")).ensure()
    cache = f"{rt.status}/sess-1.json"
    private_files.write_atomic(
        cache, fastjson.dumps({**RECORD, "context_window_size": 100_000}).encode()
    )
    path = transcript_with(tmp_path / "t.jsonl", "Second.", 50_000, "2030-01-01T00:00:00Z")
    # the cache predates this reply's record: model and context from the transcript
    assert reply_footer(rt, "sess-1", path, "Second.") == "-# Opus 5.5 · ctx 50% · $0.43"
    os.utime(cache, (2e9, 2e9))  # refreshed after the reply: the CLI's own figures
    assert reply_footer(rt, "sess-1", path, "Second.") == "-# Opus 5.5 · ctx 12% · $0.43"


def test_footer_waits_only_briefly_for_a_record_that_never_comes(tmp_path) -> None:
    rt = Runtime(str(tmp_path / "runtime")).ensure()
    path = transcript_with(tmp_path / "t.jsonl", "An older reply.", 9_000, "2026-01-01T00:00:00Z")
    start = time.monotonic()
    assert reply_footer(rt, "sess-3", path, "This reply.", wait=0.3) == ""
    assert 0.3 <= time.monotonic() - start < 2


# --- build_posts: tables, footer, long replies --------------------------------------------------

FOOTER = "-# Opus 5.5 · ctx 12% · $0.43"


@pytest.fixture
def outputs(tmp_path: Path) -> str:
    path = tmp_path / "outputs"
    path.mkdir(mode=0o700)
    return str(path)


def contents(posts) -> list[str]:
    return [p.payload.get("content", "") for p in posts]


def long_reply(paragraphs: int = 12) -> str:
    """~1,000-character paragraphs with a code block in the middle of the text."""
    parts = [f"Paragraph {i}: " + "word " * 200 for i in range(paragraphs)]
    code = "```python\n" + "\n".join(f"x_{i} = {i}  # line {i}" for i in range(60)) + "\n```"
    parts.insert(paragraphs // 2, code)
    return "\n\n".join(parts)


def test_short_reply_ends_with_the_footer(outputs) -> None:
    posts = build_posts("All done.", outputs, 1 << 20, 4, Tail(FOOTER))
    assert contents(posts) == [f"All done.\n\n{FOOTER}"]
    assert build_posts("All done.", outputs, 1 << 20, 4)[0].payload["content"] == "All done."


def test_tables_are_rendered_before_splitting(outputs) -> None:
    text = "Totals:\n\n| item | n |\n|---|--:|\n| apples | 3 |\n| 日本 | 12 |"
    posts = build_posts(text, outputs, 1 << 20, 4, Tail(FOOTER))
    assert contents(posts) == [
        f"Totals:\n\n```\nitem   |  n\n-------+---\napples |  3\n日本   | 12\n```\n\n{FOOTER}"
    ]


def test_long_reply_posts_its_start_and_attaches_the_whole(outputs) -> None:
    text = long_reply()
    assert len(build_posts(text, outputs, 1 << 20, 99)) > 4  # would be more than 4 messages
    posts = build_posts(text, outputs, 1 << 20, 4, Tail(FOOTER))

    assert len(posts) == 4
    texts = contents(posts)
    assert texts[-1] == f"{FULL_REPLY_NOTE}\n\n{FOOTER}"
    assert [name for name, _ in posts[-1].files] == ["reply.md"]
    assert posts[-1].files[0][1] == text.rstrip().encode()  # markers out, trailing space too
    assert all(not p.files for p in posts[:-1])
    for chunk in texts:
        assert len(chunk) <= 2000
        assert len(re.findall(r"^```", chunk, re.MULTILINE)) % 2 == 0, chunk
    assert texts[0].startswith("Paragraph 0: ")
    shown = "".join(texts[:-1])
    assert text.startswith(shown[:1000]) and "Paragraph 1:" in shown


def test_exactly_attach_after_messages_are_posted_in_full(outputs) -> None:
    text = long_reply(3)  # three paragraphs and the code block: a few messages
    count = len(build_posts(text, outputs, 1 << 20, 99))
    posts = build_posts(text, outputs, 1 << 20, count)
    assert len(posts) == count and not any(p.files for p in posts)


def test_attach_after_one_posts_only_the_note_with_the_file(outputs) -> None:
    posts = build_posts(long_reply(), outputs, 1 << 20, 1, Tail(FOOTER))
    assert contents(posts) == [f"{FULL_REPLY_NOTE}\n\n{FOOTER}"]
    assert posts[0].files[0][0] == "reply.md"


def test_reply_beyond_the_upload_limit_is_cut_and_the_channel_is_told(outputs) -> None:
    # Regression: a reply over attachments.maxUploadBytes was posted in full (50 MB -> ~25,000
    # messages). Now its start is posted, reply.md holds what fits, and a note says what was cut.
    text = long_reply()
    posts = build_posts(text, outputs, 1000, 4, Tail(FOOTER))  # upload limit below the text's size
    assert len(posts) == 4
    last = contents(posts)[-1]
    assert last.startswith(FULL_REPLY_NOTE) and last.endswith(FOOTER)
    size = f"{len(text.encode()) / 1024:.1f} KiB"
    assert f"The reply is {size}, over the 1000 bytes upload limit" in last
    assert "the rest was cut" in last
    assert posts[-1].files == [("reply.md", text.encode()[:1000])]


def test_a_50_mb_reply_takes_a_few_messages_and_little_time(outputs) -> None:
    text = ("A line of a very long reply, with | pipes | in it.\n" * 1_000_000)[: 50 << 20]
    start = time.perf_counter()
    posts = build_posts(text, outputs, 10 << 20, 4, Tail(FOOTER))
    elapsed = time.perf_counter() - start
    assert len(posts) == 4 and elapsed < 5, elapsed
    assert "over the 10 MiB upload limit" in contents(posts)[-1]
    name, data = posts[-1].files[0]
    assert name == "reply.md" and len(data) == 10 << 20 and text.encode().startswith(data)
    assert contents(posts)[0].startswith("A line of a very long reply")


def test_a_reply_that_cannot_be_laid_out_in_time_is_attached(outputs) -> None:
    text = "`" * 100_000 + "\n\nDone."
    posts = build_posts(text, outputs, 1 << 20, 4, Tail(FOOTER), budget=0)
    assert contents(posts) == [f"{SLOW_REPLY_NOTE}\n\n{FOOTER}"]
    assert posts[0].files == [("reply.md", text.encode())]


def test_a_reply_of_100_000_backticks_is_built_well_within_the_hooks_timeout(outputs) -> None:
    for char in "`~":
        start = time.perf_counter()
        posts = build_posts(char * 100_000, outputs, 1 << 20, 4, Tail(FOOTER))
        assert time.perf_counter() - start < 1.0
        assert len(posts) == 4 and posts[-1].files[0][0] == "reply.md"


def test_reply_md_keeps_markdown_tables_and_comes_before_claudes_files(outputs) -> None:
    Path(outputs, "reply.md").write_text("Claude's own file")
    table = "| a | b |\n|---|---|\n| 1 | 2 |"
    text = long_reply() + "\n\n" + table + "\n\n[DISCORD_ATTACH: reply.md]\n[DISCORD_ATTACH: nope]"
    posts = build_posts(text, outputs, 1 << 20, 3, Tail(FOOTER))
    assert len(posts) == 3
    last = posts[-1]
    assert [name for name, _ in last.files] == ["reply.md", "reply-2.md"]
    full = last.files[0][1].decode()
    assert full.endswith(table) and "DISCORD_ATTACH" not in full
    assert last.files[1][1] == b"Claude's own file"
    assert last.payload["content"].startswith(FULL_REPLY_NOTE + "\n\n⚠️ Not attached: `nope`")
    assert last.payload["content"].endswith(FOOTER)


def test_footer_after_a_reply_cut_off_inside_a_code_block_is_not_code(tmp_path) -> None:
    cut_off = "Here:\n```python\nx = 1"  # the reply ended mid-code (token limit)
    posts = build_posts(cut_off, str(tmp_path), 1 << 20, tail=Tail("-# Opus · ctx 3%"))
    content = posts[-1].payload["content"]
    assert content == "Here:\n```python\nx = 1\n```\n\n-# Opus · ctx 3%"


# --- the tail: footer, the owner's mention, the Diff button -------------------------------------

MENTION = "<@100000000000000042>"
GRANTED = {"parse": [], "users": ["100000000000000042"]}
DIFF_ROW = [{"type": 1, "components": [{"type": 2, "style": 2, "label": "Diff", "custom_id": "d"}]}]


def test_the_tail_puts_the_mention_on_the_footer_line_and_the_changes_above_it() -> None:
    assert Tail(FOOTER, MENTION).text() == f"{FOOTER} · 🔔 {MENTION}"
    assert Tail("", MENTION).text() == f"-# 🔔 {MENTION}"
    assert Tail(FOOTER, MENTION, "📝 2 files").text() == f"📝 2 files\n{FOOTER} · 🔔 {MENTION}"
    assert Tail("", MENTION, "📝 2 files").text() == f"📝 2 files\n-# 🔔 {MENTION}"
    assert Tail("", "", "📝 2 files").text() == "📝 2 files"
    assert Tail().text() == ""


def test_only_the_message_ending_with_the_tail_may_ping_and_the_last_one_gets_the_button(
    outputs,
) -> None:
    for i in range(11):  # one more than a message holds: the last one goes alone
        Path(outputs, f"f{i}.txt").write_text(str(i))
    markers = "\n".join(f"[DISCORD_ATTACH: f{i}.txt]" for i in range(11))
    text = f"{MENTION} wrote this.\n\n" + "word " * 300 + "\n\n" + "more " * 200 + "\n" + markers
    tail = Tail(FOOTER, MENTION, "📝 2 files", DIFF_ROW)
    posts = build_posts(text, outputs, 1 << 20, 4, tail)
    assert [len(p.files) for p in posts] == [0, 10, 1]
    assert contents(posts)[1].endswith(f"📝 2 files\n{FOOTER} · 🔔 {MENTION}")
    assert [p.payload["allowed_mentions"] for p in posts] == [{"parse": []}, GRANTED, {"parse": []}]
    assert [p.payload.get("components") for p in posts] == [None, None, DIFF_ROW]


def test_a_reply_too_long_to_post_pings_from_its_note(outputs) -> None:
    posts = build_posts(long_reply(), outputs, 1 << 20, 2, Tail("", MENTION))
    assert contents(posts)[-1] == f"{FULL_REPLY_NOTE}\n\n-# 🔔 {MENTION}"
    assert [p.payload["allowed_mentions"] for p in posts] == [{"parse": []}, GRANTED]


def test_a_reply_without_a_mention_pings_no_one(outputs) -> None:
    posts = build_posts(f"{MENTION} said hi", outputs, 1 << 20, 4, Tail(FOOTER))
    assert posts[0].payload["allowed_mentions"] == {"parse": []}
    assert "components" not in posts[0].payload


# --- a footer brought in later ------------------------------------------------------------------


def pending_tail() -> Tail:
    """A tail whose footer the bot brings in later, as the Stop hook makes it."""
    tail = Tail(FOOTER, MENTION)
    tail.pending = {
        "session_id": "s",
        "transcript_path": "/t/s.jsonl",
        "reply": "r",
        "line": tail.line(),
        "mention": MENTION,
    }
    tail.room = f"-# {'W' * 150} · 🔔 {MENTION}"
    return tail


def test_a_reply_whose_footer_comes_later_has_room_for_the_longest_footer(outputs) -> None:
    # The bot's edit may make the footer line as long as the room: whatever the length of the
    # reply, its last message must still fit in Discord's 2,000 characters then.
    for size in range(1700, 2100, 9):
        tail = pending_tail()
        text = ("word " * size)[:size].rstrip() + "\n\nThe end."
        posts = build_posts(text, outputs, 1 << 20, 4, tail)
        last = contents(posts)[-1]
        assert last.endswith(f"{FOOTER} · 🔔 {MENTION}")  # the footer known now
        assert "\n\n".join(contents(posts)).endswith(f"The end.\n\n{FOOTER} · 🔔 {MENTION}")
        assert posts[-1].footer is tail.pending and posts[-1].footer["line"] == tail.line()
        assert len(last) - len(tail.line()) + len(tail.room) <= 2000, size
        assert [p.footer for p in posts[:-1]] == [None] * (len(posts) - 1)
