"""``allowedUserIds``: an allowed user drives the session like the owner (messages, prompt
buttons, slash commands, the panel); a stranger is refused with a text that names both.
Every way in is enumerated in ``tests/unit/bot/test_who_may_act.py``."""

from __future__ import annotations

from fake_anthropic import echo, last_user_text, tool_use
from tests.e2e.test_control import command
from tests.e2e.test_decisions import custom_id, model_saw, wait_closed, wait_prompt

ALLOWED = "allowed users"  # every refusal names them, not only the owner


def test_allowed_user_drives_the_session_and_a_stranger_is_refused(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["discord"]["allowedUserIds"] = [rig.ids["bob"]]
    raw["servers"][0]["generalChannelId"] = rig.ids["general"]
    rig.write_config(raw)
    project = rig.projects["project-a"]
    rig.api.script(
        echo(),
        tool_use("Bash", {"command": "touch by-bob.txt", "description": "Create a file"}),
        echo(),
    )
    since = rig.discord.mark()
    rig.start_bot()
    panel = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=rig.ids["general"],
        author_id=rig.ids["bot_id"],
        timeout=30,
    )["message"]

    # carol's message comes first and is dropped; bob's is typed and answered.
    stranger = rig.post("typed by carol", user="carol")
    allowed = rig.post("typed by bob", user="bob")
    rig.wait_reaction(allowed)
    rig.wait_bot_message(content_contains="Model saw: typed by bob", timeout=60)
    assert last_user_text(rig.api.requests[0]) == "typed by bob"
    assert "✅" not in rig.discord.reactions(stranger["channel_id"], stranger["id"])
    assert not any("typed by carol" in str(r["messages"]) for r in rig.api.requests)

    # A prompt: carol's click is refused and decides nothing; bob's click decides.
    rig.post("make a file", user="bob")
    prompt = wait_prompt(rig)
    refused = rig.discord.click(prompt["id"], custom_id(prompt, "Allow"), user="carol")
    assert refused["response_type"] == 4 and refused["ephemeral"]
    assert ALLOWED in refused["message"]["content"], refused
    answer = rig.discord.click(prompt["id"], custom_id(prompt, "Allow"), user="bob")
    assert answer["response_type"] == 7
    assert "[tool_result]" in model_saw(rig, 3)
    assert (project / "by-bob.txt").exists()
    assert f"Allowed** by <@{rig.ids['bob']}>" in wait_closed(rig, prompt)["content"]
    # The closed prompt's old button (no item receives it): carol is refused before the bot
    # says anything about the prompt.
    late = rig.discord.click(prompt["id"], custom_id(prompt, "Allow"), user="carol")
    assert late["ephemeral"] and ALLOWED in late["message"]["content"], late

    # Slash commands and the panel: bob may, carol may not.
    assert "state: " in command(rig, "status", user="bob")
    refusal = command(rig, "status", user="carol")
    assert "owner" in refusal and ALLOWED in refusal, refusal
    refresh = "db:panel:refresh:0"
    assert rig.discord.click(panel["id"], refresh, user="bob")["response_type"] == 6
    refused = rig.discord.click(panel["id"], refresh, user="carol")
    assert refused["ephemeral"] and ALLOWED in refused["message"]["content"], refused
