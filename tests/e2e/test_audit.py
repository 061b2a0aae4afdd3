"""The audit trail: a decision on Discord and in the terminal, a message typed, a slash
command and a click, each an entry in ``audit/audit.jsonl`` (private, one escaped JSON line
each); ``/audit`` shows them to the owner only, filtered by session or user."""

from __future__ import annotations

import json
import os
import time

from bridge_testkit import wait_until
from fake_anthropic import echo, tool_use
from tests.e2e.test_control import command
from tests.e2e.test_decisions import (
    bash_prompt_script,
    custom_id,
    model_saw,
    wait_closed,
    wait_prompt,
    wait_screen,
)

FORGED = '{"time": "2026-01-01T00:00:00Z", "kind": "decision", "user": "666"}'
OWNER_AUDIT = "Only this bridge's owner can read the audit trail."


def trail(rig) -> list[dict]:
    path = rig.state_dir / "audit" / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def entry(rig, timeout: float = 30.0, **fields) -> dict:
    def found():
        return next((e for e in trail(rig) if fields.items() <= e.items()), None)

    return wait_until(found, timeout=timeout, what=f"an audit entry with {fields}")


def test_every_kind_is_recorded_escaped_and_shown_to_the_owner_only(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["discord"]["allowedUserIds"] = [rig.ids["bob"]]
    rig.write_config(raw)
    project = rig.projects["project-a"]
    command_line = f"touch audited.txt # \n{FORGED}"  # the model's text, with a line of its own
    rig.api.script(
        tool_use("Bash", {"command": command_line, "description": "Create a file"}),
        echo(),
        tool_use("Bash", {"command": "touch by-terminal.txt", "description": "Another"}),
        echo(),
        echo(),
    )
    rig.start_bot()
    alice, bob, channel = rig.ids["alice"], rig.ids["bob"], rig.ids["project-a"]

    rig.post(f"make a file {FORGED}")
    typed = entry(rig, kind="message", user=alice)
    assert (typed["session"], typed["project"]) == (channel, "project-a")
    assert typed["length"] == len(f"make a file {FORGED}") and "text" not in typed
    prompt = wait_prompt(rig)
    rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    wait_closed(rig, prompt)
    decided = entry(rig, kind="decision", via="discord")
    assert (decided["user"], decided["session"], decided["tool"], decided["outcome"]) == (
        alice,
        channel,
        "Bash",
        "allow",
    )
    assert decided["subject"] == command_line  # one line in the file, the newline escaped
    clicked = entry(rig, kind="component", item="PromptButton")
    assert (clicked["user"], clicked["session"]) == (alice, channel)
    rig.wait_bot_message(content_contains="Model saw:")
    assert (project / "audited.txt").exists()

    rig.post("another", user="bob")
    prompt = wait_prompt(rig)
    wait_screen(rig, "Do you want to proceed?")
    time.sleep(0.6)  # dialogs ignore keys for ~0.3 s after they render
    rig.tmux.press(rig.pane().pane_id, "1")
    wait_closed(rig, prompt)
    terminal = entry(rig, kind="decision", via="terminal")
    assert (terminal["tool"], terminal["subject"]) == ("Bash", "touch by-terminal.txt")
    assert "user" not in terminal

    # /esc once that turn has replied: an Esc into it (still running on a loaded machine) ends
    # it without its reply, and the /queue below then reaches the model in the same request
    # as the interrupt (two fresh-clone runs saw 4 requests of the 5 scripted)
    replies = lambda: sum("Model saw:" in m["content"] for m in rig.bot_messages())  # noqa: E731
    wait_until(lambda: replies() >= 2, 60, "the reply of the turn answered in the terminal")
    command(rig, "esc", user="bob")
    esc = entry(rig, kind="command", command="esc")
    assert (esc["user"], esc["session"]) == (bob, channel)

    rig.discord.run_command(channel, "queue", {"text": "queued words"})
    queued = entry(rig, kind="command", command="queue")
    assert queued["options"] == "text=(12 characters)"
    typed_later = entry(rig, kind="message", source="command")
    assert (typed_later["user"], typed_later["length"]) == (alice, 12)
    assert "text" not in typed_later

    path = rig.state_dir / "audit" / "audit.jsonl"
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(path.parent).st_mode & 0o777 == 0o700
    lines = path.read_text().splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines)
    assert not [e for e in trail(rig) if e.get("user") == "666"]  # nothing forged a line
    for text in ("make a file", "queued words"):  # a message's length, not its text
        assert text not in path.read_text()

    shown = command(rig, "audit")
    assert shown.startswith("```") and shown.endswith("```")
    assert "Bash touch audited.txt" in shown and "allow via discord" in shown
    assert "allow via terminal" in shown or "answered_elsewhere via terminal" in shown
    assert f"typed {len('make a file ' + FORGED)} characters" in shown and "/esc" in shown
    mine = command(rig, "audit", {"user": f"<@{bob}>"})
    assert "/esc" in mine and "allow via discord" not in mine
    here = command(rig, "audit", {"session": f"<#{channel}>"})
    assert "/esc" in here and "allow via discord" in here
    elsewhere = f"<#{rig.ids['project-b']}>"
    assert command(rig, "audit", {"session": elsewhere}) == "No audit entries match."
    assert command(rig, "audit", user="bob") == OWNER_AUDIT
    # the queued prompt reached the model: no request of this Claude Code is left in flight
    # to take the next test's scripted turn
    assert "queued words" in model_saw(rig, 5)
    rig.assert_loop_kept_up()


def test_message_text_is_kept_only_when_the_config_asks(rig) -> None:
    raw = rig.config()
    raw["audit"] = {"messageText": True}
    rig.write_config(raw)
    rig.api.script(echo())
    rig.start_bot()
    rig.post(f"hello\n{FORGED}")
    typed = entry(rig, kind="message")
    assert typed["text"] == f"hello\n{FORGED}"
    assert "hello" in model_saw(rig, 1)  # no request left in flight for the next test
    assert len(trail(rig)) == len(
        (rig.state_dir / "audit" / "audit.jsonl").read_text().splitlines()
    )
    assert not [e for e in trail(rig) if e.get("user") == "666"]


def test_a_prompt_nobody_answers_is_recorded_as_timed_out(rig) -> None:
    raw = rig.config()
    raw["prompts"] = {"timeoutSeconds": 10}
    rig.write_config(raw)
    rig.api.script(*bash_prompt_script("never.txt"))
    rig.start_bot()
    rig.post("make a file")
    wait_prompt(rig)
    timed_out = entry(rig, 60.0, kind="decision", via="timeout")  # ~10 s later
    assert (timed_out["outcome"], timed_out["subject"]) == ("timeout", "touch never.txt")
    assert "user" not in timed_out
