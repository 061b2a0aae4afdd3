"""A Codex turn's live status, end to end (the real bot, the real Codex TUI, the fake
Responses API): the command it runs and its text before it, from its PreToolUse and
PostToolUse hooks and its rollout transcript, as a Claude Code turn's status shows them."""

from __future__ import annotations

import json
import re

from bridge_testkit.rig import wait_until
from fake_openai import exec_command, text
from tests.e2e.test_codex import codex_rig, codex_status, openai, start_trusted

__all__ = ["codex_rig", "openai"]  # the fixtures this module uses


def status_texts(rig, message_id: str) -> list[str]:
    """Every text the status message showed, in order (posted, then each edit)."""
    shown = []
    for kind in ("message_create", "message_update"):
        for record in rig.discord.records(kind=kind):
            message = record.get("message") or {}
            if message.get("id") == message_id:
                shown.append((record["seq"], message.get("content") or ""))
    return [content for _, content in sorted(shown)]


def test_a_codex_turn_shows_the_command_it_runs_on_its_status(codex_rig) -> None:
    rig = codex_rig
    rig.openai.script(
        exec_command("echo progress-check", text_before="Checking first."),
        text("Checked.", delay=8),
    )
    start_trusted(rig, "run the check")
    status = codex_status(rig, "⏳")

    def shown(words: str) -> bool:
        return any(words in t for t in status_texts(rig, status["id"]))

    try:
        wait_until(lambda: shown("🔧 Bash: `echo progress-check` ✓"), 60, "the command, done")
    except AssertionError as err:
        shown_texts = status_texts(rig, status["id"])
        raise AssertionError(f"{err}\n{shown_texts}\n{rig.diagnostics()}") from None
    rig.wait_bot_message("project-b", content_contains="Checked.", timeout=60)
    working = [t for t in status_texts(rig, status["id"]) if "progress-check" in t]
    assert working[-1].startswith("⏳ **Working** · "), working
    assert " · 1 tool\n" in working[-1], working
    assert "> 🔄 Checking first." in working[-1], working
    closed = codex_status(rig, "✅ Done")
    assert " · 1 tool" in closed["content"] and "$" not in closed["content"], closed


def test_a_codex_reply_ends_with_its_model_and_context_and_no_cost(codex_rig) -> None:
    """The footer (``replies.footer``) from Codex's rollout: model and context used."""
    rig = codex_rig
    raw = json.loads((rig.bridge_home / "config.json").read_text())  # project-b on Codex
    raw["replies"] = {"footer": True}
    rig.write_config(raw)
    rig.openai.script(text("Footer here."))
    start_trusted(rig, "hello")
    reply = rig.wait_bot_message("project-b", content_contains="Footer here.", timeout=90)
    body, _, footer = reply["content"].rpartition("\n")
    assert body.rstrip() == "Footer here.", reply["content"]
    assert re.fullmatch(r"-# gpt-fake · ctx \d+%", footer), reply["content"]
