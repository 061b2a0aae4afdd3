"""The control panel and the slash commands, seen from Discord (emulator), tmux and the fake
Anthropic API."""

from __future__ import annotations

import pytest

from bridge.claude.screen import input_box, is_busy, is_prompt_ready
from bridge_testkit import wait_until
from fake_anthropic import echo, text

STOPPED = "⚫ **project-a** · stopped"


def panel_edit(rig, message_id: str, since: int, contains: str, timeout: float = 60.0) -> dict:
    try:
        record = rig.discord.wait(
            since=since, kind="message_update", message_id=message_id,
            content_contains=contains, timeout=timeout,
        )  # fmt: skip
    except TimeoutError as err:
        raise AssertionError(f"{err}\n{rig.diagnostics()}") from None
    return record["message"]


def command(rig, name: str, options: dict | None = None, user: str = "alice",
            channel: str = "project-a") -> str:  # fmt: skip
    """Run a slash command and return the text the user sees (the ephemeral answer)."""
    since = rig.discord.mark()
    result = rig.discord.run_command(rig.ids[channel], name, options, user=user)
    assert result["ephemeral"], result
    if result["response_type"] == 4:  # answered at once (a refusal)
        return result["message"]["content"]
    assert result["response_type"] == 5, result  # "thinking…", then the follow-up edits it
    record = rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )
    message = record["message"]
    if message["attachments"]:
        return rig.discord.file_bytes(message["attachments"][0]).decode()
    return message["content"]


def test_control_panel_is_one_message_edited_across_start_stop_and_restart(rig) -> None:
    general = rig.ids["general"]
    raw = rig.config()
    raw["servers"][0]["generalChannelId"] = general
    rig.write_config(raw)
    since = rig.discord.mark()
    rig.start_bot()
    panel = rig.discord.wait(
        since=since, kind="message_create", channel_id=general, author_id=rig.ids["bot_id"],
        timeout=30,
    )["message"]  # fmt: skip
    assert STOPPED in panel["content"] and "project-b" in panel["content"]
    start_a = f"db:panel:start:{rig.ids['project-a']}"
    stop_a = f"db:panel:stop:{rig.ids['project-a']}"

    # Someone else's click is refused and starts nothing.
    refused = rig.discord.click(panel["id"], start_a, user="bob")
    assert refused["ephemeral"] and "Only the owner" in refused["message"]["content"]
    assert rig.pane("project-a") is None

    since = rig.discord.mark()
    assert rig.discord.click(panel["id"], start_a)["response_type"] == 6
    pane = wait_until(lambda: rig.pane("project-a"), what="project-a to start")
    rig.tmux.wait_for(pane.pane_id, is_prompt_ready, 60)
    panel_edit(rig, panel["id"], since, "🟢 **project-a** · idle")

    since = rig.discord.mark()
    assert rig.discord.click(panel["id"], stop_a)["response_type"] == 6
    panel_edit(rig, panel["id"], since, STOPPED)
    assert rig.pane("project-a") is None

    rig.stop_bot()
    since = rig.discord.mark()
    rig.start_bot()
    panel_edit(rig, panel["id"], since, STOPPED)  # the restart edits the same message
    posted = [  # ephemeral answers (the refusal) are not channel messages
        r["message_id"]
        for r in rig.discord.records(kind="message_create")
        if r.get("channel_id") == general and not r["message"]["flags"] & 64
    ]
    assert posted == [panel["id"]]


@pytest.mark.claude_versions
def test_slash_commands_peek_mode_model_esc_and_refusal(rig) -> None:
    rig.api.script(echo(), text("never finishes in time", delay=60), echo())
    rig.start_bot()
    assert "no claude code is running here" in command(rig, "peek").lower()
    assert "Only the owner" in command(rig, "start", user="bob")
    assert rig.pane("project-a") is None

    assert command(rig, "start").startswith("Started **project-a**")
    rig.post("first prompt here")
    rig.wait_bot_message(content_contains="Model saw: first prompt here", timeout=60)
    wait_until(lambda: not is_busy(rig.screen()), what="the turn to end")
    assert "Model saw: first prompt here" in command(rig, "peek", {"lines": 30})

    assert "Mode is now **plan**" in command(rig, "mode", {"mode": "plan"})
    assert "plan mode on" in rig.screen()
    assert "mode: plan" in command(rig, "status")
    assert "Only the owner" in command(rig, "mode", {"mode": "default"}, user="bob")
    assert "plan mode on" in rig.screen()

    # /esc interrupts a turn that is still waiting for the model.
    rig.post("a slow question")
    wait_until(lambda: is_busy(rig.screen()), what="the turn to start")
    assert "state: working" in command(rig, "status")
    assert command(rig, "esc").startswith("Interrupted")
    wait_until(lambda: not is_busy(rig.screen()), timeout=15, what="the turn to stop")
    assert "state: idle" in command(rig, "status")

    # Back to the default mode, read back from the footer (2.1.197 shows no marker for it).
    assert "Mode is now **default**" in command(rig, "mode", {"mode": "default"})
    assert "mode: default" in command(rig, "status")

    assert "claude-test-model" in command(rig, "model", {"name": "claude-test-model"})
    rig.post("which model now")
    rig.wait_bot_message(content_contains="which model now", timeout=60)
    assert rig.api.requests[-1]["model"] == "claude-test-model"


@pytest.mark.claude_versions
def test_keys_types_words_with_their_spaces_and_presses_key_names(rig) -> None:
    rig.api.script(echo())
    rig.start_bot()
    assert command(rig, "start").startswith("Started **project-a**")
    wait_until(lambda: is_prompt_ready(rig.screen()), what="the input box")

    answer = command(rig, "keys", {"keys": "hello there,  world"})
    assert answer == "Sent: 'hello there,  world'"
    wait_until(lambda: input_box(rig.screen()) == "hello there,  world",
               timeout=10, what="the words, spaces kept, in the input box")  # fmt: skip

    # Key names stay keys: C-u clears the line, then text, then Enter submits it.
    answer = command(rig, "keys", {"keys": "C-u two words Enter"})
    assert answer == "Sent: C-u 'two words' Enter"
    reply = rig.wait_bot_message(content_contains="Model saw: two words", timeout=60)
    assert "hello" not in reply["content"]
