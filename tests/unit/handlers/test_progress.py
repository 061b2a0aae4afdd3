"""The status message's text, folded from the events hooks append."""

from __future__ import annotations

import os

import pytest

from bridge.discord.render.turn_status import TurnProgress, turn_cost
from bridge.handlers import background, progress
from bridge.state import progress_log


def test_a_turn_shows_streamed_text_the_running_tool_and_ends_closed() -> None:
    turn = TurnProgress(100.0)
    turn.apply({"kind": "text", "t": 101, "message_id": "m1", "delta": "I'll run "})
    turn.apply({"kind": "text", "t": 101, "message_id": "m1", "delta": "the tests."})
    turn.apply({"kind": "tool", "t": 102, "name": "Bash", "summary": "npm test"})
    shown = turn.render(110.0)
    assert shown.splitlines() == [
        "⏳ **Working** · 10 s · 1 tool",
        "> I'll run the tests.",
        "🔧 Bash: `npm test` · 8 s",
    ]
    turn.apply({"kind": "tool_done", "t": 111})
    assert turn.render(112.0).endswith("🔧 Bash: `npm test` ✓")
    turn.apply({"kind": "text", "t": 112, "message_id": "m2", "delta": "All green."})
    assert "> All green." in turn.render(112.0) and "I'll run" not in turn.render(112.0)
    turn.apply({"kind": "done", "t": 142})
    assert turn.render(200.0) == "✅ Done in 42 s · 1 tool"


def test_interrupted_and_waiting_states() -> None:
    turn = TurnProgress(0.0)
    turn.waiting = True
    assert turn.render(5.0).startswith("⏸ **Waiting for your answer** · 5 s")
    turn.finish("interrupted", 95.0, "123456789012345678")
    assert turn.render(99.0) == "⏹ Interrupted by <@123456789012345678> after 1 min 35 s · 0 tools"
    turn.apply({"kind": "done", "t": 120})  # a late Stop does not change the outcome
    assert turn.render(130.0).startswith("⏹ Interrupted")


def test_transcript_text_is_shown_with_its_mark_once() -> None:
    turn = TurnProgress(0.0)
    assert turn.show_transcript_text("Looking at the files.")
    assert not turn.show_transcript_text("Looking at the files.")  # de-duplicated
    assert "> 🔄 Looking at the files." in turn.render(1.0)
    turn.apply({"kind": "text", "t": 1, "message_id": "m", "delta": "streamed"})
    assert not turn.show_transcript_text("older text")  # MessageDisplay wins


def test_long_text_keeps_its_end_and_backticks_cannot_break_the_tool_line() -> None:
    turn = TurnProgress(0.0)
    turn.apply({"kind": "text", "t": 0, "message_id": "m", "delta": "x" * 5000 + "END"})
    turn.apply({"kind": "tool", "t": 0, "name": "Bash", "summary": "echo `id`"})
    shown = turn.render(1.0)
    assert len(shown) < 600 and "END" in shown and "echo 'id'" in shown


def test_tool_summary_is_one_short_line() -> None:
    assert progress.tool_summary("Bash", {"command": "npm  test\n--watch"}) == "npm test --watch"
    assert progress.tool_summary("Read", {"file_path": "/a/b.py"}) == "/a/b.py"
    assert len(progress.tool_summary("Bash", {"command": "y" * 500})) == progress.SUMMARY
    assert progress.tool_summary("Task", "not a dict") == ""


