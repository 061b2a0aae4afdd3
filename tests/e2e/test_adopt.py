"""Every session on this machine: a ``claude`` started by hand in another tmux server is listed
by ``/sessions``, adopted into a thread, typed into, its replies and permission prompts reach
the thread, the adoption survives a bot restart, and **Release** gives the pane back running,
its hooks no longer routed (README "Every session on this machine").

The hand-started CLI is the real one against the fake Messages API, in a tmux server of its
own (``-L``, not the bot's), with none of the bridge's env markers: its hooks (installed in
the user's settings by ``discord-bridge hooks install``, as the rig does) find the thread only
through the session id the bot recorded at adoption.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text, tool_use
from fake_anthropic.claude_cli import TmuxServer, screen_is_idle
from tests.e2e.test_decisions import PERMISSION, custom_id, wait_closed


def hand_env(rig) -> dict[str, str]:
    """The rig's CLI environment without anything of the bridge's: a user's own shell."""
    return {k: v for k, v in rig.env.items() if not k.startswith("DISCORD_BRIDGE_")}


def answer(rig, result: dict) -> dict:
    """The message an ephemeral, deferred answer (``thinking…``, then the follow-up) shows."""
    assert result["ephemeral"], result
    if result["response_type"] == 4:
        return result["message"]
    # From the first record, not from now: the bot's follow-up can reach the emulator before
    # this wait does (a /history of one transcript answers in a few ms), and a wait from now
    # then misses it for its whole timeout. The interaction's id names its answer alone.
    record = rig.discord.wait(
        since=0, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )
    return record["message"]


def select_of(message: dict) -> dict:
    rows = message.get("components") or []
    return next(c for row in rows for c in row["components"] if c["type"] == 3)


def recorded_session(info) -> str:
    """The conversation id in Claude Code's own record of its process (``sessions/<pid>.json``),
    once written: the CLI writes it in place, so it can exist empty for a moment (seen once
    in three runs under load: a JSONDecodeError on the first read)."""

    def session_id() -> str | None:
        try:
            return json.loads(info.read_text())["sessionId"]
        except (OSError, ValueError, KeyError):
            return None

    return wait_until(session_id, 30, "Claude Code's own record of its session")


def pick_session(rig, socket_name: str) -> dict:
    """``/sessions``, then the option of the session in tmux server ``socket_name`` (paging
    on: other sessions of this machine are listed too); the answer to picking it."""
    listed = answer(rig, rig.discord.run_command(rig.ids["project-a"], "sessions"))
    for _ in range(20):
        select = select_of(listed)
        mine = [o for o in select["options"] if socket_name in o.get("description", "")]
        if mine:
            assert socket_name in listed["content"] or "more in the menu" in listed["content"]
            chosen = rig.discord.select(listed["id"], select["custom_id"], [mine[0]["value"]])
            return answer(rig, chosen)
        since = rig.discord.mark()  # before the click: its edit may land before the wait
        result = rig.discord.click(listed["id"], custom_id(listed, "Next"))
        assert result["response_type"] == 6, result  # the list is edited in place
        listed = rig.discord.wait(
            since=since, kind="message_update", message_id=listed["id"], timeout=30
        )["message"]
    raise AssertionError(f"{socket_name} not listed:\n{listed['content']}")


def stop_hook_runs(transcript) -> int:
    """How many times Claude Code ran its Stop hooks (one ``stop_hook_summary`` line each)."""
    if not transcript.exists():
        return 0
    lines = transcript.read_text().splitlines()
    return sum('"stop_hook_summary"' in line for line in lines)


def outbox_empty(rig) -> bool:
    """Nothing a hook handed to the bot waits to be posted (once its hooks have run, what
    they posted is at the emulator)."""
    return not list((rig.state_dir / "outbox").glob("*/*.json"))


