"""Discord → Claude Code → Discord with the real CLI, real tmux, the emulator and the bot."""

from __future__ import annotations

from tests.fake_anthropic import last_user_text, text


def test_owner_prompt_reaches_model_and_reply_comes_back(rig) -> None:
    rig.api.script(text("I created hello.txt for you."))
    rig.start_bot()
    sent = rig.post("please create hello.txt")

    (request,) = rig.api.wait_requests(1, timeout=60)
    assert last_user_text(request) == "please create hello.txt"
    reply = rig.wait_bot_message(content_contains="I created hello.txt")
    assert reply["content"] == "I created hello.txt for you."
    assert reply["channel_id"] == rig.ids["project-a"]
    rig.wait_reaction(sent)
