"""The control panel and the slash commands, seen from Discord (emulator), tmux and the fake
Anthropic API."""

from __future__ import annotations

import time

import pytest

from bridge.claude.screen import input_box, is_busy, is_prompt_ready
from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text, text, tool_use

STOPPED = "⚫ **project-a** · stopped"
REFUSED = "Only this bridge's owner and its allowed users can do that."  # every refusal


def panel_edit(rig, message_id: str, since: int, contains: str, timeout: float = 60.0) -> dict:
    try:
        record = rig.discord.wait(
            since=since,
            kind="message_update",
            message_id=message_id,
            content_contains=contains,
            timeout=timeout,
        )
    except TimeoutError as err:
        raise AssertionError(f"{err}\n{rig.diagnostics()}") from None
    return record["message"]


def command(
    rig, name: str, options: dict | None = None, user: str = "alice", channel: str = "project-a"
) -> str:
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
        since=since,
        kind="message_create",
        channel_id=general,
        author_id=rig.ids["bot_id"],
        timeout=30,
    )["message"]
    assert STOPPED in panel["content"] and "project-b" in panel["content"]
    start_a = f"db:panel:start:{rig.ids['project-a']}"
    stop_a = f"db:panel:stop:{rig.ids['project-a']}"

    # Someone else's click is refused and starts nothing.
    refused = rig.discord.click(panel["id"], start_a, user="bob")
    assert refused["ephemeral"] and refused["message"]["content"] == REFUSED
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
    assert command(rig, "start", user="bob") == REFUSED
    assert rig.pane("project-a") is None

    assert command(rig, "start").startswith("Started **project-a**")
    rig.post("first prompt here")
    rig.wait_bot_message(content_contains="Model saw: first prompt here", timeout=60)
    wait_drawn(rig, "first prompt here")
    assert "Model saw: first prompt here" in command(rig, "peek", {"lines": 30})

    assert "Mode is now **plan**" in command(rig, "mode", {"mode": "plan"})
    assert "plan mode on" in rig.screen()
    assert "mode: plan" in command(rig, "status")
    assert command(rig, "mode", {"mode": "manual"}, user="bob") == REFUSED
    assert "plan mode on" in rig.screen()

    # /esc interrupts a turn that is still waiting for the model.
    rig.post("a slow question")
    wait_until(lambda: is_busy(rig.screen()), what="the turn to start")
    rig.api.wait_requests(2, timeout=60)  # at the model: an earlier Escape would cancel the
    # prompt before it is sent, and "which model now" would get the slow answer instead
    assert "state: working" in command(rig, "status")
    assert command(rig, "esc").startswith("Interrupted")
    wait_until(lambda: not is_busy(rig.screen()), timeout=15, what="the turn to stop")
    assert "state: idle" in command(rig, "status")

    # Back to the manual mode, read back from the footer (2.1.197 shows no marker for it), by
    # both its names: 2.1.332's "manual", and "default" as hooks, settings and 2.1.197 say.
    every = [c for scope in rig.discord.commands().values() for c in scope]
    [registered] = [c for c in every if c["name"] == "mode"]
    choices = {c["name"]: c["value"] for c in registered["options"][0]["choices"]}
    assert choices["manual (default)"] == "manual", choices
    assert "Mode is now **manual (default)**" in command(rig, "mode", {"mode": "manual"})
    assert "mode: manual (default)" in command(rig, "status")

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
    wait_until(
        lambda: input_box(rig.screen()) == "hello there,  world",
        timeout=10,
        what="the words, spaces kept, in the input box",
    )

    # Key names stay keys: C-u clears the line, then text, then Enter submits it.
    answer = command(rig, "keys", {"keys": "C-u two words Enter"})
    assert answer == "Sent: C-u 'two words' Enter"
    reply = rig.wait_bot_message(content_contains="Model saw: two words", timeout=60)
    assert "hello" not in reply["content"]


