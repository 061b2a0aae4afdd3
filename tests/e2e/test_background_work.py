"""Claude Code 2.1.332's background work, seen from Discord: the agent view stays out of a
bridge session (← on an empty prompt would move the session into a daemon under a new id), and
a background task's result, which arrives as a prompt, is shown as the task's, never as the
owner's words.

Real CLI in tmux, real hooks, real bot against the emulator.
"""

from __future__ import annotations

import json

from bridge.claude.screen import input_box, is_prompt_ready
from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text, text, tool_use
from fake_anthropic.claude_cli import TmuxServer
from tests.e2e.test_control import command


def conversation_id(rig) -> str:
    path = rig.state_dir / "sessions" / f"{rig.ids['project-a']}.json"
    wait_until(path.exists, what="the SessionStart record")
    return json.loads(path.read_text())["session_id"]


def test_left_on_an_empty_prompt_never_opens_the_agent_view(rig) -> None:
    rig.api.script(echo(), echo())
    rig.start_bot()
    assert command(rig, "start").startswith("Started **project-a**")
    wait_until(lambda: is_prompt_ready(rig.screen()), what="the input box")
    # Bridge sessions run with the agent view off: its footer hint is not there.
    assert "← for agents" not in rig.screen(), rig.screen()  # 2.1.332 hints at it here
    session = conversation_id(rig)

    # /keys will not press a bare ← into an empty box (on a session started without the
    # setting, by another bridge version or by hand, it would open the agent view).
    answer = command(rig, "keys", {"keys": "Left"})
    assert answer.startswith("⚠️") and "agent view" in answer, answer
    answer = command(rig, "keys", {"keys": "Enter Left"})
    assert answer.startswith("⚠️") and "agent view" in answer, answer
    # With text before it, ← only moves the cursor: sent.
    assert command(rig, "keys", {"keys": "abc Left Left X"}) == "Sent: 'abc' Left Left 'X'"
    wait_until(lambda: input_box(rig.screen()) == "aXbc", timeout=10, what="the edited line")
    command(rig, "keys", {"keys": "End C-u"})

    # Pressed at the terminal, ← on the empty box does nothing: the same conversation goes on.
    pane = rig.pane("project-a")
    wait_until(lambda: is_prompt_ready(rig.screen()), what="the empty box")
    rig.tmux.press(pane.pane_id, "Left")
    rig.post("still here?")
    rig.wait_bot_message(content_contains="Model saw: still here?", timeout=60)
    screen = rig.screen()
    assert "moved to the background" not in screen, screen
    assert conversation_id(rig) == session


def test_a_background_tasks_report_is_shown_as_the_tasks_not_the_owners(rig) -> None:
    """A background command finishing while the session is idle arrives as a prompt
    (``<task-notification>…``) and a second Stop: its reply says what reported back, and the
    owner, pinged by the first reply, is not pinged again for it."""
    raw = rig.config()
    raw["notifications"] = {"mentionOwner": True}
    raw["servers"][0]["projects"][0]["permission"] = "bypassPermissions"
    rig.write_config(raw)
    background = {"command": "sleep 2", "description": "bg sleep", "run_in_background": True}
    rig.api.script(tool_use("Bash", background), text("started it"), echo("After the task: "))
    rig.start_bot()
    alice = f"<@{rig.ids['alice']}>"
    rig.post("run it in the background")
    first = rig.wait_bot_message(content_contains="started it", timeout=60)
    assert alice in first["content"]

    second = rig.wait_bot_message(content_contains="After the task:", timeout=60)
    lines = second["content"].splitlines()
    assert lines[0] == (
        '-# 🤖 A background task reported back: Background command "bg sleep" completed '
        "(exit code 0)"
    ), second["content"]
    assert alice not in second["content"]  # the owner already knows Claude waits
    # The model got it as Claude Code's notification, not as the owner's words; the channel
    # holds the two replies and nothing that reads as a message of the owner's.
    told = last_user_text(rig.api.requests[-1], keep_reminders=True)
    assert "<task-notification>" in told and "NOT USER INPUT" in told, told
    said = rig.bot_messages()
    assert [m["id"] for m in said] == [first["id"], second["id"]], [m["content"] for m in said]


def test_a_background_session_finishing_in_the_agent_view_is_said(rig) -> None:
    """The owner's own ``claude`` in a mapped project (started at the terminal, with the agent
    view on) moved to the background with ←, and given more work from the agent view: when
    Claude Code finds it done, its Notification ``agent_completed`` reaches the channel (found
    by the directory)."""
    rig.api.script(text("all done here"), text("more done"))
    rig.start_bot()
    since = rig.discord.mark()
    with TmuxServer() as terminal:  # the owner's terminal, not the bridge's tmux
        target = terminal.new_session("mine", rig.projects["project-a"], "claude", env=rig.env)
        terminal.wait_ready(target, timeout=60)
        terminal.submit(target, "tidy up")
        terminal.wait_idle(target, timeout=60, containing="all done here")
        terminal.send_keys(target, "Left")  # the session moves to the background
        terminal.wait_for(target, "moved to the background", timeout=30)
        terminal.send_keys(target, "Space")  # a reply to it, from the agent view
        terminal.wait_for(target, "╭", timeout=10)  # its reply box
        terminal.send_text(target, "a bit more")
        terminal.send_keys(target, "Enter")
        notice = rig.wait_bot_message(content_contains="🔔", since=since, timeout=90)
    assert notice["content"].endswith("finished"), notice["content"]
    assert f"<@{rig.ids['alice']}>" not in notice["content"]  # done: nobody to ping
