"""Claude Code's other notices arrive as ``🔔 …``: the real Notification hook script, run as
Claude Code runs it (a subprocess, the event's JSON on stdin), posting to the emulator.

The CLI produces only ``permission_prompt`` (about a dialog Discord already shows) and, 60 s
after a reply, ``idle_prompt`` offline, so the other kinds are fed to the hook directly."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

from bridge.state.locations import hook_args
from bridge_testkit import REPO, hook_input, wait_until
from fake_anthropic import tool_use


def notify(rig, kind: str, message: str) -> None:
    """Run hooks/notification.py in project-a's directory, as Claude Code would."""
    event = hook_input(
        "Notification",
        session_id=str(uuid.uuid4()),
        transcript_path=rig.claude_home / "transcript.jsonl",
        cwd=rig.projects["project-a"],
        message=message,
        notification_type=kind,
    )
    done = subprocess.run(
        # with its locations on its command line, as `hooks install` writes them
        [sys.executable, "-I", "-S", str(REPO / "hooks" / "notification.py"), *hook_args(rig.env)],
        input=json.dumps(event),
        env=rig.env,
        cwd=rig.projects["project-a"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr


def notice(rig, since: int, contains: str) -> dict:
    return rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=rig.ids["project-a"],
        author_id=rig.ids["bot_id"],
        content_contains=contains,
        timeout=30,
    )


def test_other_notices_arrive_as_bells_and_only_waits_ping(rig) -> None:
    raw = rig.config()
    raw["notifications"] = {"mentionOwner": True}
    rig.write_config(raw)
    alice = f"<@{rig.ids['alice']}>"

    since = rig.discord.mark()
    notify(rig, "auth_success", "Signed in to @everyone's account")
    record = notice(rig, since, "🔔 Signed in to")
    content = record["message"]["content"]
    assert content == "🔔 Signed in to @\u200beveryone's account", content
    assert alice not in content  # not a wait: no ping
    assert (record.get("allowed_mentions") or {}).get("users") in (None, [])

    # A permission notice with no prompt open on Discord (e.g. its post failed) is a wait.
    since = rig.discord.mark()
    notify(rig, "permission_prompt", "Claude needs your permission to use Bash")
    record = notice(rig, since, "🔔 Claude needs your permission to use Bash")
    assert record["message"]["content"].endswith(alice)
    assert record["allowed_mentions"]["users"] == [rig.ids["alice"]]


def test_cli_permission_notice_for_a_prompt_discord_never_got_is_forwarded(rig) -> None:
    """Claude Code's own notice (~6.3 s after its dialog) reaches Discord when the prompt
    itself could not be posted: the owner still learns that Claude waits."""
    raw = rig.config()
    raw["notifications"] = {"mentionOwner": True}
    rig.write_config(raw)
    rig.api.script(tool_use("Bash", {"command": "touch x.txt", "description": "Create"}))
    rig.start_bot()
    log = rig.state_dir / "logs" / "hooks.log"
    since = rig.discord.mark()
    rig.discord.set_outage("refuse")
    try:
        rig.post("make a file")
        wait_until(
            lambda: log.exists() and "not posted" in log.read_text(), 30, "the prompt to fail"
        )
    finally:
        rig.discord.set_outage(None)
    record = notice(rig, since, "🔔 Claude needs your permission")
    assert record["message"]["content"].endswith(f"<@{rig.ids['alice']}>")
    assert "Do you want to proceed?" in rig.screen()  # the terminal dialog is the one to use
