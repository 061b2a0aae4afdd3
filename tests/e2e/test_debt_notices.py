"""Claude Code's other notices arrive as ``🔔 …``: the real Notification hook script, run as
Claude Code runs it (a subprocess, the event's JSON on stdin), posting to the emulator.

The CLI produces only ``permission_prompt`` (about a dialog Discord already shows) and, 60 s
after a reply, ``idle_prompt`` offline, so the other kinds are fed to the hook directly."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

from tests.e2e.rig import REPO


def notify(rig, kind: str, message: str) -> None:
    """Run hooks/notification.py in project-a's directory, as Claude Code would."""
    event = {
        "session_id": str(uuid.uuid4()),
        "transcript_path": str(rig.claude_home / "transcript.jsonl"),
        "cwd": str(rig.projects["project-a"]),
        "hook_event_name": "Notification",
        "message": message,
        "notification_type": kind,
    }
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(REPO / "hooks" / "notification.py")],
        input=json.dumps(event), env=rig.env, cwd=rig.projects["project-a"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def notice(rig, since: int, contains: str) -> dict:
    return rig.discord.wait(
        since=since, kind="message_create", channel_id=rig.ids["project-a"],
        author_id=rig.ids["bot_id"], content_contains=contains, timeout=30,
    )  # fmt: skip


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
