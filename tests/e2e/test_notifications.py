"""Pinging the owner when Claude waits for them: once per wait, never twice for one dialog."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bridge.state.locations import hook_args
from bridge_testkit import REPO, hook_input, is_status, wait_until
from fake_anthropic import echo, text, tool_use


def bot_records(rig, since: int, channel: str) -> list[dict]:
    """The bot's new messages in ``channel``, except live status messages."""
    return [
        r
        for r in rig.discord.records(since=since, kind="message_create")
        if r["message"]["channel_id"] == channel
        and r["message"]["author"]["id"] == rig.ids["bot_id"]
        and not is_status(r["message"])
    ]


def pings_owner(rig, record: dict) -> bool:
    alice = rig.ids["alice"]
    allowed = record.get("allowed_mentions") or {}
    return f"<@{alice}>" in record["message"]["content"] and allowed.get("users") == [alice]


def run_notification_hook(rig, event: dict) -> None:
    env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": rig.ids["project-a"]}
    subprocess.run(
        # with its locations on its command line, as `hooks install` writes them
        [sys.executable, "-I", "-S", str(REPO / "hooks" / "notification.py"), *hook_args(env)],
        input=json.dumps(event),
        env=env,
        text=True,
        check=True,
        timeout=30,
    )


def session_of(rig) -> dict:
    path = rig.state_dir / "sessions" / f"{rig.ids['project-a']}.json"
    return json.loads(path.read_text())


def pings_on(rig) -> None:
    raw = rig.config()
    raw["notifications"] = {"mentionOwner": True}
    rig.write_config(raw)


def test_idle_after_a_reply_pings_the_owner_once_per_wait(rig) -> None:
    pings_on(rig)
    rig.api.script(text("first answer"), text("second answer"))
    rig.start_bot()
    channel = rig.ids["project-a"]
    mark = rig.discord.mark()
    rig.post("hello")
    rig.wait_bot_message(content_contains="first answer")
    [reply] = bot_records(rig, mark, channel)
    assert pings_owner(rig, reply), (reply["message"]["content"], reply.get("allowed_mentions"))

    session = session_of(rig)

    def notification(message: str, kind: str) -> dict:
        return hook_input(
            "Notification",
            session_id=session["session_id"],
            transcript_path=session["transcript_path"],
            cwd=rig.projects["project-a"],
            message=message,
            notification_type=kind,
        )

    after_reply = rig.discord.mark()
    # Claude Code sends this 60 s after the reply
    run_notification_hook(rig, notification("Claude is waiting for your input", "idle_prompt"))
    # A notice of another kind afterwards is posted: when it is there, the idle one was not.
    run_notification_hook(rig, notification("Signed in", "auth_success"))
    rig.wait_bot_message(content_contains="🔔 Signed in", since=after_reply)
    posted = [r["message"]["content"] for r in bot_records(rig, after_reply, channel)]
    assert posted == ["🔔 Signed in"]  # the reply already pinged for this wait

    mark = rig.discord.mark()
    rig.post("again")  # the user came back: a new wait, a new ping
    rig.wait_bot_message(content_contains="second answer")
    said = bot_records(rig, mark, channel)
    assert len(said) == 1, ([r["message"]["content"] for r in said], rig.diagnostics())
    [reply] = said
    assert pings_owner(rig, reply), (reply, rig.diagnostics())


def test_open_permission_prompt_gets_no_duplicate_notice(rig) -> None:
    pings_on(rig)
    rig.api.script(
        tool_use("Bash", {"command": "touch noticed.txt", "description": "Create"}), echo()
    )
    noticed = rig.tmp / "notification-hook-done"
    settings_path = rig.claude_home / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    hook = settings["hooks"]["Notification"][0]["hooks"][0]
    # The bridge's own hook, then a mark that it has finished.
    hook["command"] = hook["command"].replace(" # ", f"; touch {noticed} # ", 1)
    settings_path.write_text(json.dumps(settings))
    rig.start_bot()
    channel = rig.ids["project-a"]
    mark = rig.discord.mark()
    rig.post("make a file")
    prompt = rig.wait_bot_message(content_contains="Claude wants to use", timeout=60)
    records = bot_records(rig, mark, channel)
    assert len(records) == 1, [r["message"]["content"] for r in records]
    assert pings_owner(rig, records[0])
    # Claude Code's permission_prompt notice comes ~6.3 s after the dialog.
    wait_until(noticed.exists, 30, "the Notification hook to run")
    log = rig.state_dir / "logs" / "hooks.log"
    assert [r["message"]["id"] for r in bot_records(rig, mark, channel)] == [prompt["id"]], (
        log.read_text() if log.exists() else ""
    )
    allow = next(
        c["custom_id"]
        for row in prompt["components"]
        for c in row["components"]
        if c["label"] == "Allow"
    )
    rig.discord.click(prompt["id"], allow)
    rig.wait_bot_message(content_contains="Model saw:", timeout=60)
    assert os.path.exists(rig.projects["project-a"] / "noticed.txt")
