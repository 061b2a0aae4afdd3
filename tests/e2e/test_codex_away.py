"""Codex at a usage limit, end to end: the real bot on the emulator, the real Codex TUI, the
fake Responses API answering HTTP 429 ``usage_limit_reached``. Codex fires no hook for it (no
Stop, no StopFailure): the bot reads its notice off the pane, closes the turn's status, posts
"⏸ Usage limit — resumes at …" and types the continue prompt into Codex at the reset."""

from __future__ import annotations

import json
import re
import time

import pytest

from bridge.codex import versions
from bridge_testkit.rig import wait_until
from fake_openai import last_user_text, text, usage_limit
from tests.e2e.test_codex import codex_rig, codex_status, openai, start_trusted

__all__ = ["codex_rig", "openai"]  # the fixtures this module uses


def message_now(rig, message: dict) -> dict:
    return next(m for m in rig.discord.messages(rig.ids["project-b"]) if m["id"] == message["id"])


def reset_ahead() -> tuple[int, int]:
    """A reset Codex shows as a minute that ends 35 to 95 s from now (time enough for the
    bot to see the limit first on a loaded machine): (resets_at, the end of that minute, when
    the bridge resumes: Codex shows the reset rounded down to it)."""
    end = (int(time.time()) // 60 + 1) * 60
    if end - time.time() < 35:
        end += 60
    return end - 30, end


@pytest.mark.parametrize("codex_rig", versions.TESTED, indirect=True)
def test_a_usage_limit_on_codexs_screen_closes_the_turn_and_resumes_at_the_reset(
    codex_rig,
) -> None:
    rig = codex_rig
    raw = json.loads((rig.bridge_home / "config.json").read_text())  # project-b on Codex
    raw["limits"] = {"continuePrompt": "please go on", "resumeMarginSeconds": 1}
    rig.write_config(raw)
    rig.openai.script(text("Ready."))
    start_trusted(rig, "hello")
    rig.wait_bot_message("project-b", content_contains="Ready.", timeout=90)

    resets_at, minute_end = reset_ahead()
    rig.openai.script(usage_limit(resets_at), text("Back at work."))
    rig.post("hit the limit", project="project-b")
    status = codex_status(rig, "⏸ Stopped at a usage limit")
    assert "0 tools" in status["content"]
    notice = rig.wait_bot_message(
        "project-b", content_contains="⏸ Usage limit", timeout=60, status=True
    )
    content = notice["content"]
    assert content.startswith(
        f"⏸ Usage limit — resumes at <t:{minute_end}:t> (<t:{minute_end}:R>)"
    ), content
    assert re.search("■ You['’]ve hit your usage limit", content), content  # Codex's notice
    assert "Then I type “please go on” into the session." in content
    assert not any("please go on" in last_user_text(r) for r in rig.openai.requests)

    def resumed() -> bool:
        return any(last_user_text(r) == "please go on" for r in rig.openai.requests)

    wait_until(resumed, 120, "the continue prompt typed into Codex at the reset")
    assert time.time() >= minute_end  # not before the minute Codex showed has passed
    reply = rig.wait_bot_message("project-b", content_contains="Back at work.", timeout=60)
    assert reply["content"] == "Back at work."

    def closed() -> bool:
        return "▶️ Usage limit over" in message_now(rig, notice)["content"]

    wait_until(closed, 30, "the limit's message closed")
    done = message_now(rig, notice)
    assert "typed “please go on” into the session" in done["content"], done
    assert done["components"] == []
    # The watch edits the message, then forgets the wait (a bot killed between edits again).
    wait_until(lambda: not list((rig.state_dir / "away").glob("limit-*")), 10, "the wait forgotten")
    # one limit message, and the resumed turn was not taken for another limit
    shown = rig.bot_messages("project-b", status=True)
    limits = [m for m in shown if "Usage limit" in m["content"]]
    assert [m["id"] for m in limits] == [notice["id"]], limits
