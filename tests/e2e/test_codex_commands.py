"""The session slash commands in a Codex channel, end to end: the real bot on the emulator, the
real Codex TUI in the bot's tmux, the fake Responses API. What the owner reads (the ephemeral
answers), what Codex is sent (a fresh conversation, a resumed one, a model) and the pane."""

from __future__ import annotations

import json

from bridge_testkit.rig import wait_until
from fake_openai import exec_command, last_user_text, text
from tests.e2e.test_codex import codex_rig, codex_status, openai, start_trusted  # noqa: F401
from tests.e2e.test_control import command

CODEX = "project-b"


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
    return json.dumps(request)


def test_status_peek_esc_new_stop_and_resume_in_a_codex_channel(codex_rig) -> None:
    rig = codex_rig
    rig.openai.script(
        text("First answer."),
        exec_command("echo working"),
        text("never shown", delay=60),
        text("Fresh answer."),
        text("Resumed answer."),
    )
    start_trusted(rig, "remember pineapple")
    rig.wait_bot_message(CODEX, content_contains="First answer.", timeout=90)
    first = conversation_id(rig)

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
    assert "Conversation interrupted" in rig.screen(CODEX)

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


def test_model_restarts_codex_on_its_conversation_and_mode_says_it_has_none(codex_rig) -> None:
    rig = codex_rig
    rig.openai.script(text("First answer."), text("Sol answer."), text("Still sol."))
    start_trusted(rig, "remember pineapple")
    rig.wait_bot_message(CODEX, content_contains="First answer.", timeout=90)
    first = conversation_id(rig)
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
