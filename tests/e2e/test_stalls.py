"""Stalls: a tool that hangs gets "Still working?", a waiting prompt does not, a dead Claude Code
is said at once with Restart and resume.

Real CLI, real tmux, the emulator and the bot; ``stallMinutes`` is set to seconds.
"""

from __future__ import annotations

import time

from bridge_testkit import wait_until
from fake_anthropic import text, tool_use

STALL_MINUTES = 0.05  # 3 s
HANG = "python3 -c 'import time; time.sleep(120)'"  # Claude Code refuses a bare sleep


def with_stall_minutes(rig, minutes: float = STALL_MINUTES, permission: str = "") -> None:
    raw = rig.config()
    raw["stallMinutes"] = minutes
    if permission:
        raw["servers"][0]["projects"][0]["permission"] = permission
    rig.write_config(raw)


def button(message: dict, label: str) -> dict:
    return next(
        c for row in message["components"] for c in row["components"] if c.get("label") == label
    )


def message(rig, message_id: str) -> dict:
    return next(m for m in rig.discord.messages(rig.ids["project-a"]) if m["id"] == message_id)


def test_a_hanging_tool_gets_the_stall_notice_and_interrupt_works(rig) -> None:
    with_stall_minutes(rig, permission="bypassPermissions")  # no dialog: the tool just runs
    rig.api.script(
        tool_use("Bash", {"command": HANG, "description": "Hang"}),
        text("never seen"),
    )
    rig.start_bot()
    rig.post("run the thing that hangs")
    notice = rig.wait_bot_message(content_contains="Still working?", timeout=60)
    assert f"Last: Bash `{HANG}` (still running)" in notice["content"], notice["content"]
    assert [button(notice, name)["label"] for name in ("Peek", "Interrupt", "Keep waiting")]

    peek = rig.discord.click(notice["id"], button(notice, "Peek")["custom_id"], timeout=15)
    assert "time.sleep" in str(peek), peek  # the screen, for the owner only
    assert rig.discord.click(notice["id"], button(notice, "Keep waiting")["custom_id"], user="bob")[
        "ephemeral"
    ]
    waited = rig.discord.click(notice["id"], button(notice, "Keep waiting")["custom_id"])
    assert "Keeping waiting" in str(waited), waited
    again = rig.wait_bot_message(
        content_contains="Still working?", timeout=30, since=rig.discord.mark()
    )
    assert again["id"] != notice["id"]  # asked again after another quiet stall time
    assert "Keeping waiting" in message(rig, notice["id"])["content"]

    rig.discord.click(again["id"], button(again, "Interrupt")["custom_id"], timeout=15)
    wait_until(lambda: "Interrupted" in rig.screen(), 15, f"the interrupt\n{rig.screen()}")
    wait_until(lambda: "⏹ Interrupted" in message(rig, again["id"])["content"], 10, "notice closed")
    assert len(rig.api.requests) == 1  # the hung tool never came back


def test_a_waiting_prompt_is_no_stall_and_a_dead_claude_is_said_at_once(rig) -> None:
    with_stall_minutes(rig)
    rig.api.script(tool_use("Bash", {"command": "touch stall-x.txt", "description": "Touch"}))
    rig.start_bot()
    rig.post("make the file")
    prompt = rig.wait_bot_message(content_contains="Bash", timeout=60)  # the permission prompt
    assert prompt["components"]
    # From the prompt on (before it, 3 quiet seconds at load 20 are a stall, rightly asked).
    since = rig.discord.mark()
    time.sleep(STALL_MINUTES * 60 * 2.5)  # well past the stall time, waiting for the owner
    asked = rig.discord.records(since=since, kind="message_create")
    assert not any("Still working?" in (r["message"]["content"] or "") for r in asked), asked

    pane = rig.pane().pane_id
    rig.tmux.kill(pane)  # Claude Code dies mid-turn
    died = rig.wait_bot_message(content_contains="Claude Code exited", timeout=15)
    restart = button(died, "Restart and resume")
    assert rig.discord.click(died["id"], restart["custom_id"], user="bob")["ephemeral"]
    rig.discord.click(died["id"], restart["custom_id"], timeout=60)
    closed = wait_until(
        lambda: "🔁 Restarted" in (m := message(rig, died["id"]))["content"] and m,
        60,
        f"the notice saying it restarted\n{rig.diagnostics()}",
    )
    assert closed["components"] == []
    assert rig.pane() is not None and not rig.pane().dead  # Claude Code runs again
    assert not any("Still working?" in m["content"] for m in rig.bot_messages())
