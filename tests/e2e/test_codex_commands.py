"""The session slash commands in a Codex channel, end to end: the real bot on the emulator, the
real Codex TUI in the bot's tmux, the fake Responses API. What the owner reads (the ephemeral
answers), what Codex is sent (a fresh conversation, a resumed one, a model) and the pane."""

from __future__ import annotations

import json

from bridge.codex.screen import is_busy
from bridge.sessions import machine_codex
from bridge_testkit.rig import wait_until
from fake_openai import exec_command, last_user_text, text
from tests.e2e import test_codex
from tests.e2e.test_adopt import answer, select_of
from tests.e2e.test_codex import codex_status, start_trusted
from tests.e2e.test_control import command
from tests.e2e.test_decisions import custom_id

CODEX = "project-b"
codex_rig = test_codex.codex_rig  # the fixtures, for this module's tests
openai = test_codex.openai


def conversation_id(rig) -> str:
    """The Codex session id the SessionStart hook recorded for the channel."""
    path = rig.state_dir / "sessions" / f"{rig.ids[CODEX]}.json"
    return json.loads(path.read_text())["session_id"]


def ask(rig, prompt: str, answer: str) -> str:
    """Post ``prompt``, wait for ``answer``; everything the model was sent for it."""
    before = len(rig.openai.requests)
    since = rig.discord.mark()
    rig.post(prompt, project=CODEX)
    rig.wait_bot_message(CODEX, content_contains=answer, timeout=90, since=since)
    request = rig.openai.wait_requests(before + 1, timeout=30)[before]
    assert last_user_text(request) == prompt
    idle(rig)
    return json.dumps(request)


def idle(rig) -> None:
    """The reply is posted from Stop: Codex's screen shows the turn ended a moment later (a
    command that refuses a busy Codex must not meet that moment)."""
    wait_until(lambda: not is_busy(rig.screen(CODEX)), 30, "Codex to be idle")


def test_status_peek_esc_new_stop_and_resume_in_a_codex_channel(codex_rig) -> None:
    rig = codex_rig
    rig.openai.script(
        text("First answer."),
        exec_command("echo working"),
        text("never shown", delay=60),
        text("Fresh answer."),
        text("Resumed answer."),
        text("Back in the first."),
    )
    start_trusted(rig, "remember pineapple")
    rig.wait_bot_message(CODEX, content_contains="First answer.", timeout=90)
    first = conversation_id(rig)
    idle(rig)

    status = command(rig, "status", channel=CODEX)
    assert "state: idle" in status, status
    assert "model: gpt-fake" in status, status  # what Codex's SessionStart reported
    assert "mode: none: Codex's approvals come from its config or `codexArgs`" in status, status
    assert f"conversation: `{first}`" in status, status

    peek = command(rig, "peek", channel=CODEX)
    assert "First answer." in peek and "Ask Codex to do anything" in peek, peek

    # /esc: Codex's Interrupt hook closes the turn's status.
    rig.post("a long one", project=CODEX)
    codex_status(rig, "⏳")
    wait_until(lambda: len(rig.openai.requests) >= 3, 60, "the slow request")
    assert "state: working" in command(rig, "status", channel=CODEX)
    assert command(rig, "esc", channel=CODEX) == "Interrupted (Escape sent)."
    codex_status(rig, "⏹ Interrupted")
    wait_until(lambda: "Conversation interrupted" in rig.screen(CODEX), 30, "Codex's line")

    # /new: Codex restarted on a new conversation, which knows nothing of the first.
    assert command(rig, "new", channel=CODEX).startswith("Fresh conversation for **project-b**")
    sent = ask(rig, "in the new one", "Fresh answer.")
    assert "pineapple" not in sent
    fresh = conversation_id(rig)
    assert fresh != first

    # /stop ends it; /resume goes on with that conversation (`codex resume <id>`).
    assert command(rig, "stop", channel=CODEX) == "Stopped **project-b**."
    assert rig.pane(CODEX) is None
    assert "state: stopped" in command(rig, "status", channel=CODEX)
    resumed = command(rig, "resume", channel=CODEX)
    assert resumed.startswith(f"Resumed conversation `{fresh}`"), resumed
    sent = ask(rig, "after resume", "Resumed answer.")
    assert "in the new one" in sent and "pineapple" not in sent
    assert conversation_id(rig) == fresh

    # /resume <conversation>: the project's past ones offered from Codex's rollouts.
    offered = rig.discord.autocomplete(
        rig.ids[CODEX], "resume", {"conversation": ""}, "conversation"
    )
    assert [c["value"] for c in offered["choices"]] == [fresh, first], offered
    assert offered["choices"][1]["name"].endswith(" · remember pineapple"), offered
    assert (
        rig.discord.autocomplete(
            rig.ids[CODEX], "resume", {"conversation": ""}, "conversation", user="bob"
        )["choices"]
        == []
    )
    bogus = command(rig, "resume", {"conversation": "../../etc/passwd"}, channel=CODEX)
    assert bogus == "⚠️ No such conversation of this project: pick one from the list."
    picked = command(rig, "resume", {"conversation": first}, channel=CODEX)
    assert picked.startswith(f"Resumed conversation `{first}` in `%"), picked
    sent = ask(rig, "back to the first", "Back in the first.")
    assert "pineapple" in sent and "in the new one" not in sent
    assert conversation_id(rig) == first


