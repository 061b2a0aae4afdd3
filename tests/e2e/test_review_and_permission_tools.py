"""Decisions the other decision tests leave out: a plan approved with "review each edit"
(the next edit asks again), and ``permissionTools`` asking on Discord for a tool Claude
Code's own rules already allow."""

from __future__ import annotations

import json

from fake_anthropic import text, tool_use
from tests.e2e.test_decisions import (
    PERMISSION,
    custom_id,
    model_saw,
    wait_closed,
    wait_prompt,
    write_plan,
)


def test_plan_approved_with_review_each_edit_asks_for_the_next_edit(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["projects"][0]["permission"] = "plan"
    rig.write_config(raw)
    project = rig.projects["project-a"]
    rig.api.script(
        write_plan("# Plan\n\n1. Add NOTES.md\n"),
        tool_use("ExitPlanMode", {}),
        tool_use("Write", {"file_path": str(project / "NOTES.md"), "content": "noted\n"}),
        text("notes written"),
    )
    rig.start_bot()
    rig.post("plan some notes")
    plan = wait_prompt(rig, "plan is ready")
    approved = rig.discord.mark()
    answer = rig.discord.click(plan["id"], custom_id(plan, "Approve, review each edit"))
    assert answer["response_type"] == 7
    assert "approved your plan" in model_saw(rig, 3)
    assert "review each edit" in wait_closed(rig, plan)["content"]

    # The Write after approval is not auto-accepted: it asks, on Discord.
    edit = wait_prompt(rig, since=approved)
    assert "NOTES.md" in edit["content"], edit["content"]
    assert "accept edits on" not in rig.screen()
    assert not (project / "NOTES.md").exists()
    rig.discord.click(edit["id"], custom_id(edit, "Allow"))
    rig.wait_bot_message(content_contains="notes written", timeout=60)
    assert (project / "NOTES.md").read_text() == "noted\n"


def test_permission_tools_ask_on_discord_even_when_claude_code_allows(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["permissionTools"] = ["Bash"]
    rig.write_config(raw)
    settings_path = rig.claude_home / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    settings["permissions"]["allow"] += ["Bash(touch:*)", "Write"]  # Claude Code would not ask
    settings_path.write_text(json.dumps(settings, indent=2))
    project = rig.projects["project-a"]
    rig.api.script(
        tool_use("Write", {"file_path": str(project / "unlisted.txt"), "content": "w\n"}),
        tool_use("Bash", {"command": "touch listed.txt", "description": "Create a file"}),
        text("both done"),
    )
    rig.start_bot()
    rig.post("write then touch")
    prompt = wait_prompt(rig)
    # Write (allowed, not listed) ran without asking; Bash (allowed, but listed) asks.
    assert "touch listed.txt" in prompt["content"], prompt["content"]
    assert (project / "unlisted.txt").exists()
    assert not (project / "listed.txt").exists()
    rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    rig.wait_bot_message(content_contains="both done", timeout=60)
    assert (project / "listed.txt").exists()
    asked = [m for m in rig.bot_messages() if PERMISSION in m["content"]]
    assert [m["id"] for m in asked] == [prompt["id"]]