def test_a_claude_started_by_hand_is_adopted_typed_into_and_released(rig) -> None:
    project = rig.projects["project-a"]
    rig.api.script(
        echo("Adopted saw: "),
        tool_use("Bash", {"command": "touch adopted.txt", "description": "Create a file"}),
        echo("After the tool: "),
        echo("After restart: "),
        echo("By hand: "),
    )
    rig.start_bot()
    socket_name = f"dbhand-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    with TmuxServer(socket_name) as mine:
        mine.new_session("mine", project, ["claude"], hand_env(rig))
        mine.wait_ready("mine", 60)
        pid = mine.tmux("display-message", "-p", "-t", "mine", "#{pane_pid}").strip()
        info = rig.claude_home / ".claude" / "sessions" / f"{pid}.json"
        session_id = recorded_session(info)

        # Listed with its directory, state and project; Adopt opens a thread for it.
        offer = pick_session(rig, socket_name)
        assert "project-a" in offer["content"] and "idle" in offer["content"], offer
        assert str(project) in offer["content"]
        adopted = answer(rig, rig.discord.click(offer["id"], custom_id(offer, "Adopt")))
        assert adopted["content"].startswith("Adopted into <#"), adopted
        thread = adopted["content"].split("<#", 1)[1].split(">", 1)[0]
        welcome = rig.wait_bot_message(thread, since=0, content_contains="Adopted")
        assert socket_name in welcome["content"]

        # Typed into its pane; the reply comes to the thread through its hooks.
        rig.discord.post_message(thread, "hello from the thread")
        reply = rig.wait_bot_message(thread, since=0, content_contains="Adopted saw:", timeout=60)
        assert "hello from the thread" in reply["content"]
        assert last_user_text(rig.api.requests[0]).endswith("hello from the thread")
        assert "hello from the thread" in mine.capture("mine")  # its pane, not a new one
        assert rig.pane() is None and not rig.tmux.panes()  # the bot started none of its own
        wait_until(lambda: screen_is_idle(mine.capture("mine")), 30, "the pane to be idle")

        # A permission prompt reaches the thread and its Allow reaches the pane's dialog.
        since = rig.discord.mark()
        rig.discord.post_message(thread, "make a file")
        prompt = rig.wait_bot_message(thread, since=since, content_contains=PERMISSION, timeout=60)
        assert "touch adopted.txt" in prompt["content"]
        rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
        wait_until((project / "adopted.txt").exists, 30, "the allowed command to run")
        wait_closed(rig, prompt)
        rig.wait_bot_message(thread, since=since, content_contains="After the tool:", timeout=60)
        wait_until(lambda: screen_is_idle(mine.capture("mine")), 30, "the pane to be idle")

        # The bot stops and starts again: the pane kept running, the thread still drives it.
        rig.stop_bot()
        assert mine.tmux("display-message", "-p", "-t", "mine", "#{pane_dead}").strip() == "0"
        rig.start_bot()
        since = rig.discord.mark()
        rig.discord.post_message(thread, "still there?")
        rig.wait_bot_message(thread, since=since, content_contains="After restart:", timeout=60)
        wait_until(lambda: screen_is_idle(mine.capture("mine")), 30, "the pane to be idle")

        # Release: the pane keeps running, untouched, and its hooks post nowhere any more.
        released = rig.discord.click(welcome["id"], custom_id(welcome, "Release"))
        assert "Released" in released["message"]["content"], released
        transcript = next((rig.claude_home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
        stops = stop_hook_runs(transcript)
        since = rig.discord.mark()
        mine.submit("mine", "typed at the terminal")
        wait_until(lambda: "By hand:" in mine.capture("mine"), 60, "the model's reply")
        wait_until(lambda: stop_hook_runs(transcript) > stops, 60, "its Stop hooks to run")
        hook_log = rig.state_dir / "logs" / "hooks.log"
        said = f"session {session_id} was released: its reply not posted"
        wait_until(lambda: hook_log.exists() and said in hook_log.read_text(), 30, "the Stop hook")
        wait_until(lambda: outbox_empty(rig), 30, "whatever the hooks spooled to be posted")
        assert mine.tmux("display-message", "-p", "-t", "mine", "#{pane_pid}").strip() == pid
        posted = [r for r in rig.discord.records(since=since, kind="message_create")]
        assert not [r for r in posted if "By hand" in r["message"]["content"]], posted


def test_a_past_conversation_resumed_in_a_thread_carries_its_earlier_prompt(rig) -> None:
    rig.api.script(echo("First saw: "), echo("Resumed saw: "))
    rig.start_bot()
    rig.post("remember the word pineapple")
    rig.wait_bot_message(content_contains="First saw:", timeout=60)
    wait_until(lambda: screen_is_idle(rig.screen()), 30, "Claude Code to be idle")
    # Claude Code writes its transcript behind the Stop hook: /history reads what is written
    # (a fresh-clone run listed no conversation once, and once none of its reply).
    record = json.loads((rig.state_dir / "sessions" / f"{rig.ids['project-a']}.json").read_text())
    transcript = Path(record["transcript_path"])
    wait_until(
        lambda: transcript.exists() and "First saw: remember" in transcript.read_text(),
        30,
        "the reply in the transcript",
    )
    since = rig.discord.mark()

    # Listed for the owner only; picking one shows its first prompt and last reply.
    listed = answer(rig, rig.discord.run_command(rig.ids["project-a"], "history"))
    assert listed["content"].startswith("**1 past conversation of project-a**"), listed
    select = select_of(listed)
    (mine,) = [o for o in select["options"] if "remember the word pineapple" in o["label"]]
    shown = answer(rig, rig.discord.select(listed["id"], select["custom_id"], [mine["value"]]))
    assert "remember the word pineapple" in shown["content"], shown
    assert "First saw: remember the word pineapple" in shown["content"]
    refused = rig.discord.run_command(rig.ids["project-a"], "history", user="bob")
    assert refused["ephemeral"] and "pineapple" not in json.dumps(refused)
    created = [r["message"] for r in rig.discord.records(since, "message_create")]
    public = [m["content"] for m in created if not m.get("flags", 0) & 64]  # not ephemeral
    assert not [c for c in public if "pineapple" in c], public  # nothing posted for all to see

    # Still open in the channel's session: not resumed a second time beside it.
    busy = rig.discord.click(shown["id"], custom_id(shown, "Resume in a thread"))
    assert "open in a running Claude Code" in busy["message"]["content"], busy
    stopped = answer(rig, rig.discord.run_command(rig.ids["project-a"], "stop"))
    assert "Stopped" in stopped["content"], stopped
    running = rig.claude_home / ".claude" / "sessions"
    wait_until(
        lambda: mine["value"] not in "".join(p.read_text() for p in running.glob("*.json")),
        30,
        "the stopped Claude Code to finish exiting",
    )

    # Resume in a thread: a new thread whose Claude Code continues that conversation.
    resumed = answer(rig, rig.discord.click(shown["id"], custom_id(shown, "Resume in a thread")))
    assert resumed["content"].startswith("Resumed in <#"), resumed["content"]
    thread = resumed["content"].split("<#", 1)[1].split(">", 1)[0]
    rig.discord.post_message(thread, "which word?")
    rig.wait_bot_message(thread, since=0, content_contains="Resumed saw: which word?", timeout=90)
    request = rig.api.requests[-1]
    assert last_user_text(request).endswith("which word?")
    assert "remember the word pineapple" in json.dumps(request["messages"])


def test_a_bot_with_a_config_of_its_own_gets_the_replies_of_the_session_it_adopted(
    rig, tmp_path
) -> None:
    """``run --config``: the bridge home holds no config, so the hooks of a ``claude`` started
    by hand (which read the home's) know nothing of this bot; the bot routes the session it
    adopts to itself, and the route goes when the bot stops."""
    elsewhere = tmp_path / "elsewhere" / "bridge.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text((rig.bridge_home / "config.json").read_text())
    elsewhere.chmod(0o600)
    (rig.bridge_home / "config.json").unlink()
    rig.api.script(echo("Elsewhere saw: "))
    rig.start_bot(config=elsewhere)
    socket_name = f"dbhand-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    with TmuxServer(socket_name) as mine:
        mine.new_session("mine", rig.projects["project-a"], ["claude"], hand_env(rig))
        mine.wait_ready("mine", 60)
        pid = mine.tmux("display-message", "-p", "-t", "mine", "#{pane_pid}").strip()
        info = rig.claude_home / ".claude" / "sessions" / f"{pid}.json"
        recorded_session(info)
        offer = pick_session(rig, socket_name)
        adopted = answer(rig, rig.discord.click(offer["id"], custom_id(offer, "Adopt")))
        thread = adopted["content"].split("<#", 1)[1].split(">", 1)[0]
        rig.discord.post_message(thread, "hello from elsewhere")
        reply = rig.wait_bot_message(thread, since=0, content_contains="Elsewhere saw:", timeout=60)
        assert "hello from elsewhere" in reply["content"]
        routes = rig.bridge_home / "adopted-sessions.json"
        assert json.loads(info.read_text())["sessionId"] in json.loads(routes.read_text())

        assert rig.stop_bot() == 0
        assert not routes.exists()  # its hooks no longer look for a bot that is gone
