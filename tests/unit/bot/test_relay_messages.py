"""Which Discord messages the relay types into a pane (no tmux: the sessions are faked)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import discord
import pytest

from bridge.bot.prompt_text import defuse_prefix
from bridge.bot.turn.relay import Relay
from bridge.state import runtime

OWNER, CHANNEL = 100000000000000002, 100000000000000003


class FakeSessions:
    def __init__(self) -> None:
        self.typed: list[str] = []

    def target_for(self, channel_id, parent_id=None, name=""):
        project = SimpleNamespace(name="alpha")
        return SimpleNamespace(key=str(channel_id), thread_id=None, label="alpha", project=project)

    async def register_thread(self, target) -> None:
        pass

    def lock(self, key):
        return asyncio.Lock()

    async def ensure_running(self, target) -> str:
        return "%1"

    async def type_prompt(self, key: str, pane_id: str, text: str) -> None:
        self.typed.append(text)

    def touch(self, key: str) -> None:
        pass


def message(content: str, kind: discord.MessageType) -> SimpleNamespace:
    async def add_reaction(emoji: str) -> None:
        pass

    return SimpleNamespace(
        id=1,
        type=kind,
        content=content,
        attachments=[],
        webhook_id=None,
        author=SimpleNamespace(id=OWNER, bot=False, name="owner"),
        channel=SimpleNamespace(id=CHANNEL),
        add_reaction=add_reaction,
    )


def test_system_messages_such_as_thread_created_are_never_typed(tmp_path) -> None:
    sessions = FakeSessions()
    server = SimpleNamespace(grant=lambda user, *_: "owner" if str(user) == str(OWNER) else None)
    cfg = SimpleNamespace(queue_prefix=">>", audit_text=False)
    relay = Relay(cfg, server, sessions, runtime.Runtime(str(tmp_path)), None)
    # Discord posts "<owner> started a thread: <name>" in the parent channel, authored by the
    # owner, with the thread's name as its content: not a prompt for the parent's session.
    created = message("delete the tests", discord.MessageType.thread_created)
    asyncio.run(relay.on_message(created, 9))
    asyncio.run(relay.on_message(message("", discord.MessageType.pins_add), 9))
    assert sessions.typed == []
    asyncio.run(relay.on_message(message("hello", discord.MessageType.default), 9))
    asyncio.run(relay.on_message(message("answer", discord.MessageType.reply), 9))
    assert sessions.typed == ["hello", "answer"]


SPACES = ["", " ", "\u00a0", "\u3000", "\u2003", "\u202f", "\t", "\n", " \u00a0\u3000\u2028 "]


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_a_slash_command_is_defused_behind_any_leading_unicode_space(space: str) -> None:
    """Claude Code trims every Unicode space before looking for a slash command, so the
    message's first character is the one after them: ``\\/model`` reaches the model as text."""
    assert defuse_prefix(space + "/model opus") == "\\/model opus"


@pytest.mark.parametrize("space", SPACES, ids=repr)
@pytest.mark.parametrize("prefix", ["!", "#", "&"])
def test_mode_prefixes_are_defused_behind_any_leading_unicode_space(space, prefix) -> None:
    assert defuse_prefix(f"{space}{prefix}echo hi") == f" {prefix}echo hi"


def test_a_path_and_plain_text_are_left_alone_but_lose_leading_spaces() -> None:
    assert defuse_prefix("\u00a0/etc/hosts is odd") == "/etc/hosts is odd"
    assert defuse_prefix("\u3000hello") == "hello"
