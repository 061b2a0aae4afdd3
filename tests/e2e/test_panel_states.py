"""The control panel while Claude works and while a Discord prompt waits for the owner, and
Stop in the middle of a turn (asks first, then stops)."""

from __future__ import annotations

from bridge_testkit import wait_until
from fake_anthropic import text, tool_use
from fake_anthropic.claude_cli import BUSY_MARKER
from tests.e2e.test_control import STOPPED, panel_edit
from tests.e2e.test_decisions import custom_id, model_saw, wait_prompt

WAITING = "🔔 **project-a** · waiting for you"
WORKING = "🟡 **project-a** · working"


def test_panel_shows_waiting_and_working_and_stop_mid_turn_asks_first(rig) -> None:
    general = rig.ids["general"]
    raw = rig.config()
    raw["servers"][0]["generalChannelId"] = general
    rig.write_config(raw)
    rig.api.script(
        tool_use("Bash", {"command": "touch never.txt", "description": "Create"}),
        text("this answer comes too late", delay=120),
    )
    since = rig.discord.mark()
    rig.start_bot()
    panel = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=general,
        author_id=rig.ids["bot_id"],
        timeout=30,
    )["message"]
    refresh = "db:panel:refresh:0"
    stop = f"db:panel:stop:{rig.ids['project-a']}"

    # A prompt is open on Discord: the panel says the session waits for you.
    rig.post("make a file")
    prompt = wait_prompt(rig)
    since = rig.discord.mark()
    assert rig.discord.click(panel["id"], refresh)["response_type"] == 6
    panel_edit(rig, panel["id"], since, WAITING)

    # Denied: the model now takes its time, the turn runs: the panel says working.
    rig.discord.click(prompt["id"], custom_id(prompt, "Deny"))
    model_saw(rig, 2)
    wait_until(lambda: BUSY_MARKER in rig.screen(), 30, "the turn to run")
    since = rig.discord.mark()
    assert rig.discord.click(panel["id"], refresh)["response_type"] == 6
    panel_edit(rig, panel["id"], since, WORKING)

    # Stop mid-turn asks first and stops nothing yet.
    asked = rig.discord.click(panel["id"], stop)
    assert asked["response_type"] == 4 and asked["ephemeral"], asked
    question = asked["message"]
    assert "middle of a turn" in question["content"] and "Stop it anyway?" in question["content"]
    pane = rig.pane()
    assert pane is not None and not pane.dead
    assert BUSY_MARKER in rig.screen()

    # "Stop anyway" stops it; the question says so and the panel shows it stopped.
    since = rig.discord.mark()
    stop_anyway = custom_id(question, "Stop anyway")
    assert rig.discord.click(question["id"], stop_anyway)["response_type"] == 6
    said = rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=question["id"],
        content_contains="Stopped **project-a**",
        timeout=30,
    )["message"]
    assert not said.get("components")
    wait_until(lambda: rig.pane() is None, 30, "the pane to close")
    panel_edit(rig, panel["id"], since, STOPPED)
