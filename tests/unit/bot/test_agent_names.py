"""What the bot says about a session names its agent (``Agent.label``): a Codex session's
notices say "Codex", not "Claude Code" (no tmux: the sessions are faked)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import discord

from bridge.agents import agent_for
from bridge.bot.turn.relay import Relay
from bridge.bot.turn.stalls import StallWatch
from bridge.state import runtime

OWNER, CHANNEL = 100000000000000002, 100000000000000003


class CodexSessions:
    """A channel whose session runs Codex; typing into it fails."""

    def target_for(self, channel_id, parent_id=None, name=""):
        project = SimpleNamespace(name="alpha")
        return SimpleNamespace(key=str(channel_id), thread_id=None, label="alpha", project=project)

    async def register_thread(self, target) -> None:
        pass

    def agent_of(self, key: str):
        return agent_for("codex")

    def lock(self, key):
        return asyncio.Lock()

    async def ensure_running(self, target) -> str:
        return "%1"

    async def type_prompt(self, key: str, pane_id: str, text: str) -> None:
        raise RuntimeError("the pane went away")


def test_a_message_not_delivered_to_a_codex_session_says_codex() -> None:
    replies: list[str] = []

    async def reply(text: str, **_: object) -> None:
        replies.append(text)

    sent = SimpleNamespace(
        id=1,
        type=discord.MessageType.default,
        content="hello",
        attachments=[],
        webhook_id=None,
        author=SimpleNamespace(id=OWNER, bot=False, name="owner"),
        channel=SimpleNamespace(id=CHANNEL),
        reply=reply,
    )
    server = SimpleNamespace(grant=lambda user, *_: "owner" if str(user) == str(OWNER) else None)
    cfg = SimpleNamespace(queue_prefix=">>", audit_text=False)
    relay = Relay(cfg, server, CodexSessions(), runtime.Runtime("/nonexistent"), None)
    asyncio.run(relay.on_message(sent, 9))
    assert replies == ["⚠️ Not delivered to Codex: the pane went away"]


def test_a_codex_session_that_died_mid_turn_is_said_as_codex(tmp_path) -> None:
    posted: list[str] = []

    async def send(content: str, **_: object) -> None:
        posted.append(content)

    bot = SimpleNamespace(get_partial_messageable=lambda _id: SimpleNamespace(send=send))

    async def died() -> None:
        watch = StallWatch(bot, CodexSessions(), runtime.Runtime(str(tmp_path)), None, 10)
        await watch.session_died(str(CHANNEL))

    asyncio.run(died())
    assert posted == [
        "💀 **Codex exited** in this session during a turn; nothing is running here now."
    ]
