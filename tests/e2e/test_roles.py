"""``roles``: members with a Discord role drive, approve or watch, and no more.

bob has the server's *drivers* role, carol project-a's *approvers* role, dave the server's
*watchers* role, erin no role at all (alice is the owner). Their roles come with each message,
click, select, modal submit and reaction, as Discord sends them."""

from __future__ import annotations

from bridge_testkit import QUESTIONS, wait_until
from fake_anthropic import echo, tool_use
from tests.e2e.test_control import command
from tests.e2e.test_decisions import (
    components,
    current_message,
    custom_id,
    model_saw,
    wait_closed,
    wait_prompt,
)

DAVE, ERIN = "424242424242424242", "434343434343434343"  # users the emulator does not seed


def with_roles(rig) -> None:
    """Config and members: drivers drive everywhere, approvers approve in project-a."""
    ids = rig.ids
    raw = rig.config()
    server = raw["servers"][0]
    server["roles"] = {ids["drivers_role_id"]: ["drive"], ids["watchers_role_id"]: ["watch"]}
    server["projects"][0]["roles"] = {ids["approvers_role_id"]: ["approve"]}
    rig.write_config(raw)
    rig.discord.set_roles("bob", ["drivers"])
    rig.discord.set_roles("carol", ["approvers"])
    rig.discord.set_roles(DAVE, ["watchers"])


def refused(result: dict, text: str) -> None:
    assert result["response_type"] == 4 and result["ephemeral"], result
    assert text in result["message"]["content"], result


def test_a_driver_types_and_an_approver_allows_a_watcher_only_sees(rig) -> None:
    with_roles(rig)
    project = rig.projects["project-a"]
    rig.api.script(
        tool_use("Bash", {"command": "touch by-carol.txt", "description": "Create a file"}),
        echo(),
    )
    rig.start_bot()

    # Messages: the watcher's and the stranger's are not typed; the driver's is.
    watched = rig.post("typed by dave", user=DAVE)
    rig.post("typed by erin", user=ERIN)
    driven = rig.post("make a file", user="bob")
    rig.wait_reaction(driven)
    prompt = wait_prompt(rig)
    assert not any("typed by" in str(r["messages"]) for r in rig.api.requests)
    assert "✅" not in rig.discord.reactions(watched["channel_id"], watched["id"])

    # A button: the driver may not approve; nor may the watcher; the approver's Allow is taken.
    allow = custom_id(prompt, "Allow")
    refused(rig.discord.click(prompt["id"], allow, user="bob"), "You may not approve in project-a")
    refused(rig.discord.click(prompt["id"], allow, user=DAVE), "You may not approve in project-a")
    refused(rig.discord.click(prompt["id"], allow, user=ERIN), "allowed users")
    # Reactions: the driver's ✅ decides nothing (the bot logs it ignored).
    rig.discord.react(prompt["channel_id"], prompt["id"], "✅", user="bob")
    ignored = f"ignored ✅ on {prompt['id']} from {rig.ids['bob']}"
    wait_until(lambda: ignored in rig.bot_output(), 30, "the reaction ignored")
    assert "Allowed" not in current_message(rig, prompt)["content"]
    assert rig.discord.click(prompt["id"], allow, user="carol")["response_type"] == 7
    assert "[tool_result]" in model_saw(rig, 2)
    assert (project / "by-carol.txt").exists()
    assert f"Allowed** by <@{rig.ids['carol']}>" in wait_closed(rig, prompt)["content"]

    # Slash commands: /status is watching, /esc is driving.
    assert "state: " in command(rig, "status", user=DAVE)
    assert "You may not drive in project-a" in command(rig, "esc", user=DAVE)
    assert "You may not drive in project-a" in command(rig, "esc", user="carol")
    assert "allowed users" in command(rig, "status", user=ERIN)
    assert "state: " in command(rig, "status", user="bob")


def test_an_approver_answers_by_select_and_modal_a_driver_may_not(rig) -> None:
    with_roles(rig)
    rig.api.script(tool_use("AskUserQuestion", QUESTIONS), echo())
    rig.start_bot()
    rig.post("set up the app", user="bob")
    prompt = wait_prompt(rig, "Claude has questions")
    select = next(c for c in components(prompt) if c["type"] == 3)

    # A select: the driver's pick is refused and changes nothing; the approver's is taken.
    picked = rig.discord.select(prompt["id"], select["custom_id"], ["o0", "o2"], user="bob")
    refused(picked, "You may not approve in project-a")
    assert "Features:**" not in current_message(rig, prompt)["content"]
    answered = rig.discord.select(prompt["id"], select["custom_id"], ["o0"], user="carol")
    assert answered["response_type"] == 7
    prompt = current_message(rig, prompt)

    # A modal: the approver opens Other…; the driver's submit of it is refused, hers taken.
    opened = rig.discord.click(prompt["id"], custom_id(prompt, "Other…"), user="carol")
    modal = opened["modal"]["custom_id"]
    refused(
        rig.discord.submit_modal(modal, {"text": "typed by bob"}, user="bob"),
        "You may not approve in project-a",
    )
    rig.discord.submit_modal(modal, {"text": "CockroachDB, please"}, user="carol")
    saw = model_saw(rig, 2)
    assert '"Which database should we use?"="CockroachDB, please"' in saw, saw
    assert "typed by bob" not in saw
