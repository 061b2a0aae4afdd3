"""While Claude works: one status message per turn, edited in place, ⏹ Interrupt, closed.

Real CLI (its hooks append progress events), real bot (edits the status message), the
emulator records every create and edit with a server-side timestamp.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
import uuid

from bridge.state.locations import hook_args
from bridge_testkit import REPO, hook_input, is_status, wait_until
from fake_anthropic import error, text, tool_use


def last_prompt_id(transcript: str) -> str:
    """The ``promptId`` of the last prompt the user typed, from Claude Code's transcript."""
    with open(transcript, encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    return [r["promptId"] for r in records if r.get("type") == "user" and r.get("promptId")][-1]


EDITS = "PATCH /channels/{channel_id}/messages/{message_id}"


def status_messages(rig, project: str = "project-a") -> list[dict]:
    return [m for m in rig.bot_messages(project, status=True) if is_status(m)]


def records_of(rig, kind: str, message_id: str) -> list[dict]:
    return [r for r in rig.discord.records(kind=kind) if r["message"]["id"] == message_id]


def wait_status(rig, prefix: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [m for m in status_messages(rig) if m["content"].startswith(prefix)]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no status {prefix!r}: {status_messages(rig)}\n{rig.diagnostics()}")


def test_three_tool_calls_edit_one_status_message_closed_after_the_reply(rig) -> None:
    rig.api.script(
        tool_use("Bash", {"command": "echo one", "description": "First"}, delay=1.0),
        tool_use("Bash", {"command": "echo two", "description": "Second"}, delay=1.0),
        tool_use("Bash", {"command": "echo three", "description": "Third"}, delay=1.0),
        text("all three done", delay=1.0),
    )
    rig.start_bot()
    rig.post("run three commands")
    reply = rig.wait_bot_message(content_contains="all three done", timeout=60)
    closed = wait_status(rig, "✅ Done")

    assert len(status_messages(rig)) == 1  # one message for the turn, not one per tool
    assert "3 tools" in closed["content"]
    updates = records_of(rig, "message_update", closed["id"])
    assert len(updates) >= 2, updates  # edited while working, then closed
    shown = [r["message"]["content"] for r in records_of(rig, "message_create", closed["id"])]
    assert any(
        "🔧 Bash: `echo" in content
        for content in shown + [u["message"]["content"] for u in updates]
    )
    created = records_of(rig, "message_create", closed["id"])[0]
    reply_created = records_of(rig, "message_create", reply["id"])[0]
    assert created["seq"] < reply_created["seq"] < updates[-1]["seq"]  # status, reply, closed
    assert updates[-1]["message"]["components"] == []
    assert len(rig.bot_messages(status=True)) == 2


def test_fast_stream_edits_at_most_every_1_5_s_without_429(rig) -> None:
    rig.discord.set_bucket(EDITS, 5, 5.0)  # Discord's edit limit per channel
    # 20 lines of 20 words: Claude Code hands the hooks whole lines (MessageDisplay), so a reply
    # of one long line would reach the status only at its end, just before Stop closes it.
    words = "\n".join(" ".join(f"word{i}" for i in range(n, n + 20)) for n in range(0, 400, 20))
    rig.api.script(text(words, chunks=400, chunk_delay=0.015))  # ~6 s of streaming
    rig.start_bot()
    rig.post("stream a lot")
    rig.wait_bot_message(content_contains="word399", timeout=60)
    closed = wait_status(rig, "✅ Done")

    times = [r["t"] for r in records_of(rig, "message_update", closed["id"])]
    assert len(times) >= 2
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 1.45, gaps
    assert not any(k.startswith("429") for k in rig.discord.counters()), rig.discord.counters()
    streamed = [r["message"]["content"] for r in records_of(rig, "message_update", closed["id"])]
    working = [content for content in streamed if content.startswith("⏳")]
    assert any("> " in c and "word" in c for c in working), streamed  # the text as it streamed


def test_interrupt_button_stops_the_turn_and_closes_the_status(rig) -> None:
    rig.api.script(
        tool_use("Bash", {"command": "echo start", "description": "Start"}),
        text("should never be seen", delay=20),  # the model "thinks" for 20 s
    )
    rig.start_bot()
    rig.post("wait a long time")
    working = wait_status(rig, "⏳")
    # Click once the model's second answer is on its way, as test_escape_… below presses its
    # Escape: clicked while the first one streams, the Escape takes the prompt back into the box
    # (cleared by the bot: the turn is gone) and the terminal never says "Interrupted" (a
    # fresh-clone run at load: the screen check ran out its 15 s after a click 2.5 s in).
    rig.api.wait_requests(2, timeout=60)
    button = working["components"][0]["components"][0]
    bob = rig.discord.click(working["id"], button["custom_id"], user="bob")
    assert bob["ephemeral"] and bob["response_type"] == 4

    answer = rig.discord.click(working["id"], button["custom_id"])
    assert answer["response_type"] == 6  # acknowledged; the status is edited once it is sent
    closed = wait_status(rig, "⏹ Interrupted")
    assert f"by <@{rig.ids['alice']}>" in closed["content"]
    deadline = time.monotonic() + 15
    while "Interrupted" not in rig.screen():
        assert time.monotonic() < deadline, rig.screen()
        time.sleep(0.1)


def test_escape_in_the_terminal_closes_the_status_as_interrupted(rig) -> None:
    rig.api.script(
        tool_use("Bash", {"command": "echo start", "description": "Start"}),
        text("should never be seen", delay=20),
    )
    rig.start_bot()
    rig.post("wait a long time")
    wait_status(rig, "⏳")
    # Escape while the model's second answer is on its way (as a user presses it, seeing the
    # turn work): under load the status can show before Claude Code has recorded the prompt,
    # and an Escape then takes the prompt back into the box and leaves no turn to end.
    rig.api.wait_requests(2, timeout=60)
    rig.tmux.press(rig.pane().pane_id, "Escape")
    closed = wait_status(rig, "⏹ Interrupted")
    assert "by <@" not in closed["content"]


def test_progress_false_posts_no_status(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["projects"][0]["progress"] = False
    rig.write_config(raw)
    rig.api.script(
        tool_use("Bash", {"command": "echo quiet", "description": "Quiet"}, delay=1.5),
        text("quiet done", delay=1.5),
    )
    rig.start_bot()
    rig.post("be quiet")
    rig.wait_bot_message(content_contains="quiet done", timeout=60)
    # project-b (progress on) next: once its status is closed, project-a's events were read.
    rig.api.script(text("loud done", delay=2.5))
    rig.post("be loud", "project-b")
    rig.wait_bot_message("project-b", content_contains="loud done", timeout=60)
    wait_until(
        lambda: any(m["content"].startswith("✅ Done") for m in status_messages(rig, "project-b")),
        30,
        "project-b's status to close",
    )
    assert status_messages(rig) == []


def test_a_turn_ended_by_an_api_error_closes_its_status(rig) -> None:
    """An API error ends the turn with StopFailure instead of Stop: the status message must
    not stay "Working" (with a live ⏹) for ever."""
    rig.api.script(
        tool_use("Bash", {"command": "echo start", "description": "Start"}, delay=2.5),
        # the CLI retries a 400 a few times before it gives up
        *[error(400, "FAKE-BAD-REQUEST", error_type="invalid_request_error")] * 12,
    )
    rig.start_bot()
    rig.post("run into an api error")
    working = wait_status(rig, "⏳")
    deadline = time.monotonic() + 30
    while True:
        current = next(m for m in rig.bot_messages(status=True) if m["id"] == working["id"])
        if current["content"].startswith("⚠️"):
            break
        assert time.monotonic() < deadline, f"{current}\n{rig.diagnostics()}"
        time.sleep(0.1)
    assert "API error" in current["content"] and current["components"] == []
    notice = rig.wait_bot_message(content_contains="Claude Code stopped", timeout=30)
    assert "FAKE-BAD-REQUEST" in notice["content"], notice["content"]  # the CLI's own words
    assert "**What to do:**" in notice["content"], notice["content"]  # 2.1.332 says "unknown"


def test_not_logged_in_reaches_discord_in_the_clis_words_with_what_to_do(rig) -> None:
    """No API key and no login: Claude Code 2.1.332 starts, and the first prompt fails at
    once with StopFailure ``authentication_failed`` ("Not logged in · Please run /login");
    no request reaches the API, no reply comes. The channel gets that line and what to do,
    whether or not the project shows progress."""
    del rig.env["ANTHROPIC_API_KEY"]
    raw = rig.config()
    raw["servers"][0]["projects"][0]["progress"] = False
    rig.write_config(raw)
    rig.start_bot()
    rig.post("hello?")
    notice = rig.wait_bot_message(content_contains="Not logged in", timeout=60)
    content = notice["content"]
    assert content.startswith("⚠️ Claude Code stopped: Not logged in · Please run /login"), content
    assert "/login" in content and "ANTHROPIC_API_KEY" in content, content
    assert rig.api.requests == []


def test_a_session_that_dies_mid_turn_closes_its_status(rig) -> None:
    rig.api.script(
        tool_use("Bash", {"command": "echo start", "description": "Start"}),
        text("never", delay=20),
    )
    rig.start_bot()
    rig.post("work for a while")
    wait_status(rig, "⏳")
    rig.tmux.kill(rig.pane().pane_id)  # a crash: no Stop, no StopFailure
    closed = wait_status(rig, "⏹ The session ended", timeout=15)
    assert closed["components"] == []


def test_a_status_left_open_by_a_bot_restart_is_closed_by_the_next_bot(rig) -> None:
    rig.api.script(
        tool_use("Bash", {"command": "echo start", "description": "Start"}),
        text("slow answer", delay=8),
    )
    rig.start_bot()
    rig.post("work for a while")
    working = wait_status(rig, "⏳")
    rig.stop_bot()
    rig.start_bot()
    closed = wait_status(rig, "⏹ The bridge restarted")
    assert closed["id"] == working["id"] and closed["components"] == []
    rig.wait_bot_message(content_contains="slow answer", timeout=30)  # the turn itself goes on


def test_a_tool_result_holding_the_interrupt_words_is_not_an_interrupt(rig) -> None:
    """Issue 13.12: a file that holds "[Request interrupted by user]", read by Claude, put
    those words into the transcript as a tool result; the status said ⏹ Interrupted while
    the turn went on. Only Claude Code's own interrupt record counts."""
    notes = rig.projects["project-a"] / "notes.txt"
    marks = "[Request interrupted by user]\n[Request interrupted by user for tool use]\n"
    notes.write_text("log of yesterday:\n" + marks)
    rig.api.script(
        tool_use("Read", {"file_path": str(notes)}, delay=1.0),
        text("read the notes", delay=4.0),
    )
    rig.start_bot()
    rig.post("read my notes")
    rig.wait_bot_message(content_contains="read the notes", timeout=60)
    closed = wait_status(rig, "✅ Done")
    shown = [r["message"]["content"] for r in records_of(rig, "message_create", closed["id"])]
    shown += [r["message"]["content"] for r in records_of(rig, "message_update", closed["id"])]
    assert not any("Interrupted" in content for content in shown), shown


def test_a_late_message_display_of_an_ended_turn_starts_no_turn(rig) -> None:
    """Claude Code does not wait for the MessageDisplay hook: on a busy machine its record of
    the turn's last text can land after the Stop hook's. That text is the ended turn's (same
    ``prompt_id``): no new status message, and the next message is a new prompt, typed at
    once, not "typed into the running turn" (CI met this: a phantom turn that never ended)."""
    rig.api.script(text("first answer"), text("second answer"))
    rig.start_bot()
    rig.post("hello")
    rig.wait_bot_message(content_contains="first answer", timeout=60)
    progress_log = rig.runtime_dir / "progress" / f"{rig.ids['project-a']}.jsonl"
    wait_until(lambda: '"kind": "done"' in progress_log.read_text(), 30, "the turn's end")
    session = json.loads((rig.state_dir / "sessions" / f"{rig.ids['project-a']}.json").read_text())
    prompt_id = last_prompt_id(session["transcript_path"])
    late = hook_input(
        "MessageDisplay",
        session_id=session["session_id"],
        transcript_path=session["transcript_path"],
        cwd=rig.projects["project-a"],
        prompt_id=prompt_id,
        turn_id=str(uuid.uuid4()),
        message_id=str(uuid.uuid4()),
        index=0,
        final=True,
        delta="first answer",
    )
    env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": rig.ids["project-a"]}
    subprocess.run(
        [sys.executable, "-I", "-S", str(REPO / "hooks" / "message_display.py"), *hook_args(env)],
        input=json.dumps(late),
        env=env,
        text=True,
        check=True,
        timeout=30,
    )
    wait_until(lambda: "first answer" in progress_log.read_text().splitlines()[-1], 10, "recorded")
    time.sleep(0.5)  # the bot's watcher reads it (debounce 100 ms)

    mark = rig.discord.mark()
    sent = rig.post("again")
    rig.wait_bot_message(content_contains="second answer", timeout=60)
    rig.wait_reaction(sent)
    said = [
        r["message"]["content"]
        for r in rig.discord.records(since=mark, kind="message_create")
        if r["message"]["author"]["id"] == rig.ids["bot_id"]
    ]
    assert not any("running turn" in content for content in said), said
    assert not any("> first answer" in m["content"] for m in status_messages(rig)), said