def test_read_events_takes_whole_lines_only_and_survives_rotation(tmp_path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"kind":"turn","t":1}\nnot json\n{"kind":"tool","t":2}\n{"kind":"te')
    os.chmod(path, 0o600)
    events, offset = progress_log.read_events(str(path), 0)
    assert [e["kind"] for e in events] == ["turn", "tool"]
    with open(path, "ab") as handle:
        handle.write(b'xt","t":3}\n')
    events, offset = progress_log.read_events(str(path), offset)
    assert [e["kind"] for e in events] == ["text"]
    path.write_bytes(b'{"kind":"done","t":4}\n')  # rotated: shorter than the offset
    events, _ = progress_log.read_events(str(path), offset)
    assert [e["kind"] for e in events] == ["done"]


def test_a_turn_ended_by_an_api_error_closes_saying_so() -> None:
    """StopFailure comes instead of Stop: the status says the API error ended the turn."""
    turn = TurnProgress(0.0)
    turn.apply({"kind": "tool", "t": 1, "name": "Bash", "summary": "make"})
    turn.apply({"kind": "failed", "t": 7, "error": "server_error", "details": "500 `bad` day"})
    assert turn.outcome == "failed"
    shown = "⚠️ Stopped by an API error (server_error: 500 'bad' day) after 7 s · 1 tool"
    assert turn.render(9.0) == shown
    turn.apply({"kind": "done", "t": 8})
    assert turn.outcome == "failed"


def test_a_turn_stopped_at_a_usage_limit_says_so_not_api_error() -> None:
    """A usage limit is not a failure to report: the "⏸ Usage limit" message beside it
    offers Resume; the status only says where the turn stopped."""
    turn = TurnProgress(0.0)
    turn.apply({"kind": "failed", "t": 3, "error": "rate_limit", "details": "limit reached"})
    assert turn.render(4.0) == "⏸ Stopped at a usage limit after 3 s · 0 tools"


def test_a_done_turn_shows_its_cost_and_what_it_changed() -> None:
    turn = TurnProgress(100.0)
    turn.apply({"kind": "turn", "t": 100, "session": "s-1", "cost0": 0.40})
    turn.apply({"kind": "tool", "t": 101, "name": "Edit", "session": "s-1"})
    changes = {"summary": "📝 3 files changed, +20 −4", "old": "a" * 40, "new": "b" * 40}
    turn.apply({"kind": "done", "t": 142, "changes": changes})
    assert turn.session == "s-1" and turn.changes == changes
    assert turn.render(150.0) == "✅ Done in 42 s · 1 tool\n📝 3 files changed, +20 −4"
    turn.cost = turn_cost(turn.cost0, 0.52)
    assert turn.render(150.0).splitlines()[0] == "✅ Done in 42 s · 1 tool · $0.12"


def test_a_turns_cost_is_the_difference_of_the_statusline_figures() -> None:
    assert turn_cost(0.40, 0.52) == pytest.approx(0.12)
    assert turn_cost(0.0, 0.05) == 0.05
    assert turn_cost(None, 0.05) is None  # the turn's start was not seen
    assert turn_cost(1.0, 0.3) == 0.3  # a new process (resumed): its whole cost
    assert turn_cost(0.4, None) is None and turn_cost(0.4, True) is None


def test_a_sessions_first_turn_starts_at_zero_an_unseen_start_is_unknown() -> None:
    first = TurnProgress(0.0)
    first.apply({"kind": "turn", "t": 0, "session": "s-1"})  # no statusLine figure yet
    assert first.cost0 == 0.0
    joined = TurnProgress(0.0)
    joined.apply({"kind": "tool", "t": 0, "name": "Bash", "session": "s-1"})
    assert joined.cost0 is None


def test_a_summary_that_is_not_ours_is_not_shown() -> None:
    turn = TurnProgress(0.0)
    turn.apply({"kind": "done", "t": 1, "changes": {"summary": "@everyone"}})
    assert turn.render(2.0) == "✅ Done in 1 s · 0 tools"


def test_a_turn_a_background_task_started_says_so() -> None:
    turn = TurnProgress(0.0)
    about = 'Agent "Check files" finished'
    turn.apply({"kind": "turn", "t": 0, "task": about})
    assert turn.render(3.0).splitlines() == [
        "⏳ **Working** · 3 s · 0 tools",
        f"-# 🤖 A background task reported back: {about}",
    ]
    mine = TurnProgress(0.0)
    mine.apply({"kind": "turn", "t": 0, "task": None})
    assert "background" not in mine.render(3.0)


@pytest.mark.parametrize(
    ("prompt", "shown"),
    [
        (
            "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
            '<summary>Background command "bg sleep" completed (exit code 0)</summary>\n'
            "</task-notification>",
            'Background command "bg sleep" completed (exit code 0)',
        ),
        (
            "<task-notification>\n<summary>Agent `x` @everyone\n finished</summary>",
            "Agent 'x' @\u200beveryone finished",
        ),
        ("<task-notification>\n<task-id>b1</task-id>", "a background task finished"),
    ],
)
def test_a_task_report_is_told_by_its_summary(prompt: str, shown: str) -> None:
    assert background.is_task_report(prompt)
    assert background.summary(prompt) == shown


def test_what_the_owner_types_is_never_a_task_report() -> None:
    assert not background.is_task_report(" <task-notification> typed by hand")
    assert not background.is_task_report("please read <task-notification>")
