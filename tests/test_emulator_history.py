"""The emulator serves a channel's history as Discord does: ``GET /channels/{id}/messages``
with ``after``, ``before``, ``around``, ``limit`` 1–100 (default 50), newest first always; and
discord.py's own ``history()`` pages through it without skipping or repeating a message."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator

import discord
import httpx
import pytest
import yarl

from discord_emulator import Emulator

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(scope="module")
def sent(emu: Emulator) -> list[str]:
    """120 messages in #project-b, oldest first (their ids)."""
    channel = emu.ids["project-b"]
    return [emu.client.post_message(channel, f"m{i}")["id"] for i in range(120)]


def history(emu: Emulator, **query: object) -> httpx.Response:
    url = f"{emu.api_base}/channels/{emu.ids['project-b']}/messages"
    headers = {"Authorization": f"Bot {emu.bot_token}"}
    return httpx.get(url, params={k: str(v) for k, v in query.items()}, headers=headers)


def ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()]


def test_without_an_anchor_the_newest_fifty_newest_first(emu: Emulator, sent: list[str]) -> None:
    assert ids(history(emu)) == sent[-50:][::-1]
    assert ids(history(emu, limit=100)) == sent[-100:][::-1]


def test_after_gives_the_messages_right_after_it_newest_first(
    emu: Emulator, sent: list[str]
) -> None:
    assert ids(history(emu, after=sent[9], limit=5)) == sent[10:15][::-1]
    assert ids(history(emu, after=sent[9])) == sent[10:60][::-1]
    assert ids(history(emu, after=sent[-1])) == []
    assert ids(history(emu, after=0, limit=3)) == sent[:3][::-1]  # the channel's first three


def test_before_gives_the_messages_right_before_it_newest_first(
    emu: Emulator, sent: list[str]
) -> None:
    assert ids(history(emu, before=sent[50], limit=5)) == sent[45:50][::-1]
    assert ids(history(emu, before=sent[2], limit=10)) == sent[:2][::-1]


def test_around_centres_on_the_message(emu: Emulator, sent: list[str]) -> None:
    assert ids(history(emu, around=sent[60], limit=5)) == sent[58:63][::-1]
    assert ids(history(emu, around=sent[0], limit=4)) == sent[:4][::-1]
    assert ids(history(emu, around=sent[-1], limit=3)) == sent[-2:][::-1]


@pytest.mark.parametrize("limit", ["0", "101", "-1", "ten"])
def test_a_limit_outside_one_to_a_hundred_is_refused(emu: Emulator, limit: str) -> None:
    response = history(emu, limit=limit)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == 50035 and "limit" in body["errors"], body


def test_an_anchor_that_is_no_snowflake_is_refused(emu: Emulator) -> None:
    response = history(emu, after="abc")
    assert response.status_code == 400 and "after" in response.json()["errors"]


def test_a_deleted_message_leaves_the_history_an_edited_one_reads_as_it_is_now(
    emu: Emulator,
) -> None:
    channel = emu.ids["project-c"]
    first, gone, edited = (emu.client.post_message(channel, t)["id"] for t in ("a", "b", "c"))
    emu.client.delete_user_message(channel, gone)
    emu.client.edit_user_message(channel, edited, "c, edited")
    url = f"{emu.api_base}/channels/{channel}/messages"
    listed = httpx.get(
        url, params={"after": first}, headers={"Authorization": f"Bot {emu.bot_token}"}
    ).json()
    assert [(m["id"], m["content"]) for m in listed] == [(edited, "c, edited")]
    assert listed[0]["edited_timestamp"]


def test_a_message_can_be_sent_as_if_long_ago(emu: Emulator) -> None:
    msg = emu.client.post_message(emu.ids["project-c"], "old", age_seconds=3600)
    sent_at = dt.datetime.fromisoformat(msg["timestamp"])
    age = dt.datetime.now(dt.UTC) - sent_at
    assert dt.timedelta(minutes=59) < age < dt.timedelta(minutes=61)


def test_discord_py_pages_after_a_message_oldest_first_without_gaps(
    emu: Emulator, sent: list[str]
) -> None:
    """discord.py pages on from each page's first (newest) message: with Discord's order, all
    110 messages after the tenth, once each, in order (three requests of 100, 10)."""
    got = asyncio.run(_history_after(emu, int(sent[9])))
    assert got == sent[10:]


async def _history_after(emu: Emulator, after: int) -> list[str]:
    discord.http.Route.BASE = emu.api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(emu.gateway_url)
    client = discord.Client(intents=discord.Intents.none())
    await client.login(emu.bot_token)
    try:
        channel = await client.fetch_channel(int(emu.ids["project-b"]))
        assert isinstance(channel, discord.TextChannel)
        history = channel.history(after=discord.Object(after), oldest_first=True, limit=None)
        return [str(m.id) async for m in history]
    finally:
        await client.close()
