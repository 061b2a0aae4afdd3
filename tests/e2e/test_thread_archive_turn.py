"""A thread archived by its owner while Claude works: what the bridge shows is final."""

from __future__ import annotations

from bridge_testkit import wait_until
from fake_anthropic import text
from tests.e2e.test_threads import wait_reply


def test_archiving_a_thread_mid_turn_closes_its_status_and_keeps_it_archived(rig) -> None:
    rig.api.script(text("this answer never comes", delay=120))
    rig.start_bot()
    thread = rig.discord.create_thread(rig.ids["project-a"], "Long job")
    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "work for a long time")
    status = wait_reply(rig, thread["id"], "⏳ **Working**", since)

    since = rig.discord.mark()
    rig.discord.archive_thread(thread["id"])  # by the owner: the session ends
    edit = rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=status["id"],
        content_contains="Thread archived",
        timeout=30,
    )["message"]
    assert edit["content"].startswith("🗄️ Thread archived: its session was stopped after ")
    assert edit["components"] == []  # no ⏹ left to press
    wait_until(lambda: rig.tmux.find(thread["id"]) is None, 30, "the session to end")
    # Nothing is posted ("Claude Code exited" was): a post would un-archive the thread.
    posted = [
        r["message"]["content"]
        for r in rig.discord.records(since=since, kind="message_create")
        if r.get("channel_id") == thread["id"]
    ]
    assert posted == []
    reopened = [
        r
        for r in rig.discord.records(since=since, kind="thread_update")
        if (r.get("thread") or {}).get("id") == thread["id"]
        and not r["thread"]["thread_metadata"]["archived"]
    ]
    assert reopened == []
