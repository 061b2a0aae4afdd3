"""Messages sent while the bot was stopped: read from the channel's history when it is back,
typed once (young ones, with a note) or offered with Send now / Drop (old ones). The real bot,
the real Claude Code CLI in tmux, the emulator's history."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bridge.claude.screen import is_prompt_ready
from bridge.claude.transcript import prompt_digest
from bridge.state import handled_messages, runtime
from bridge.state.handled_messages import Handled, Typing
from bridge_testkit import wait_until
from fake_anthropic import last_user_text, text


def handled_file(rig, project: str = "project-a") -> Path:
    return rig.state_dir / "state" / f"handled-{rig.ids[project]}.json"


def start_and_settle(rig) -> None:
    """Start the bot and wait until it has noted where each channel is (its first catch-up)."""
    rig.start_bot()
    wait_until(
        lambda: all(handled_file(rig, p).exists() for p in rig.projects),
        30,
        "the bot to note each channel's newest message",
    )


def user_words(request: dict) -> str:
    """Every user message of a request (the whole conversation so far), as JSON text."""
    return json.dumps([m for m in request["messages"] if m["role"] == "user"])


def buttons(message: dict) -> dict[str, str]:
    return {
        c["label"]: c["custom_id"]
        for row in message.get("components") or []
        for c in row.get("components") or []
    }


def test_a_message_sent_while_the_bot_was_stopped_is_typed_once_with_a_note(rig) -> None:
    rig.api.script(text("done"), text("done again"))
    start_and_settle(rig)
    rig.stop_bot()
    sent = rig.post("sent while the bridge was down", attachments=[("notes.txt", b"offline")])

    rig.start_bot()
    note = rig.wait_bot_message(content_contains="Sent while the bridge was offline")
    assert note["message_reference"]["message_id"] == sent["id"]
    assert "typing it now" in note["content"]
    (request,) = rig.api.wait_requests(1, timeout=90)
    typed = last_user_text(request)
    assert typed.startswith("sent while the bridge was down\nAttached file: "), typed
    assert Path(typed.split("Attached file: ")[1].strip()).read_bytes() == b"offline"
    rig.wait_reaction(sent)

    rig.stop_bot()  # and once more: what was caught up on is not typed again
    rig.start_bot()
    rig.post("a live one after")
    rig.wait_bot_message(content_contains="done again", timeout=90)
    _, second = rig.api.wait_requests(2)
    assert last_user_text(second) == "a live one after"
    assert user_words(second).count("sent while the bridge was down") == 1
    notes = [m for m in rig.bot_messages() if "offline" in (m.get("content") or "")]
    assert len(notes) == 1, notes


def test_a_live_message_during_the_catch_up_comes_after_the_missed_ones_once(rig) -> None:
    rig.api.script(*[text(f"done {i}") for i in range(4)])
    start_and_settle(rig)
    rig.stop_bot()
    missed = [rig.post(f"missed message {i}") for i in range(2)]
    rig.start_bot()  # back on the gateway: the history is being read now
    live = rig.post("a live message meanwhile")
    for message in (*missed, live):
        rig.wait_reaction(message, timeout=90)
    rig.post("the last word")
    final = wait_until(
        lambda: next(
            (r for r in rig.api.requests if last_user_text(r).endswith("the last word")), None
        ),
        90,
        "the last message to reach the model",
    )
    words = user_words(final)
    typed = ("missed message 0", "missed message 1", "a live message")
    # Twice (fresh-clone runs) the live one overtook a missed one left in Claude Code's own
    # queue at a turn's end: out of order, or not yet sent when the last word was
    # (pane_input waits for that queue now). Say which is missing, with what each request had.
    missing = [t for t in typed if t not in words]
    assert not missing, (
        missing,
        [last_user_text(r)[-200:] for r in rig.api.requests],
        rig.screen(),
        rig.bot_output()[-3000:],
    )
    order = [words.index(t) for t in typed]
    assert order == sorted(order), words
    for typed in ("missed message 0", "missed message 1", "a live message meanwhile"):
        assert words.count(typed) == 1, (typed, words)


def test_a_thread_session_catches_up_on_its_own_messages(rig) -> None:
    rig.api.script(text("thread started"), text("thread caught up"))
    start_and_settle(rig)
    thread = rig.discord.create_thread(rig.ids["project-a"], "side task")
    rig.discord.post_message(thread["id"], "start the thread's session")
    rig.api.wait_requests(1, timeout=90)
    rig.stop_bot()
    sent = rig.discord.post_message(thread["id"], "sent to the thread while away")
    rig.post("nothing for the channel", user="bob")

    rig.start_bot()
    _, request = rig.api.wait_requests(2, timeout=90)
    assert last_user_text(request) == "sent to the thread while away"
    rig.wait_reaction(sent)
    pane = rig.tmux.find(thread["id"])
    assert pane is not None and "sent to the thread while away" in rig.tmux.capture(pane.pane_id)
    assert rig.tmux.find(rig.ids["project-a"]) is None  # the channel's own session: untouched


def test_an_old_message_waits_for_send_now_or_drop(rig) -> None:
    rig.api.script(text("deployed"))
    start_and_settle(rig)
    rig.stop_bot()
    deploy = rig.post("deploy it", age_seconds=3600)
    stale = rig.post("rename everything", age_seconds=2 * 3600)

    rig.start_bot()
    offer = rig.wait_bot_message(content_contains="> deploy it", status=True)
    other = rig.wait_bot_message(content_contains="> rename everything", status=True)
    assert "1 h ago" in offer["content"] and "Not typed by itself" in offer["content"]
    assert offer["message_reference"]["message_id"] == deploy["id"]
    assert set(buttons(offer)) == {"▶ Send now", "✖ Drop"}
    assert rig.tmux.find(rig.ids["project-a"]) is None  # nothing typed, nothing started

    since = rig.discord.mark()
    rig.discord.click(other["id"], buttons(other)["✖ Drop"])
    rig.discord.wait(
        since=since, kind="message_update", message_id=other["id"], content_contains="Dropped"
    )
    rig.discord.click(offer["id"], buttons(offer)["▶ Send now"])
    (request,) = rig.api.wait_requests(1, timeout=90)
    assert last_user_text(request) == "deploy it"
    rig.wait_reaction(deploy)
    rig.wait_bot_message(content_contains="deployed")

    updated = {m["id"]: m for m in rig.discord.messages(rig.ids["project-a"])}
    assert "▶ Sent." in updated[offer["id"]]["content"] and not updated[offer["id"]]["components"]
    assert "✖ Dropped" in updated[other["id"]]["content"] and not updated[other["id"]]["components"]
    assert len(rig.api.requests) == 1
    assert "rename everything" not in rig.screen() and "✅" not in rig.discord.reactions(
        stale["channel_id"], stale["id"]
    )


def test_strangers_bots_and_deleted_messages_are_not_typed_an_edited_one_as_edited(rig) -> None:
    rig.api.script(text("done"), text("done again"))
    start_and_settle(rig)
    rig.stop_bot()
    channel = rig.ids["project-a"]
    rig.post("from bob while away: rm -rf ~", user="bob")
    rig.post("from a bot while away", user="carol", bot=True)
    rig.post("through a webhook while away", webhook_id=rig.ids["guild_id"])
    rig.post("a system message while away", message_type=18)
    edited = rig.post("the first words")
    rig.discord.edit_user_message(channel, edited["id"], "the words as edited")
    gone = rig.post("deleted before the bot came back")
    rig.discord.delete_user_message(channel, gone["id"])

    rig.start_bot()
    (request,) = rig.api.wait_requests(1, timeout=90)
    assert last_user_text(request) == "the words as edited"
    rig.wait_reaction(edited)
    rig.post("a live one after")
    _, second = rig.api.wait_requests(2, timeout=90)
    assert last_user_text(second) == "a live one after"
    words = user_words(second)
    for never in (
        "from bob",
        "from a bot",
        "through a webhook",
        "a system message while",
        "the first words",
        "deleted before",
    ):
        assert never not in words, never
    assert words.count("the words as edited") == 1


def test_a_bot_killed_mid_catch_up_types_the_rest_once_each(rig) -> None:
    rig.api.script(*[text(f"done {i}") for i in range(6)])
    start_and_settle(rig)
    rig.stop_bot()
    sent = [rig.post(f"offline message number {i}") for i in range(3)]

    rig.start_bot()
    rig.wait_reaction(sent[0], timeout=90)  # the first is typed and recorded
    assert rig.bot is not None
    rig.bot.kill()  # SIGKILL: no shutdown, maybe in the middle of the next one
    rig.bot.wait()
    rig.bot = None

    rig.start_bot()
    for message in sent:
        rig.wait_reaction(message, timeout=90)
    rig.post("the last word")
    final = wait_until(
        lambda: next(
            (r for r in rig.api.requests if last_user_text(r).endswith("the last word")), None
        ),
        90,
        "the live message to reach the model",
    )
    words = user_words(final)
    for i in range(3):
        assert words.count(f"offline message number {i}") == 1, (i, words)


def test_a_message_typed_just_before_the_bot_was_killed_is_not_typed_again(rig) -> None:
    """Killed after Enter, before the record moved on: the record still says the message was
    being typed, and Claude Code's transcript has its prompt since, so it is not typed again."""
    rig.api.script(text("first"), text("typed before the kill"), text("after"))
    start_and_settle(rig)
    rig.post("start the session")
    rig.wait_bot_message(content_contains="first", timeout=90)
    rig.stop_bot()
    words = "the message the bot typed before it was killed"
    sent = rig.post(words)
    rt = runtime.Runtime(str(rig.runtime_dir), str(rig.state_dir))
    key = rig.ids["project-a"]
    record = handled_messages.load(rt, key)
    assert record is not None and record.last < int(sent["id"])
    typing = Typing(int(sent["id"]), time.time(), prompt_digest(words))
    handled_messages.save(rt, key, Handled(record.last, typing))
    pane = rig.pane().pane_id  # what the bot did before it died: the keys, then Enter
    rig.tmux.wait_for(pane, is_prompt_ready, 30)
    rig.tmux.type_literal(pane, words)
    rig.tmux.press(pane, "Enter")
    rig.api.wait_requests(2, timeout=60)

    rig.start_bot()
    rig.post("after")
    requests = rig.api.wait_requests(3, timeout=90)
    assert last_user_text(requests[-1]) == "after"
    assert user_words(requests[-1]).count(words) == 1
    assert not [m for m in rig.bot_messages() if "offline" in (m.get("content") or "")]


def test_a_record_that_cannot_be_trusted_types_nothing_and_the_bot_runs_on(rig) -> None:
    rig.api.script(text("done"))
    start_and_settle(rig)
    rig.stop_bot()
    handled_file(rig).write_text('{"last": [1, 2], "typing": "x"')  # torn, the wrong shape
    handled_file(rig, "project-b").chmod(0o644)  # open to others: not the bot's own
    rig.post("sent while the record was broken")
    rig.post("sent while project-b's record was open", project="project-b")

    rig.start_bot()
    wait_until(
        lambda: '"key"' in handled_file(rig).read_text(), 30, "the record to be written afresh"
    )
    assert handled_file(rig, "project-b").stat().st_mode & 0o077 == 0
    rig.post("a live one after")
    (request,) = rig.api.wait_requests(1, timeout=90)
    assert last_user_text(request) == "a live one after"
    assert "sent while the record was broken" not in user_words(request)
    assert rig.tmux.find(rig.ids["project-b"]) is None
    assert rig.bot is not None and rig.bot.poll() is None
