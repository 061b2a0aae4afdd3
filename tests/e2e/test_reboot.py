"""A reboot: the bot stops, the tmux server and every Claude process die, the runtime dir (a
tmpfs) is emptied. What a user would miss lives in the state dir and comes back: the real bot,
the real Claude Code CLI in tmux, the emulator."""

from __future__ import annotations

import json
import shutil
import subprocess

from bridge.claude.screen import is_prompt_ready
from bridge_testkit import wait_until
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
