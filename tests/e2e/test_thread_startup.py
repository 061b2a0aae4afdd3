"""``startup: true`` on a ``threads[]`` entry: that thread's session starts with the bot."""

from __future__ import annotations

from bridge_testkit import wait_until
from fake_anthropic import echo
from fake_anthropic.claude_cli import screen_is_ready
from tests.e2e.test_threads import wait_reply


def test_thread_entry_with_startup_starts_with_the_bot(rig) -> None:
    rig.api.script(echo())
    parent = rig.ids["project-a"]
    started = rig.discord.create_thread(parent, "nightly")
    waiting = rig.discord.create_thread(parent, "someday")
    raw = rig.config()
    raw["servers"][0]["projects"][0]["threads"] = [
        {"name": "someday", "channelId": waiting["id"]},
        {"name": "nightly", "channelId": started["id"], "startup": True},
    ]
    rig.write_config(raw)
    rig.start_bot()

    pane = wait_until(lambda: rig.tmux.find(started["id"]), 30, "the startup thread's pane")
    assert pane.window_name == "project-a-nightly"
    rig.tmux.wait_for(pane.pane_id, screen_is_ready, 60)
    # Startup sessions are started in order (projects, then threads): the others stay down.
    assert rig.tmux.find(waiting["id"]) is None and rig.pane("project-a") is None
    assert [p.window_name for p in rig.tmux.panes()] == ["project-a-nightly"]

    # It is the thread's session: what is typed in the thread is answered there.
    since = rig.discord.mark()
    rig.discord.post_message(started["id"], "good morning")
    wait_reply(rig, started["id"], "Model saw: good morning", since)
    assert [p.pane_id for p in rig.tmux.panes()] == [pane.pane_id]
