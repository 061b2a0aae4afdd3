"""Logging in while Discord is unreachable: a real discord.py client against the emulator with
its main port closed (connection refused) or answering 503, then back. The backoff's sleep is
the only thing replaced: it records the delay and brings Discord back after a few attempts."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from itertools import islice

import aiohttp
import discord
import pytest

from bridge.bot import login
from bridge.bot.app import point_discord_py_at
from discord_emulator import Emulator


@pytest.fixture
def discord_at(emu: Emulator):
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    point_discord_py_at(emu.api_base, emu.gateway_url)
    yield emu
    discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved


def test_backoff_doubles_up_to_60_seconds() -> None:
    assert list(islice(login.backoff(), 9)) == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def login_while_down(emu: Emulator, outage: str, down_for: int, token: str | None = None):
    """Log in with Discord down for the first ``down_for`` attempts; returns the delays
    slept and the bot's user."""
    emu.client.set_outage(outage)
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)
        if len(slept) == down_for:
            await asyncio.to_thread(emu.client.set_outage, None)

    async def main() -> str:
        client = discord.Client(intents=discord.Intents.none())
        try:
            await login.login(client, token or emu.bot_token, 1, "second", sleep=sleep)
            return str(client.user.id) if client.user else ""
        finally:
            await client.close()

    return slept, asyncio.run(main())


@pytest.mark.parametrize("outage", ["refuse", "503"])
def test_login_waits_for_discord_one_line_per_attempt(
    discord_at: Emulator, outage: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bridge.bot.login")
    slept, user_id = login_while_down(discord_at, outage, down_for=3)
    assert user_id == discord_at.ids["bot_id"]  # logged in once Discord was back
    assert slept == [1, 2, 4]
    records = [r for r in caplog.records if r.name == "bridge.bot.login"]
    assert [r.levelno for r in records] == [logging.WARNING] * 3 + [logging.INFO]
    assert all(r.exc_info is None for r in records)  # no traceback
    first = records[0].getMessage()
    reason = "Connection refused" if outage == "refuse" else "Discord answered 503"
    assert first.startswith("second: Discord not reachable (") and "attempt 1 failed" in first
    assert reason in first, first
    assert "next in 1 s" in first and "next in 4 s" in records[2].getMessage()
    assert records[3].getMessage() == "second: Discord answered at login attempt 4"


def test_a_rejected_token_is_not_retried_and_names_the_entry(discord_at: Emulator) -> None:
    with pytest.raises(login.TokenRejected) as caught:
        login_while_down(discord_at, "503", down_for=1, token="MTIz.wrong.token")
    assert (caught.value.index, caught.value.name) == (1, "second")
    text = caught.value.explain("/home/u/.discord-bridge/config.json")
    assert "\n" not in text
    assert text.startswith("servers[1] (second): Discord rejected the bot token (401")
    assert "servers[1].discord.botToken in /home/u/.discord-bridge/config.json" in text
    assert "Reset Token" in text
    assert discord_at.client.counters().get("401 GET /users/@me") == 1


def test_describe_names_dns_errors_and_timeouts_in_one_line() -> None:
    key = aiohttp.client_reqrep.ConnectionKey("discord.com", 443, True, True, None, None, None)
    dns = aiohttp.ClientConnectorDNSError(key, OSError(-2, "Name or service not known"))
    assert login.describe(dns) == "cannot resolve discord.com"
    assert isinstance(dns, login.RETRYABLE)
    assert login.describe(TimeoutError()) == "timed out"
    assert isinstance(TimeoutError(), login.RETRYABLE)


def test_reconnect_log_lines_lose_their_traceback(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("discord.client")
    login.quiet_reconnect_tracebacks()
    login.quiet_reconnect_tracebacks()  # once is enough
    assert sum(isinstance(f, login.OneLineReconnects) for f in logger.filters) == 1
    caplog.set_level(logging.ERROR, logger="discord.client")
    try:
        raise ConnectionResetError(104, "Connection reset by peer")
    except OSError:
        logger.exception("Attempting a reconnect in %.2fs", 2.5)
    (record,) = [r for r in caplog.records if r.name == "discord.client"]
    assert record.exc_info is None
    assert record.getMessage() == (
        "Attempting a reconnect in 2.50s (ConnectionResetError: [Errno 104] Connection reset "
        "by peer)"
    )


def test_a_gateway_unreachable_right_after_login_is_connected_again(
    discord_at: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    """REST answered, then the network went: discord.py's first gateway connect fails (it
    cannot retry that one itself); :func:`login.connect` connects again once it is back."""
    emu = discord_at
    login.quiet_reconnect_tracebacks()
    caplog.set_level(logging.WARNING)
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)
        if len(slept) == 2:
            await asyncio.to_thread(emu.client.set_outage, None)

    async def main() -> bool:
        client = discord.Client(intents=discord.Intents.none())
        await login.login(client, emu.bot_token, 0, "main")
        await asyncio.to_thread(emu.client.set_outage, "refuse")
        task = asyncio.create_task(login.connect(client, "main", sleep=sleep))
        try:
            await asyncio.wait_for(client.wait_until_ready(), 60)
            return client.is_ready()
        finally:
            await client.close()
            await asyncio.wait_for(task, 10)

    since = emu.client.mark()
    assert asyncio.run(main())
    assert slept == [1, 2]
    emu.client.wait(since=since, kind="gateway_ready", timeout=1)
    reconnects = [r for r in caplog.records if r.name == "discord.client"]
    assert len(reconnects) == 2 and all(r.exc_info is None for r in reconnects)
    assert "Connection refused" in reconnects[0].getMessage()


def test_a_server_that_never_answers_times_out_and_is_retried(
    discord_at: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    """A network that swallows packets: the TCP connection is accepted (a listening socket
    nobody reads), the login request never gets an answer."""
    emu = discord_at
    caplog.set_level(logging.INFO, logger="bridge.bot.login")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        discord.http.Route.BASE = f"http://127.0.0.1:{silent.getsockname()[1]}/api/v10"
        slept: list[float] = []

        async def sleep(delay: float) -> None:
            slept.append(delay)
            if len(slept) == 2:
                discord.http.Route.BASE = emu.api_base  # the network is back

        async def main() -> str:
            client = discord.Client(intents=discord.Intents.none())
            try:
                await login.login(client, emu.bot_token, 0, "main", sleep=sleep, probe_timeout=0.5)
                return str(client.user.id) if client.user else ""
            finally:
                await client.close()

        started = time.monotonic()
        assert asyncio.run(main()) == emu.ids["bot_id"]
    assert time.monotonic() - started < 10
    assert slept == [1, 2]
    failed = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name == "bridge.bot.login"
    ]
    assert failed == [
        "main: Discord not reachable (timed out); login attempt 1 failed, next in 1 s",
        "main: Discord not reachable (timed out); login attempt 2 failed, next in 2 s",
    ]
