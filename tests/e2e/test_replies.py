"""Claude → Discord: long replies, files both ways, outages, sessions the bridge does not own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

from bridge_testkit import hook_input, wait_until
from fake_anthropic import last_user_text, text


def test_long_reply_with_code_block_is_split_with_balanced_fences(rig) -> None:
    code = "\n".join(f"    value_{i} = compute({i})  # step {i}" for i in range(90))
    reply = "Here is the module.\n\n```python\ndef main():\n" + code + "\n```\n\nAll done."
    reply += "\n\n" + "Closing notes. " * 70
    assert 4400 <= len(reply) <= 4700, len(reply)
    rig.api.script(text(reply))
    rig.start_bot()
    rig.post("write the module")
    rig.wait_bot_message(content_contains="Closing notes.", timeout=60)

    chunks = [m["content"] for m in rig.bot_messages()]
    assert len(chunks) >= 3
    for chunk in chunks:
        assert len(chunk) <= 2000
        assert len(re.findall(r"^```", chunk, re.MULTILINE)) % 2 == 0, chunk
    assert chunks[1].startswith("```python")
    joined = "".join(chunks)
    assert all(f"value_{i} = compute({i})" in joined for i in range(90))


def test_attach_markers_upload_exact_bytes_and_refuse_escapes(rig) -> None:
    rig.start_bot()
    outputs = rig.outputs_dir()
    outputs.mkdir(mode=0o700, exist_ok=True)  # where Claude is told to write
    payload = bytes(range(256)) * 40
    (outputs / "report.txt").write_bytes(payload)
    os.symlink("/etc/passwd", outputs / "leak.txt")
    rig.api.script(
        text(
            "Report attached.\n[DISCORD_ATTACH: report.txt]\n[DISCORD_ATTACH: ../../etc/passwd]\n"
            "[DISCORD_ATTACH: /etc/passwd]\n[DISCORD_ATTACH: leak.txt]"
        )
    )
    rig.post("send me the report")
    message = rig.wait_bot_message(has_files=True, timeout=60)

    assert [a["filename"] for a in message["attachments"]] == ["report.txt"]
    assert rig.discord.file_bytes(message["attachments"][0]) == payload
    content = message["content"]
    assert "DISCORD_ATTACH" not in content and content.startswith("Report attached.")
    assert "`../../etc/passwd` ('..' is not allowed)" in content
    assert "`/etc/passwd` (absolute paths are not allowed)" in content
    assert "`leak.txt` (is a symlink)" in content
    assert len(rig.bot_messages()) == 1


def test_owner_attachment_reaches_prompt_as_path_with_same_bytes(rig) -> None:
    rig.api.script(text("got it"))
    rig.start_bot()
    data = os.urandom(50_000)
    rig.post("what is in this file?", attachments=[("../../evil name.bin", data)])
    rig.wait_bot_message(content_contains="got it", timeout=60)

    prompt = last_user_text(rig.api.wait_requests(1)[0])
    first_line, attachment_line = prompt.split("\n")
    assert first_line == "what is in this file?"
    path = re.fullmatch(r"Attached file: (/\S+)", attachment_line)[1]
    assert path.startswith(str(rig.state_dir / "uploads" / rig.ids["project-a"]) + "/")
    assert ".." not in path and path.endswith("evil_name.bin")
    with open(path, "rb") as handle:
        assert handle.read() == data
    assert os.stat(path).st_mode & 0o077 == 0


@pytest.mark.parametrize("outage", ["503", "refuse"])
def test_reply_during_discord_outage_is_delivered_once_after_recovery(rig, outage: str) -> None:
    rig.api.script(text("reply written while Discord was down"))
    rig.start_bot()
    outbox = rig.state_dir / "outbox" / rig.ids["project-a"]
    rig.discord.set_outage(outage)
    try:
        rig.post("do the thing")
        deadline = time.monotonic() + 60
        while not list(outbox.glob("*.json")):
            assert time.monotonic() < deadline, "the Stop hook never spooled the reply"
            time.sleep(0.1)
        assert rig.bot_messages() == []
    finally:
        rig.discord.set_outage(None)

    rig.wait_bot_message(content_contains="while Discord was down", timeout=60)
    deadline = time.monotonic() + 30
    while list(outbox.glob("*.json")):
        assert time.monotonic() < deadline, "the outbox was not emptied"
        time.sleep(0.1)
    delivered = [m for m in rig.bot_messages() if "while Discord was down" in m["content"]]
    assert len(delivered) == 1


def test_hooks_ignore_sessions_outside_every_project(rig, tmp_path) -> None:
    settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
    commands = [
        h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]
    ]
    assert len(commands) >= 2
    elsewhere = tmp_path / "unrelated"
    elsewhere.mkdir()
    env = {k: v for k, v in rig.env.items() if not k.startswith("DISCORD_BRIDGE_CHANNEL")}
    rig.discord.reset_counters()
    for command in commands:
        event = hook_input("Stop", session_id="x", cwd=elsewhere, last_assistant_message="secret")
        result = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(event),
            text=True,
            env=env,
            cwd=elsewhere,
            capture_output=True,
            timeout=30,
        )
        assert (result.returncode, result.stdout) == (0, ""), (command, result.stderr)
    assert rig.discord.counters() == {}
    assert not (rig.state_dir / "outbox").exists() or not any(
        (rig.state_dir / "outbox").rglob("*.json")
    )


def test_broken_outbox_entries_do_not_cost_a_channel_or_the_others_their_replies(rig) -> None:
    # Regression: valid JSON of the wrong shape in one channel's outbox made the bot's drain
    # raise: that channel's later replies and every channel sorted after it were never sent.
    from bridge.discord.outbox import Outbox
    from bridge.discord.post import Post, message_payload
    from bridge.state.runtime import Runtime

    first, second = sorted([rig.ids["project-a"], rig.ids["project-b"]])
    outbox = Outbox(Runtime(str(rig.runtime_dir), str(rig.state_dir)).ensure().outbox)
    outbox.enqueue(first, "e2e", Post(message_payload("queued before the broken ones")))
    broken = []
    for data in (b"[]", b"[" * 100_000 + b"]" * 100_000, b'{"channel_id": 5}'):
        path = outbox.enqueue(first, "e2e", Post(message_payload("to be overwritten")))
        with open(path, "wb") as handle:  # a spool file someone else wrote
            handle.write(data)
        broken.append(path)
    outbox.enqueue(first, "e2e", Post(message_payload("queued after the broken ones")))
    outbox.enqueue(second, "e2e", Post(message_payload("queued for the other channel")))

    rig.start_bot()
    project = {rig.ids[name]: name for name in ("project-a", "project-b")}
    since = 0
    rig.wait_bot_message(project[second], since=since, content_regex="^queued for the other")
    rig.wait_bot_message(project[first], since=since, content_regex="^queued after the broken")
    assert [m["content"] for m in rig.bot_messages(project[first])] == [
        "queued before the broken ones",
        "queued after the broken ones",
    ]
    for path in broken:
        assert os.path.exists(path[: -len(".json")] + ".failed")
    outbox_log = (rig.state_dir / "logs" / "outbox.log").read_text()
    assert outbox_log.count("unreadable entry") == 3
    assert "Traceback" not in rig.bot_output()


def test_files_refused_by_a_channel_without_attach_files_leave_the_text_and_a_note(rig) -> None:
    # Regression: Discord's 403 on a post with files was "retry later": the reply stayed in
    # the outbox for ever and every later reply of the channel queued behind it.
    rig.discord.deny_attach_files(rig.ids["project-a"])
    rig.start_bot()
    outputs = rig.outputs_dir()
    outputs.mkdir(mode=0o700, exist_ok=True)
    (outputs / "chart.png").write_bytes(b"\x89PNG not really")
    rig.api.script(text("Here is the chart.\n[DISCORD_ATTACH: chart.png]"), text("Next reply."))
    rig.post("draw me a chart")
    rig.wait_bot_message(content_regex=r"^Here is the chart\.$", timeout=60)
    note = rig.wait_bot_message(content_regex=r"^⚠️ Not attached: `chart.png`", timeout=30)
    # The same note as a hook posting itself (tests/unit/discord/test_outbox.py), Discord's
    # error code included: one place says what to send instead of refused files.
    assert note["content"] == (
        "⚠️ Not attached: `chart.png` (the bot lacks the **Attach Files** permission in this"
        " channel; 403/50013)"
    )
    rig.post("and now?")
    rig.wait_bot_message(content_regex=r"^Next reply\.", timeout=60)
    outbox = rig.state_dir / "outbox" / rig.ids["project-a"]
    # The entry goes once its post is made (a moment after the message shows): never stuck.
    wait_until(lambda: not list(outbox.glob("*.json")), 15, "the outbox to be empty")
    assert all(not m["attachments"] for m in rig.bot_messages())
