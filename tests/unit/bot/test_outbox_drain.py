"""The bot's drain on its event loop: a real OutboxDrainer, a real runtime directory, a real
discord.py HTTPClient posting to the Discord emulator. The outbox decides (order, exactly once,
what to set aside: tests/unit/discord/test_outbox.py); this holds that the bot's loop posts
what it decides, reads large files off the loop, and stops between two posts."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

import discord
import pytest

from bridge import config
from bridge.bot.app import point_discord_py_at
from bridge.bot.delivery.outbox_drain import OutboxDrainer
from bridge.discord import handoff
from bridge.discord.outbox import Outbox
from bridge.discord.post import Post, message_payload
from bridge.state.runtime import Runtime
from bridge_testkit import wait_until
from discord_emulator import Emulator


@pytest.fixture
def discord_at(emu: Emulator):
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    point_discord_py_at(emu.api_base, emu.gateway_url)
    yield emu
    discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved


@pytest.fixture
def rt(tmp_path: Path) -> Runtime:
    return Runtime(str(tmp_path / "runtime"), str(tmp_path / "state")).ensure()


@pytest.fixture
def cfg(emu: Emulator, tmp_path: Path) -> config.BridgeConfig:
    server = {
        "name": "main",
        "discord": {
            "botToken": emu.bot_token,
            "ownerUserId": emu.ids["alice"],
            "apiBaseUrl": emu.api_base,
        },
        "projects": [
            {"name": "project-a", "channelId": emu.ids["project-a"], "projectPath": str(tmp_path)}
        ],
    }
    return config.BridgeConfig({"schemaVersion": 2, "servers": [server]}, env={})


WarmHTTP = Callable[[str], "discord.http.HTTPClient | None"]


async def logged_in(emu: Emulator) -> discord.http.HTTPClient:
    http = discord.http.HTTPClient(asyncio.get_running_loop())
    await http.static_login(emu.bot_token)
    return http


def drain(cfg: config.BridgeConfig, rt: Runtime, emu: Emulator, warm: bool = True) -> tuple:
    """One pass of the bot's drain over the project's channel; what it returned and the
    threads its reads of staged files ran in."""
    channel = emu.ids["project-a"]
    threads: list[tuple[bool, bool]] = []  # (entry has files, read on the loop's thread)

    async def main() -> bool:
        http = await logged_in(emu)
        drainer = OutboxDrainer(cfg, rt, warm_http=lambda _name: http if warm else None)
        loop_thread = threading.get_ident()
        post_of = drainer.outbox.post_of

        def recording_post_of(path: str, entry: dict) -> Post:
            threads.append((bool(entry["files"]), threading.get_ident() == loop_thread))
            return post_of(path, entry)

        drainer.outbox.post_of = recording_post_of  # type: ignore[method-assign]
        try:
            return await drainer.drain_channel(channel)
        finally:
            await http.close()

    return asyncio.run(main()), threads


def messages(emu: Emulator) -> list[tuple[str, list[str]]]:
    return [
        (m["content"], [a["filename"] for a in m["attachments"]])
        for m in emu.client.messages(emu.ids["project-a"])
    ]


def test_the_bot_posts_in_order_and_sets_aside_what_cannot_go(
    discord_at: Emulator, cfg: config.BridgeConfig, rt: Runtime
) -> None:
    emu, channel = discord_at, discord_at.ids["project-a"]
    outbox = Outbox(rt.outbox)
    outbox.enqueue(channel, "main", Post(message_payload("first")))
    outbox.enqueue(channel, "main", Post(message_payload("with a file"), [("a.txt", b"A")]))
    outbox.enqueue(channel, "main", Post(message_payload("x" * 2001)))  # refused for good
    gone = outbox.enqueue(channel, "main", Post(message_payload("lost file"), [("b.txt", b"B")]))
    os.unlink(gone[: -len(".json")] + ".files/0")  # its staged file cannot be read
    prompt = Post(message_payload("a prompt"))
    outbox.enqueue(channel, "main", prompt, receipt=True)
    outbox.enqueue(channel, "main", Post(message_payload("last")))

    done, threads = drain(cfg, rt, emu)

    assert done is True
    assert messages(emu) == [
        ("first", []),
        ("with a file", ["a.txt"]),
        ("a prompt", []),
        ("last", []),
    ]
    assert outbox.pending(channel) == []
    failed = sorted(p for p in os.listdir(os.path.dirname(gone)) if p.endswith(".failed"))
    assert len(failed) == 2
    outbox_log = Path(rt.state_root, "logs", "outbox.log").read_text()
    assert "unreadable entry" in outbox_log and "400" in outbox_log
    receipt = handoff.read_receipt(rt, prompt.payload["nonce"])
    assert receipt is not None and receipt["id"] == emu.client.messages(channel)[2]["id"]
    # Staged files (up to 64 MiB each) are read in a thread; an entry without files on the loop.
    assert sorted(set(threads)) == [(False, True), (True, False)]


def test_before_the_login_the_bot_posts_with_the_blocking_client(
    discord_at: Emulator, cfg: config.BridgeConfig, rt: Runtime
) -> None:
    emu, channel = discord_at, discord_at.ids["project-a"]
    outbox = Outbox(rt.outbox)
    for content in ("one", "two"):
        outbox.enqueue(channel, "main", Post(message_payload(content)))
    done, _ = drain(cfg, rt, emu, warm=False)
    assert done is True
    assert messages(emu) == [("one", []), ("two", [])]
    assert outbox.pending(channel) == []


def test_a_stop_ends_the_drain_between_two_posts_and_the_rest_goes_out_once_later(
    discord_at: Emulator, cfg: config.BridgeConfig, rt: Runtime
) -> None:
    emu, channel = discord_at, discord_at.ids["project-a"]
    outbox = Outbox(rt.outbox)
    contents = [f"backlog {n}" for n in range(5)]
    for content in contents:
        outbox.enqueue(channel, "main", Post(message_payload(content)))

    async def run_bot(stop_at_first_post: bool) -> None:
        """The drainer as the bot runs it; the stop comes as the first post goes out (the
        warm session is looked up for each post), or once everything is at Discord."""
        http = await logged_in(emu)
        stop = asyncio.Event()

        def warm(_name: str) -> discord.http.HTTPClient:
            if stop_at_first_post:
                stop.set()
            return http

        task = asyncio.create_task(OutboxDrainer(cfg, rt, warm_http=warm).run(stop))
        if not stop_at_first_post:
            await asyncio.to_thread(
                wait_until, lambda: len(messages(emu)) >= len(contents), 10, "the rest"
            )
            stop.set()
        await stop.wait()
        task.cancel()  # as run_bridge does once the bots are closed
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await http.close()

    asyncio.run(run_bot(stop_at_first_post=True))
    assert messages(emu) == [(contents[0], [])]
    assert len(outbox.pending(channel)) == len(contents) - 1
    asyncio.run(run_bot(stop_at_first_post=False))
    assert messages(emu) == [(content, []) for content in contents]
    assert outbox.pending(channel) == []
