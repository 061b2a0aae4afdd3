"""A reboot: the bot stops, the tmux server and every Claude process die, the runtime dir (a
tmpfs) is emptied. What a user would miss lives in the state dir and comes back: the real bot,
the real Claude Code CLI in tmux, the emulator."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.claude.screen import is_prompt_ready
from bridge.state import locations, runtime
from bridge_testkit import hook_input, wait_until
from fake_anthropic import echo, last_user_text
from tests.e2e.test_control import command


def reboot(rig) -> None:
    rig.stop_bot()
    subprocess.run(["tmux", "-L", rig.socket, "kill-server"], check=False, capture_output=True)
    shutil.rmtree(rig.runtime_dir)


def test_after_a_reboot_spooled_replies_arrive_once_and_sessions_continue(rig) -> None:
    rig.api.script(*[echo() for _ in range(3)])
    raw = rig.config()
    raw["servers"][0]["projects"][1]["startup"] = True  # project-b would start with the bot
    rig.write_config(raw)
    rig.start_bot()
    sent = rig.post("remember the word pineapple")
    rig.wait_bot_message(content_contains="Model saw: remember the word pineapple", timeout=90)
    rig.wait_reaction(sent)
    wait_until(lambda: rig.tmux.find(rig.ids["project-b"]), 60, "project-b to start")
    assert "Stopped" in command(rig, "stop", channel="project-b")  # on purpose: stays stopped

    # Discord goes away, and the user carries on at the keyboard: the reply is spooled.
    rig.stop_bot()
    rig.discord.set_outage("refuse")
    pane = rig.pane().pane_id
    rig.tmux.wait_for(pane, is_prompt_ready, 30)
    rig.tmux.type_literal(pane, "typed at the keyboard while offline")
    rig.tmux.press(pane, "Enter")
    outbox = rig.state_dir / "outbox" / rig.ids["project-a"]
    wait_until(lambda: list(outbox.glob("*.json")), 60, "the reply to be spooled")

    reboot(rig)
    assert not rig.runtime_dir.exists() and rig.tmux.panes() == []
    rig.discord.set_outage(None)
    rig.start_bot()

    offline = "Model saw: typed at the keyboard while offline"
    rig.wait_bot_message(content_contains=offline, timeout=60)
    pane = wait_until(lambda: rig.tmux.find(rig.ids["project-a"]), 60, "project-a to resume")
    rig.tmux.wait_for(pane.pane_id, is_prompt_ready, 60)
    rig.post("which word was it")
    rig.wait_bot_message(content_contains="Model saw: which word was it", timeout=90)
    request = rig.api.requests[-1]
    assert last_user_text(request) == "which word was it"
    assert "remember the word pineapple" in json.dumps(request["messages"])  # same conversation

    delivered = [
        m for m in rig.discord.messages(rig.ids["project-a"]) if offline in (m.get("content") or "")
    ]
    assert len(delivered) == 1, delivered
    assert rig.tmux.find(rig.ids["project-b"]) is None, rig.bot_output()  # stopped on purpose


def hook_command(rig, event: str) -> str:
    settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]
    return command


def run_hook(rig, event: str, cache: Path, **fields: object) -> subprocess.CompletedProcess:
    """The installed hook command as Claude Code runs it (``sh -c``, the event on stdin), in a
    mount namespace where ``~/.cache`` (the password database's home: where the private
    fallback runtime dir lives) is ``cache``: the test never touches this machine's own."""
    project = rig.projects["project-a"]
    payload = hook_input(event, session_id="hostile-dir", cwd=project, **fields)
    inner = f"mount --bind {shlex.quote(str(cache))} {shlex.quote(USER_CACHE)} && exec sh -c "
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", inner + shlex.quote(hook_command(rig, event))],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=project,
        timeout=60,
        env={**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": rig.ids["project-a"]},
    )


USER_CACHE = os.path.join(runtime.user_home(), ".cache")


def plant(path: Path, form: str) -> Path:
    """What another local user leaves where the bot's runtime dir was before the reboot: a dir
    of theirs, an open one, or a link to theirs; ready to take every file a hook writes, and
    with a listening ``bot.sock``. Returns the directory the files would land in."""
    target = path.with_name(path.name + "-theirs") if form == "link" else path
    target.mkdir()
    for name in runtime.VOLATILE:
        (target / name).mkdir()
    for folder in [target, *target.iterdir()]:
        os.chmod(folder, 0o777)
        if form != "open":
            os.chown(folder, 65534, 65534)
    if form == "link":
        path.symlink_to(target)
    return target


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("form", ["theirs", "open", "link"])
def test_after_a_reboot_a_runtime_dir_another_user_created_receives_nothing(rig, form) -> None:
    """Issue 18.6: the hooks were installed without --runtime-dir, so they use the dir the bot
    recorded (locations.json). After a reboot another user creates it first. The hooks of a
    turn (a Bash call, streamed text, the reply) write nothing into it and wake nothing
    listening there; the reply still reaches Discord; Claude Code sees exit 0, no output."""
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs a private mount namespace (unshare -m) for the fallback dir")
    os.makedirs(USER_CACHE, exist_ok=True)  # the mount point (empty where it did not exist)
    settings = rig.claude_home / ".claude" / "settings.json"
    env = {k: v for k, v in rig.env.items() if k != runtime.ENV_RUNTIME_DIR}
    subprocess.run(
        [sys.executable, "-m", "bridge.cli", "hooks", "install", "--settings", str(settings)],
        env=env,
        check=True,
        capture_output=True,
    )
    assert "--runtime-dir" not in hook_command(rig, "Stop")
    rig.start_bot()  # records its dirs for the hooks
    recorded = json.loads((rig.bridge_home / locations.LOCATIONS).read_text())
    assert recorded["runtime_dir"] == str(rig.runtime_dir)
    reboot(rig)

    theirs = plant(rig.runtime_dir, form)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(theirs / "bot.sock"))
    listener.setblocking(False)
    planted = tree(theirs)
    cache = rig.tmp / "user-cache"
    cache.mkdir(mode=0o700)
    reply = f"the reply, {form}"
    try:
        runs = [
            run_hook(
                rig,
                "PreToolUse",
                cache,
                tool_name="Bash",
                tool_input={"command": "echo the-secret-command"},
            ),
            run_hook(
                rig, "MessageDisplay", cache, message_id="m1", delta="the secret text", final=True
            ),
            run_hook(
                rig,
                "PostToolUse",
                cache,
                tool_name="Bash",
                tool_input={"command": "echo the-secret-command"},
                tool_response={},
            ),
            run_hook(rig, "Stop", cache, stop_hook_active=False, last_assistant_message=reply),
            run_hook(
                rig,
                "PreToolUse",
                cache,
                tool_name="Bash",
                tool_input={"command": "echo the-secret-command"},
            ),
        ]
        for done in runs:
            assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        with pytest.raises(BlockingIOError):
            listener.recv(1024)  # the planted "bot" was never woken
    finally:
        listener.close()
    assert tree(theirs) == planted
    posted = rig.discord.messages(rig.ids["project-a"])
    assert [m["content"] for m in posted if reply in (m.get("content") or "")] == [reply]
    fallback = cache / "discord-bridge" / "runtime"  # where the bot would go too, private
    assert os.stat(fallback).st_mode & 0o777 == 0o700
    events = (fallback / "progress" / f"{rig.ids['project-a']}.jsonl").read_text()
    assert "the-secret-command" in events  # the status message's events are kept, privately
    log = (rig.state_dir / "logs" / "hooks.log").read_text()
    assert f"refused the runtime dir {rig.runtime_dir}" in log  # what `doctor` users read
