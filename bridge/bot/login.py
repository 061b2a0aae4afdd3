"""Logging in when Discord cannot be reached yet (started at boot, flaky Wi-Fi, an outage).

discord.py's ``Client.start`` gives up on the first connection error of its login request and
raises with a long aiohttp traceback. :func:`login` retries instead, with capped exponential
backoff (1, 2, 4 … 60 s) on connection and DNS errors, timeouts and 5xx answers, one log line
per attempt, until Discord answers. A rejected token is not retried: it raises
:class:`TokenRejected`, which names the config entry to fix. Once logged in, discord.py's own
gateway reconnect loop takes over (:func:`connect` covers its first connection);
:class:`OneLineReconnects` keeps its log to one line too.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import aiohttp
import discord
from discord.utils import MISSING

log = logging.getLogger(__name__)

FIRST_DELAY = 1.0
MAX_DELAY = 60.0
# discord.py sets no timeout on its login request (aiohttp's default is 5 min), so a network
# that drops packets instead of refusing would stall one attempt that long. 30 s leaves room
# for discord.py's own retries of a 502 (1 + 3 + 5 + 7 s).
PROBE_TIMEOUT = 30.0
# What "Discord is not there yet" looks like: refused or reset connections and DNS failures
# (OSError, aiohttp.ClientConnectorError), timeouts, and Discord's own 5xx answers.
RETRYABLE = (OSError, aiohttp.ClientError, asyncio.TimeoutError, discord.DiscordServerError)


# discord.py raises this at connect when the Message Content Intent is off in the Developer
# Portal; `run` says which switch to turn on. Named here so that only bot/ imports discord.py.
PrivilegedIntentsRequired = discord.PrivilegedIntentsRequired


class TokenRejected(Exception):
    """Discord answered 401 to the login: the server entry's ``botToken`` is wrong."""

    def __init__(self, index: int, name: str) -> None:
        self.index = index
        self.name = name
        super().__init__(f"servers[{index}] ({name}): Discord rejected the bot token")

    def explain(self, config_file: str = "") -> str:
        """One line: which entry, and the fix."""
        where = f" in {config_file}" if config_file else ""
        return (
            f"servers[{self.index}] ({self.name}): Discord rejected the bot token (401 "
            f"Unauthorized); put the bot's current token in servers[{self.index}].discord."
            f"botToken{where} (Developer Portal → your application → Bot → Reset Token), then "
            "start again"
        )


def backoff(first: float = FIRST_DELAY, cap: float = MAX_DELAY) -> Iterator[float]:
    """1, 2, 4, 8 … seconds, never more than ``cap``."""
    delay = first
    while True:
        yield delay
        delay = min(cap, delay * 2)


def describe(err: BaseException) -> str:
    """One line for a network failure (no traceback)."""
    if isinstance(err, discord.DiscordServerError):
        return f"Discord answered {err.status}"
    if isinstance(err, aiohttp.ClientConnectorDNSError):
        return f"cannot resolve {err.host}"
    if isinstance(err, aiohttp.ClientConnectorError):
        code = err.os_error.errno
        reason = os.strerror(code) if code else (err.os_error.strerror or "failed")
        return f"cannot connect to {err.host}:{err.port}: {reason}"
    if isinstance(err, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return "timed out"
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


async def login(
    bot: discord.Client,
    token: str,
    index: int,
    name: str,
    delays: Iterator[float] | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    probe_timeout: float = PROBE_TIMEOUT,
) -> None:
    """``bot.login(token)``, retried until Discord answers; :class:`TokenRejected` on a 401.

    Only the login request itself is retried: once ``setup_hook`` has started (it runs at
    the end of ``login``), an error is the bot's own and is raised as it is.
    """
    attempt = 0
    for delay in delays or backoff():
        attempt += 1
        try:
            await _probe(bot, token, probe_timeout)
            await bot.login(token)
        except discord.LoginFailure as err:
            raise TokenRejected(index, name) from err
        except RETRYABLE as err:
            if getattr(bot, "setup_started", False):
                raise
            log.warning(
                "%s: Discord not reachable (%s); login attempt %d failed, next in %g s",
                name,
                describe(err),
                attempt,
                delay,
            )
            await _reset_http(bot)
            await sleep(delay)
            continue
        if attempt > 1:
            log.info("%s: Discord answered at login attempt %d", name, attempt)
        return


async def connect(
    bot: discord.Client,
    name: str,
    delays: Iterator[float] | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> None:
    """``bot.connect(reconnect=True)``, surviving a gateway that cannot be reached at first.

    discord.py retries a failed gateway connection itself (one log line each, see
    :class:`OneLineReconnects`), except the very first one after login: with no websocket yet
    it fails with ``AttributeError`` ('NoneType' object has no attribute 'sequence', seen
    with discord.py 2.7). Then connect again, after a capped backoff of our own.
    """
    for delay in delays or backoff():
        try:
            await bot.connect(reconnect=True)
            return
        except AttributeError:
            if bot.ws is not None or bot.is_closed():
                raise
            log.debug("%s: gateway not reached yet; connecting again in %g s", name, delay)
            await sleep(delay)


async def _probe(bot: discord.Client, token: str, timeout: float) -> None:
    """discord.py's login request (``GET /users/@me``) within ``timeout`` seconds."""
    try:
        await asyncio.wait_for(bot.http.static_login(token), timeout)
    finally:
        await _reset_http(bot)  # login() opens its own session


async def _reset_http(bot: discord.Client) -> None:
    """Close the HTTP session of the failed attempt (the next ``login`` opens a new one)."""
    try:
        await bot.http.close()
    except Exception:
        pass
    bot.http.connector = MISSING  # closed with the session; static_login makes a new one


class OneLineReconnects(logging.Filter):
    """discord.py logs each gateway reconnect with a full traceback; keep the one line and the
    reason (the network being away is expected, not a crash)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and str(record.msg).startswith("Attempting a reconnect"):
            record.msg = f"{record.getMessage()} ({describe(error)})"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


def quiet_reconnect_tracebacks() -> None:
    logger = logging.getLogger("discord.client")
    if not any(isinstance(f, OneLineReconnects) for f in logger.filters):
        logger.addFilter(OneLineReconnects())
