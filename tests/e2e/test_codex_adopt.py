"""A Codex TUI started by hand in the user's own tmux: listed by ``/sessions``, adopted into a
thread (typed into, its replies there through its hooks), released untouched. The real bot on
the emulator, the real Codex (its daemon off: then the TUI holds its rollout open, which is
how the bridge knows its conversation), the fake Responses API."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from bridge_testkit.codex_rig import STARTS, codex_binary, died
from bridge_testkit.rig import wait_until
from fake_anthropic.claude_cli import TmuxServer
from fake_openai import last_user_text, text
from tests.e2e import test_codex
from tests.e2e.test_adopt import answer, hand_env, pick_session
from tests.e2e.test_decisions import custom_id

codex_rig = test_codex.codex_rig  # the fixtures, for this module's tests
openai = test_codex.openai
BOX = "Ask Codex to do anything"


def start_by_hand(mine: TmuxServer, project: Path, argv: list[str], env: dict) -> None:
    """Start Codex at the terminal and answer its "Hooks need review" as its user would:
    option 2, Enter (a key that arrives while Codex drains its input is dropped: 2 again until
    it moved). A Codex that exits at the dialog because its drain overran (docs/codex.md: a
    starved machine; it failed this test once) is started again, as its user would."""
    for _ in range(STARTS):
        mine.new_session("mine", project, argv, env, width=160, height=45)
        if _trusted_by_hand(mine):
            return
        mine.tmux("kill-session", "-t", "mine")
    raise AssertionError(f"Codex exited at the hooks review {STARTS} times")


def _trusted_by_hand(mine: TmuxServer) -> bool:
    asked = lambda s: ("Hooks need review" in s and "confirm" in s) or died(s)  # noqa: E731
    if died(mine.wait_for("mine", asked, 60)):
        return False
    for _ in range(20):
        mine.send_keys("mine", "2")
        try:
            if died(mine.wait_for("mine", lambda s: "› 2. Trust all" in s or died(s), 2)):
                return False
            break
        except TimeoutError:
            continue
    mine.send_keys("mine", "Enter")
    shown = mine.wait_for(
        "mine", lambda s: (BOX in s and "Hooks need review" not in s) or died(s), 30
    )
    return not died(shown)


def test_a_codex_started_by_hand_is_adopted_typed_into_and_released(codex_rig) -> None:
    rig = codex_rig
    project = rig.projects["project-b"]
    rig.openai.script(text("By hand."), text("Adopted answer."))
    rig.start_bot(env={"FAKE_OPENAI_KEY": "sk-fake"})
    socket_name = f"dbhand-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    argv = [str(codex_binary()), "-c", "features.daemon_auto_start=false"]
    env = {**hand_env(rig), "FAKE_OPENAI_KEY": "sk-fake", "TERM": "xterm-256color"}
    with TmuxServer(socket_name) as mine:
        start_by_hand(mine, project, argv, env)
        # Before its first prompt nothing tells its conversation: listed, not adoptable.
        offer = pick_session(rig, socket_name)
        assert "does not say which conversation it shows" in offer["content"], offer
        assert not offer.get("components"), offer  # no Adopt

        mine.tmux("send-keys", "-t", "mine", "-l", "hello by hand")
        mine.wait_for("mine", lambda s: "hello by hand" in s, 10)
        mine.send_keys("mine", "Enter")
        mine.wait_for("mine", lambda s: "By hand." in s, 60)

        # Listed as a Codex, with its project; Adopt opens a thread for it.
        offer = pick_session(rig, socket_name)
        assert "Codex" in offer["content"] and "project-b" in offer["content"], offer
        assert str(project) in offer["content"]
        adopted = answer(rig, rig.discord.click(offer["id"], custom_id(offer, "Adopt")))
        assert adopted["content"].startswith("Adopted into <#"), adopted
        thread = adopted["content"].split("<#", 1)[1].split(">", 1)[0]
        welcome = rig.wait_bot_message(thread, since=0, content_contains="Adopted the Codex")
        assert socket_name in welcome["content"]

        # Typed into its pane (Codex's input box); the reply comes to the thread by its hooks.
        rig.discord.post_message(thread, "hello from the thread")
        rig.wait_bot_message(thread, since=0, content_contains="Adopted answer.", timeout=90)
        assert last_user_text(rig.openai.requests[-1]) == "hello from the thread"
        assert "hello from the thread" in mine.capture("mine")  # its pane, not a new one
        assert rig.pane("project-b") is None  # the bot started no Codex of its own

        # /stop in the thread releases it: the Codex keeps running, untouched.
        pid = mine.tmux("display-message", "-p", "-t", "mine", "#{pane_pid}").strip()
        stopped = answer(rig, rig.discord.run_command(thread, "stop"))
        assert stopped["content"] == (
            "Released: that Codex keeps running, no longer linked to this thread."
        ), stopped
        wait_until(lambda: BOX in mine.capture("mine"), 10, "Codex's box, still there")
        assert mine.tmux("display-message", "-p", "-t", "mine", "#{pane_pid}").strip() == pid
