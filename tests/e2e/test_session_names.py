"""A session's name and lineage on Claude Code 2.1.332: a thread's conversation is named after
the thread (UserPromptSubmit ``sessionTitle``), so ``claude --resume`` finds it by that name;
a branch of the conversation (``/branch``, SessionStart ``source: "fork"``) is followed.

Real CLI in tmux, real hooks, real bot against the emulator.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text
from tests.e2e.test_control import command
from tests.e2e.test_threads import wait_reply

TITLE = "fix the login bug"


def record(rig, key: str) -> dict:
    path = rig.state_dir / "sessions" / f"{key}.json"
    wait_until(path.exists, what="the SessionStart record")
    return json.loads(path.read_text())


def written(transcript: str, reply: str) -> Path:
    """The transcript once it holds ``reply``. Claude Code writes it behind the Stop hook: at
    a session's first reply on Discord the file may not exist yet (reading it then found no
    file once in a CI run, and a ``/branch`` then says "nothing to branch yet")."""
    path = Path(transcript)
    wait_until(lambda: path.exists() and reply in path.read_text(), what=f"{reply!r} in {path}")
    return path


def titles(transcript: str, reply: str) -> list[str]:
    """The conversation's titles once its transcript holds ``reply``."""
    path = written(transcript, reply)
    lines = [json.loads(line) for line in path.read_text().splitlines() if line]
    return [line["customTitle"] for line in lines if line.get("type") == "custom-title"]


def test_a_threads_conversation_is_named_after_the_thread(rig) -> None:
    rig.api.script(echo(), echo(), echo(), echo("Resumed and saw: "))
    rig.start_bot()
    thread = rig.discord.create_thread(rig.ids["project-a"], TITLE)
    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "the password field is empty")
    wait_reply(rig, thread["id"], "Model saw: the password field", since)
    rig.discord.post_message(thread["id"], "and the button")
    wait_reply(rig, thread["id"], "Model saw: and the button", since)
    transcript = record(rig, thread["id"])["transcript_path"]
    named = titles(transcript, "Model saw: and the button")
    assert set(named) == {TITLE}  # (Claude Code repeats it after each turn)
    screen = rig.tmux.capture(rig.tmux.find(thread["id"]).pane_id)
    box_rule = next(line for line in screen.splitlines() if TITLE in line)
    assert box_rule.lstrip().startswith("────")  # Claude Code shows it on the box's rule

    # The channel's own session is not named.
    rig.post("in the channel")
    rig.wait_bot_message(content_contains="Model saw: in the channel", timeout=60)
    channel_transcript = record(rig, rig.ids["project-a"])["transcript_path"]
    assert titles(channel_transcript, "Model saw: in the channel") == []

    # `claude --resume <name>` at a terminal finds the thread's conversation by its name.
    done = subprocess.run(
        ["claude", "--resume", TITLE, "-p", "where were we?"],
        env=rig.env,
        cwd=rig.projects["project-a"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Resumed and saw: where were we?" in done.stdout
    history = json.dumps(rig.api.requests[-1]["messages"])
    assert "the password field is empty" in history and "in the channel" not in history
    assert last_user_text(rig.api.requests[-1]).endswith("where were we?")


def test_a_branch_of_the_conversation_is_followed_and_said(rig) -> None:
    """``/branch`` (typed at the terminal, or with /keys) goes on in a copy under a new id:
    SessionStart ``source: "fork"``. The channel says so, and /resume continues the branch."""
    rig.api.script(echo(), echo(), echo())
    rig.start_bot()
    rig.post("before the branch")
    rig.wait_bot_message(content_contains="Model saw: before the branch", timeout=60)
    first = record(rig, rig.ids["project-a"])
    original = first["session_id"]
    written(first["transcript_path"], "Model saw: before the branch")  # what /branch copies

    since = rig.discord.mark()
    assert command(rig, "keys", {"keys": "/branch Enter"}) == "Sent: '/branch' Enter"
    notice = rig.wait_bot_message(content_contains="🌿", since=since, timeout=30)
    branch = record(rig, rig.ids["project-a"])["session_id"]
    assert branch != original
    assert f"`{branch}`" in notice["content"], notice["content"]
    assert f"claude --resume {original}" in notice["content"], notice["content"]

    rig.post("in the branch")  # the model sees the /branch command's record before it
    assert "in the branch" in rig.wait_bot_message(content_contains="Model saw:")["content"]
    assert command(rig, "stop") == "Stopped **project-a**."
    assert command(rig, "resume").startswith(f"Resumed conversation `{branch}`")
    rig.post("after resume")
    rig.wait_bot_message(content_contains="Model saw: after resume", timeout=60)
    history = json.dumps(rig.api.requests[-1]["messages"])
    assert "before the branch" in history and "in the branch" in history
