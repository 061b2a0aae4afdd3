"""The slash commands that act on the conversation: ``/compact``, ``/clear``, ``/keys``,
``/new`` and ``/resume``, seen at the fake Anthropic API (what the model is sent), in the
channel (the replies) and in the session record on disk."""

from __future__ import annotations

import json

from bridge_testkit import wait_until
from fake_anthropic import COMPACTION_SUMMARY, Turn, last_user_text, side_kind
from fake_anthropic.claude_cli import screen_is_idle
from tests.e2e.test_control import command

SUMMARY = "FAKE SUMMARY"
assert SUMMARY in COMPACTION_SUMMARY


def last_line() -> Turn:
    """Answer with the last line the model was sent (after /compact the summary comes first)."""

    def build(request: dict) -> list[dict]:
        return [{"type": "text", "text": "Got: " + last_user_text(request).splitlines()[-1]}]

    return Turn(build=build)


def ask(rig, prompt: str) -> str:
    """Post ``prompt``, wait for Claude's reply; the whole conversation the model was sent."""
    before = len(rig.api.requests)
    rig.post(prompt)
    rig.wait_bot_message(content_contains=f"Got: {prompt}", timeout=60)
    request = rig.api.wait_requests(before + 1)[before]
    assert last_user_text(request).endswith(prompt)
    idle(rig)
    return json.dumps(request["messages"])


def idle(rig) -> None:
    wait_until(lambda: screen_is_idle(rig.screen()), 30, "Claude Code to be idle")


def conversation_id(rig) -> str:
    path = rig.state_dir / "sessions" / f"{rig.ids['project-a']}.json"
    return json.loads(path.read_text())["session_id"]


def test_compact_clear_keys_new_and_resume(rig) -> None:
    rig.api.script(*[last_line() for _ in range(6)])
    rig.start_bot()
    ask(rig, "remember the word pineapple")

    # /compact: Claude Code summarises (a compaction request), the summary replaces the past.
    assert command(rig, "compact") == "Sent `/compact`."
    wait_until(
        lambda: any(side_kind(r) == "compaction" for r in rig.api.side_requests),
        60,
        "the compaction request",
    )
    idle(rig)
    sent = ask(rig, "after compact")
    assert SUMMARY in sent, sent

    # /clear: the next request carries nothing of the earlier conversation.
    assert command(rig, "clear") == "Sent `/clear`."
    idle(rig)
    sent = ask(rig, "after clear")
    assert SUMMARY not in sent and "pineapple" not in sent and "after compact" not in sent, sent

    # /keys: words are typed, key names pressed: this one sends a prompt.
    assert command(rig, "keys", {"keys": "viakeys Enter"}) == "Sent: 'viakeys' Enter"
    rig.wait_bot_message(content_contains="Got: viakeys", timeout=60)
    idle(rig)

    # /new: a fresh conversation (new id) in a restarted Claude Code.
    before = conversation_id(rig)
    assert command(rig, "new").startswith("Fresh conversation for **project-a**")
    sent = ask(rig, "in the new one")
    assert "viakeys" not in sent and "after clear" not in sent, sent
    fresh = conversation_id(rig)
    assert fresh != before

    # /resume after /stop continues that conversation.
    assert command(rig, "stop") == "Stopped **project-a**."
    assert command(rig, "resume").startswith(f"Resumed conversation `{fresh}`")
    sent = ask(rig, "after resume")
    assert "in the new one" in sent, sent