def test_mode_model_and_esc_refuse_to_press_keys_into_an_open_dialog(rig) -> None:
    """In Claude Code's Write dialog Shift+Tab picks "Yes, allow all edits" and Escape picks
    "No": /mode once wrote the file and answered "Mode is now plan". Every command that
    presses keys reads the screen first and refuses while a dialog replaces the input box."""
    written = rig.projects["project-a"] / "dialog.txt"
    rig.api.script(
        tool_use("Write", {"file_path": str(written), "content": "hello\n"}), echo(prefix="Saw: ")
    )
    rig.start_bot()
    rig.post("write dialog.txt")
    prompt = rig.wait_bot_message(content_contains="Claude wants to use", timeout=60)
    wait_until(lambda: "Do you want to create" in rig.screen(), what="the Write dialog")
    time.sleep(0.6)  # dialogs ignore keys for ~0.3 s after they render

    for name, options in (("mode", {"mode": "plan"}), ("esc", None), ("model", {"name": "x"})):
        answer = command(rig, name, options)
        assert answer.startswith("⚠️") and "dialog" in answer, (name, answer)
    # The ⏹ Interrupt button of the turn's status message refuses too (in a follow-up: the
    # click is acknowledged first, as the key gate may wait for a tool call's dialog).
    status = wait_until(lambda: interrupt_button(rig), what="the status message's ⏹ button")
    since = rig.discord.mark()
    clicked = rig.discord.click(*status)
    record = rig.discord.wait(since=since, interaction_id=clicked["interaction_id"], timeout=30)
    refusal = record["message"]
    assert refusal["flags"] & 64 and "dialog" in refusal["content"], refusal
    screen = rig.screen()
    assert "Do you want to create" in screen and "plan mode on" not in screen
    assert not written.exists()

    # The dialog is still open and still the owner's to answer: Allow from Discord writes it.
    allow = next(
        c["custom_id"]
        for row in prompt["components"]
        for c in row["components"]
        if c.get("label", "").startswith("Allow")
    )
    rig.discord.click(prompt["id"], allow)
    rig.wait_bot_message(content_contains="Saw: ", timeout=60)
    assert written.read_text() == "hello\n"
    assert "plan mode on" not in rig.screen()
    assert len(rig.api.requests) == 2 and "[tool_result" in last_user_text(rig.api.requests[1])


def interrupt_button(rig) -> tuple[str, str] | None:
    """(message id, custom id) of the ⏹ button on the channel's status message, if shown."""
    for message in rig.bot_messages(status=True):
        for row in message.get("components") or []:
            for component in row["components"]:
                if component.get("custom_id", "").startswith("db:int:"):
                    return message["id"], component["custom_id"]
    return None


def test_the_owner_typing_in_the_panel_is_told_where_to_type(rig) -> None:
    """A message in the control panel's channel reaches no Claude: the owner is answered with
    the project channels to type in; a stranger gets nothing."""
    raw = rig.config()
    raw["servers"][0]["generalChannelId"] = rig.ids["general"]
    rig.write_config(raw)
    since = rig.discord.mark()
    rig.start_bot()
    rig.discord.wait(since=since, channel_id=rig.ids["general"], timeout=30)  # the panel
    stranger = rig.post("hello?", project="general", user="carol")
    owner = rig.post("fix the login page", project="general")
    reply = rig.wait_bot_message(project="general", content_contains="control panel")
    assert reply["message_reference"]["message_id"] == owner["id"]
    assert f"<#{rig.ids['project-a']}>" in reply["content"]
    replies = [m for m in rig.discord.messages(rig.ids["general"]) if m.get("message_reference")]
    assert [m["message_reference"]["message_id"] for m in replies] == [owner["id"]]
    assert stranger["id"] != owner["id"] and rig.api.requests == []


def test_peek_of_a_long_screen_shows_its_bottom_inline_and_attaches_the_whole(rig) -> None:
    """On a phone a .txt is a download: the screen's last lines (the box, the latest output)
    come inline, the whole screen attached."""
    rig.api.script(echo())
    rig.start_bot()
    words = " ".join(f"word{i:04d}" for i in range(260))  # ~2,300 characters on screen
    rig.post(words)
    rig.wait_bot_message(content_contains="Model saw: word0000", timeout=60)
    wait_drawn(rig, "word0259")
    since = rig.discord.mark()
    result = rig.discord.run_command(rig.ids["project-a"], "peek", None, user="alice")
    record = rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )
    message = record["message"]
    content = message["content"]
    assert content.startswith("```\n") and "the whole screen is attached" in content, content
    assert len(content) <= 2000 and "❯" in content  # the input box, at the bottom
    (attached,) = message["attachments"]
    whole = rig.discord.file_bytes(attached).decode()
    assert "word0000" in whole and "word0259" in whole and len(whole) > len(content)


def wait_drawn(rig, last_words: str) -> None:
    """Wait until the pane shows the whole reply above an empty input box, as a user at the
    terminal would see it. The Stop hook can post a reply before Claude Code has drawn it:
    fresh-clone runs peeked within 0.3 s of the reply and got a screen without it (2.1.197) or
    with it half drawn, its last line ``word0162`` of 260 and no box below."""

    def drawn() -> bool:
        screen = rig.screen()
        reply = screen.rfind("Model saw:")
        return (
            reply >= 0
            and last_words in screen[reply:]
            and is_prompt_ready(screen)
            and not is_busy(screen)
        )

    wait_until(drawn, what=f"the reply up to {last_words!r} drawn above the empty box")
