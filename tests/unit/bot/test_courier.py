"""The two senders post alike: the hooks' blocking ``DiscordREST.send_post`` and the bot's
``courier.send_post`` (a real discord.py HTTPClient), each against the Discord emulator over
real HTTP. What to send and what an answer means is decided once (bridge/discord/post.py);
every case here runs through both, and Discord must end up with the same messages."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import discord
import pytest

from bridge.bot import courier
from bridge.bot.app import point_discord_py_at
from bridge.discord.post import DeliveryError, Post, message_payload
from bridge.discord.rest import DiscordREST
from discord_emulator import Emulator

Send = Callable[[str, Post], dict]


@pytest.fixture
def discord_at(emu: Emulator):
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    point_discord_py_at(emu.api_base, emu.gateway_url)
    yield emu
    discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved


def hook_sender(emu: Emulator, token: str | None = None) -> Send:
    def send(channel: str, post: Post) -> dict:
        with DiscordREST(emu.api_base, token or emu.bot_token, budget=2.0) as rest:
            return rest.send_post(channel, post)

    return send


def bot_sender(emu: Emulator, token: str | None = None) -> Send:
    def send(channel: str, post: Post) -> dict:
        async def main() -> dict:
            http = discord.http.HTTPClient(asyncio.get_running_loop())
            await http.static_login(emu.bot_token)
            http.token = token or emu.bot_token  # a token rejected after the login
            try:
                return await courier.send_post(http, channel, post)
            finally:
                await http.close()

        return asyncio.run(main())

    return send


SENDERS = {"hook": hook_sender, "bot": bot_sender}


@pytest.fixture(params=sorted(SENDERS))
def sender(request: pytest.FixtureRequest, discord_at: Emulator) -> Callable[..., Send]:
    return lambda token=None: SENDERS[request.param](discord_at, token)


def stored(emu: Emulator, channel: str) -> list[tuple[str, list[str]]]:
    return [
        (m["content"], [a["filename"] for a in m["attachments"]])
        for m in emu.client.messages(channel)
    ]


def test_text_and_files_are_posted_as_one_message(emu: Emulator, sender) -> None:
    channel = emu.ids["project-a"]
    post = Post(message_payload("two files"), [("a.txt", b"A"), ("b.txt", b"B")])
    message = sender()(channel, post)
    assert message["content"] == "two files"
    assert stored(emu, channel) == [("two files", ["a.txt", "b.txt"])]


def test_a_resend_with_the_same_nonce_returns_the_original(emu: Emulator, sender) -> None:
    channel = emu.ids["project-a"]
    post = Post(message_payload("once"), [("a.txt", b"A")])
    first, again = sender()(channel, post), sender()(channel, post)
    assert first["id"] == again["id"]
    assert stored(emu, channel) == [("once", ["a.txt"])]


def test_files_refused_for_lack_of_attach_files_leave_the_text_and_a_note(
    emu: Emulator, sender
) -> None:
    channel = emu.ids["project-a"]
    emu.client.deny_attach_files(channel)
    message = sender()(channel, Post(message_payload("chart below"), [("chart.png", b"png")]))
    assert message["content"] == "chart below"  # the text is the message the caller gets
    assert stored(emu, channel) == [
        ("chart below", []),
        (
            "⚠️ Not attached: `chart.png` (the bot lacks the **Attach Files** permission in"
            " this channel; 403/50013)",
            [],
        ),
    ]


def test_files_alone_refused_leave_the_note(emu: Emulator, sender) -> None:
    channel = emu.ids["project-a"]
    emu.client.deny_attach_files(channel)
    message = sender()(channel, Post(message_payload(""), [("only.txt", b"x")]))
    assert message["content"].startswith("⚠️ Not attached: `only.txt`")
    assert len(stored(emu, channel)) == 1


def test_files_too_large_for_the_server_leave_the_text_and_a_note(emu: Emulator, sender) -> None:
    channel = emu.ids["project-a"]
    emu.client.settings(max_file_size=1000)
    try:
        sender()(channel, Post(message_payload("report below"), [("big.bin", b"x" * 5000)]))
    finally:
        emu.client.settings(max_file_size=10 * 1024 * 1024)
    (text, note) = stored(emu, channel)
    assert text == ("report below", [])
    assert note[0].startswith("⚠️ Discord refused the attached files `big.bin` (4")


def test_a_deleted_channel_is_refused_for_good(emu: Emulator, sender) -> None:
    with pytest.raises(DeliveryError) as caught:
        sender()("100000000000000003", Post(message_payload("into the void")))
    assert (caught.value.retryable, caught.value.status) == (False, 404)


def test_a_rejected_token_keeps_the_message_for_later(emu: Emulator, sender) -> None:
    channel = emu.ids["project-a"]
    with pytest.raises(DeliveryError) as caught:
        sender("reset.in.the.portal")(channel, Post(message_payload("x")))
    assert (caught.value.retryable, caught.value.status) == (True, 401)
    assert stored(emu, channel) == []


def test_a_runtime_dir_too_long_for_a_socket_address_still_wakes_the_bot(tmp_path) -> None:
    """``sockaddr_un`` holds 108 bytes: a runtime dir under a long HOME (or ``try``'s under a
    deep project) made every hook skip the bot silently (seen: ``try`` under pytest-xdist's
    longer temp paths showed no permission prompt). The hook's wake-up reaches the bot there."""
    from bridge.discord import handoff
    from bridge.state.runtime import Runtime

    deep = tmp_path / ("a-long-home-" * 6) / ("and-a-deeper-state-dir-" * 3)
    rt = Runtime(str(deep / "runtime"), str(deep / "state")).ensure()
    assert len(handoff.socket_path(rt)) > 108
    woken: list[str] = []

    async def main() -> bool:
        socket = courier.WakeSocket(rt, woken.append)
        assert await socket.open()
        try:
            assert handoff.bot_listening(rt)
            sent = await asyncio.to_thread(handoff.wake_bot, rt, "1234")
            for _ in range(200):
                if woken:
                    break
                await asyncio.sleep(0.01)
            return sent
        finally:
            socket.close()

    assert asyncio.run(main()) is True
    assert woken == ["1234"]
    assert not handoff.bot_listening(rt)  # closed: the socket is gone, hooks post themselves