def test_model_restarts_codex_on_its_conversation_and_mode_says_it_has_none(codex_rig) -> None:
    rig = codex_rig
    rig.openai.script(text("First answer."), text("Sol answer."), text("Still sol."))
    start_trusted(rig, "remember pineapple")
    rig.wait_bot_message(CODEX, content_contains="First answer.", timeout=90)
    first = conversation_id(rig)
    wait_until(lambda: "Worked for" in rig.screen(CODEX), 30, "the turn's last line")
    screen = rig.screen(CODEX)

    assert command(rig, "mode", {"mode": "plan"}, channel=CODEX) == (
        "Codex has no permission modes the bridge can switch; its approval policy comes from "
        "its config or `codexArgs`."
    )
    assert rig.screen(CODEX) == screen  # nothing pressed

    # The names offered are Codex's own catalog (what its /model picker lists).
    offered = rig.discord.autocomplete(rig.ids[CODEX], "model", {"name": "6.2"}, "name")
    values = [c["value"] for c in offered["choices"]]
    assert "gpt-6.2-sol" in values and "gpt-6.2-astra" in values, offered
    assert all("6.2" in v for v in values), values

    refused = command(rig, "model", {"name": "--dangerously-bypass"}, channel=CODEX)
    assert refused.startswith("⚠️ A model name is letters"), refused
    answer = command(rig, "model", {"name": "gpt-6.2-sol"}, channel=CODEX)
    assert answer.startswith(
        f"Model set to **gpt-6.2-sol**: Codex restarted with `--model gpt-6.2-sol` "
        f"(conversation `{first}` resumed"
    ), answer
    sent = ask(rig, "which model", "Sol answer.")
    assert rig.openai.requests[-1]["model"] == "gpt-6.2-sol"
    assert "pineapple" in sent  # the same conversation
    assert conversation_id(rig) == first
    assert "model: gpt-6.2-sol" in command(rig, "status", channel=CODEX)

    # Kept for the session's later starts.
    assert command(rig, "stop", channel=CODEX) == "Stopped **project-b**."
    ask(rig, "and now", "Still sol.")
    assert rig.openai.requests[-1]["model"] == "gpt-6.2-sol"


def test_history_lists_codexs_conversations_and_resumes_one_in_a_thread(codex_rig) -> None:
    rig = codex_rig
    rig.openai.script(text("First answer."), text("Thread answer."))
    start_trusted(rig, "remember pineapple")
    rig.wait_bot_message(CODEX, content_contains="First answer.", timeout=90)
    first = conversation_id(rig)
    idle(rig)

    listed = answer(rig, rig.discord.run_command(rig.ids[CODEX], "history"))
    assert listed["content"].startswith("**1 past conversation of project-b**"), listed
    select = select_of(listed)
    (mine,) = select["options"]
    assert mine["value"] == first and mine["label"] == "remember pineapple", mine
    assert "First answer." in mine["description"]
    shown = answer(rig, rig.discord.select(listed["id"], select["custom_id"], [first]))
    assert f"**Conversation `{first}`**" in shown["content"], shown

    # Still open in the channel's Codex: not resumed a second time beside it.
    busy = rig.discord.click(shown["id"], custom_id(shown, "Resume in a thread"))
    assert "open in a running Codex (process" in busy["message"]["content"], busy
    assert command(rig, "stop", channel=CODEX) == "Stopped **project-b**."
    rollout = json.loads((rig.state_dir / "sessions" / f"{rig.ids[CODEX]}.json").read_text())[
        "transcript_path"
    ]
    wait_until(
        lambda: machine_codex.running_conversation(rollout) is None,
        30,
        "the stopped Codex to finish exiting",
    )

    resumed = answer(rig, rig.discord.click(shown["id"], custom_id(shown, "Resume in a thread")))
    assert resumed["content"].startswith("Resumed in <#"), resumed["content"]
    thread = resumed["content"].split("<#", 1)[1].split(">", 1)[0]
    rig.discord.post_message(thread, "which word?")
    rig.wait_bot_message(thread, since=0, content_contains="Thread answer.", timeout=90)
    request = rig.openai.requests[-1]
    assert last_user_text(request) == "which word?"
    assert "remember pineapple" in json.dumps(request)
    threads = rig.state_dir / "sessions" / f"{thread}.json"
    assert json.loads(threads.read_text())["session_id"] == first  # Codex's SessionStart
