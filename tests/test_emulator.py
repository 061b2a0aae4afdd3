"""End-to-end tests of the Discord emulator with a real, unmodified discord.py client."""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import discord
import httpx
import pytest
import yarl
from discord import app_commands

from discord_emulator import Emulator

pytestmark = pytest.mark.timeout(30)
MESSAGES = "POST /channels/{channel_id}/messages"


class ApproveView(discord.ui.View):
    """A persistent view: matched by custom_id only, so it survives restarts."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Approve", custom_id="perm:approve")
    async def approve(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await interaction.response.edit_message(content="approved", view=None)

    @discord.ui.button(label="Answer", custom_id="perm:answer")
    async def answer(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await interaction.response.send_modal(AnswerModal())

    @discord.ui.select(
        custom_id="perm:pick",
        options=[discord.SelectOption(label="a"), discord.SelectOption(label="b")],
    )
    async def pick(self, interaction: discord.Interaction, select: discord.ui.Select) -> None:
        await interaction.response.send_message(f"picked {select.values[0]}")


class ConfirmView(discord.ui.View):
    """A non-persistent view: discord.py binds it to the message id from the REST response."""

    @discord.ui.button(label="Yes")
    async def yes(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await interaction.response.defer()


class AnswerModal(discord.ui.Modal, title="Your answer"):
    text = discord.ui.TextInput(label="Answer", custom_id="answer-text")

    def __init__(self) -> None:
        super().__init__(custom_id="answer-modal")

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"got {self.text.value}", ephemeral=True)


class Bot(discord.Client):
    def __init__(self, guild_id: int) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(intents=intents, guild_ready_timeout=0.1)
        self.tree = app_commands.CommandTree(self)
        self.guild_obj = discord.Object(guild_id)
        self.ready = threading.Event()
        self.raw_reactions: list[discord.RawReactionActionEvent] = []

        @self.tree.command(name="echo", description="Echo text")
        async def echo(interaction: discord.Interaction, text: str) -> None:
            await interaction.response.send_message(f"echo: {text}")

        @self.tree.command(name="think", description="Defer, then follow up")
        async def think(interaction: discord.Interaction) -> None:
            await interaction.response.defer(thinking=True)
            await interaction.followup.send("done thinking")

        @self.tree.command(name="slow", description="Too slow to ack")
        async def slow(interaction: discord.Interaction) -> None:
            await asyncio.sleep(0.3)
            await interaction.response.send_message("late")

    async def setup_hook(self) -> None:
        self.add_view(ApproveView())
        self.tree.copy_global_to(guild=self.guild_obj)
        await self.tree.sync(guild=self.guild_obj)

    async def on_ready(self) -> None:
        self.ready.set()

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        self.raw_reactions.append(payload)

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        self.raw_reactions.append(payload)

    async def on_message(self, message: discord.Message) -> None:
        if message.author == self.user:
            return
        if message.content == "!ping":
            await message.reply("pong", mention_author=False)
        elif message.content == "!file":
            await message.channel.send(
                file=discord.File(io.BytesIO(b"hello bytes"), filename="out.txt")
            )
        elif message.content == "!react":
            await message.add_reaction("👍")
        elif message.content == "!thread":
            thread = await message.create_thread(name="work")
            await thread.send("in thread")
        elif message.content == "!confirm":
            await message.channel.send("sure?", view=ConfirmView())
        elif message.content == "!buttons":
            await message.channel.send("choose", view=ApproveView())


def point_discord_at(emu: Emulator) -> None:
    """The two-attribute patch from the reference, applied before client.start()."""
    discord.http.Route.BASE = emu.api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(emu.gateway_url)


class BotRunner:
    """Runs a discord.py client on its own loop in a thread, like a separate process would."""

    def __init__(self, emu: Emulator, token: str | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.bot: Bot | None = None
        self.error: list[BaseException] = []
        self.token = token or emu.bot_token
        self.thread = threading.Thread(target=self._run, args=(emu,), daemon=True)

    def _run(self, emu: Emulator) -> None:
        asyncio.set_event_loop(self.loop)
        self.bot = Bot(int(emu.ids["guild_id"]))
        try:
            self.loop.run_until_complete(self._main(self.bot, self.token))
        except BaseException as exc:
            self.error.append(exc)
        finally:
            self.loop.close()

    @staticmethod
    async def _main(bot: Bot, token: str) -> None:
        # `async with` awaits close() inside this loop, so nothing is left pending.
        async with bot:
            await bot.start(token)

    def start(self, timeout: float = 5.0) -> Bot:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.error:
                raise self.error[0]
            if self.bot is not None and self.bot.ready.wait(0.01):
                return self.bot
            time.sleep(0.01)
        raise TimeoutError("bot never became ready")

    def stop(self) -> None:
        if self.bot is not None and not self.loop.is_closed():
            asyncio.run_coroutine_threadsafe(self.bot.close(), self.loop)
        self.thread.join(5)
        assert not self.thread.is_alive(), "bot thread did not stop"


@pytest.fixture
def emu() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


@pytest.fixture
def bot(emu: Emulator) -> Iterator[Bot]:
    point_discord_at(emu)
    runner = BotRunner(emu)
    yield runner.start()
    runner.stop()


def _send_as_bot(
    emu: Emulator, body: dict[str, Any] | None = None, token: str | None = None, **kwargs: Any
) -> httpx.Response:
    url = f"{emu.api_base}/channels/{emu.ids['general']}/messages"
    headers = {"Authorization": f"Bot {token or emu.bot_token}"}
    return httpx.post(url, json=body, headers=headers, timeout=5, **kwargs)


# ----- discord.py end to end -------------------------------------------------------------


def test_login_and_ready(emu: Emulator, bot: Bot) -> None:
    assert bot.user is not None and str(bot.user.id) == emu.ids["bot_id"]
    guild = bot.get_guild(int(emu.ids["guild_id"]))
    assert guild is not None and guild.member_count == 5  # three users, two bots
    assert {c.name for c in guild.text_channels} >= {"general", "project-a"}
    kinds = [r["kind"] for r in emu.client.records()]
    assert "gateway_ready" in kinds and "commands_update" in kinds


def test_message_reply(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    sent = c.post_message(emu.ids["general"], "!ping")
    rec = c.wait(since=since, channel_id=emu.ids["general"], reply_to=sent["id"])
    assert rec["message"]["content"] == "pong"
    assert rec["source"] == "rest"
    assert rec["message"]["author"]["id"] == emu.ids["bot_id"]


def test_file_upload(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    c.post_message(emu.ids["general"], "!file")
    rec = c.wait(since=since, has_files=True)
    att = rec["message"]["attachments"][0]
    assert att["filename"] == "out.txt" and att["size"] == len(b"hello bytes")
    assert c.file_bytes(att) == b"hello bytes"


def test_reaction(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    sent = c.post_message(emu.ids["general"], "!react")
    rec = c.wait(since=since, kind="reaction_add", message_id=sent["id"])
    assert rec["emoji"] == "👍"
    assert c.reactions(emu.ids["general"], sent["id"]) == ["👍"]


def test_a_users_reaction_reaches_discord_py_as_discord_sends_it(emu: Emulator, bot: Bot) -> None:
    """MESSAGE_REACTION_ADD carries who reacted (their member) and whose message it is; a
    second identical reaction changes nothing and sends nothing; the removal only ids."""
    c = emu.client
    since = c.mark()
    posted = c.post_message(emu.ids["general"], "!ping")
    reply = c.wait(since=since, reply_to=posted["id"])["message"]
    assert c.react(reply["channel_id"], reply["id"], "✅", user="bob") is True
    assert c.react(reply["channel_id"], reply["id"], "✅", user="bob") is False
    c.wait(since=since, kind="reaction_add", message_id=reply["id"])
    deadline = time.monotonic() + 5
    while not bot.raw_reactions:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    (added,) = bot.raw_reactions
    assert added.event_type == "REACTION_ADD" and str(added.emoji) == "✅"
    assert added.user_id == int(emu.ids["bob"]) and added.message_id == int(reply["id"])
    assert added.member is not None and added.member.id == int(emu.ids["bob"])
    assert added.message_author_id == int(emu.ids["bot_id"])
    assert c.reaction_users(reply["channel_id"], reply["id"]) == {"✅": [emu.ids["bob"]]}
    assert c.reactions(reply["channel_id"], reply["id"]) == []  # no bot reacted
    assert c.react(reply["channel_id"], reply["id"], "✅", user="bob", remove=True) is True
    while len(bot.raw_reactions) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert bot.raw_reactions[1].event_type == "REACTION_REMOVE"
    assert c.reaction_users(reply["channel_id"], reply["id"]) == {}


def test_forced_429_is_retried_by_discord_py(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    c.reset_counters()
    c.force_429(MESSAGES, count=1, retry_after=0.1)
    since = c.mark()
    c.post_message(emu.ids["general"], "!ping")
    assert c.wait(since=since, content_contains="pong")["message"]["content"] == "pong"
    counts = c.counters()
    assert counts[f"429 {MESSAGES}"] == 1 and counts[MESSAGES] == 2


def test_button_click_reaches_persistent_view(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    c.post_message(emu.ids["general"], "!buttons")
    msg = c.wait(since=since, content_contains="choose")["message"]
    result = c.click(msg["id"], "perm:approve")
    assert result["response_type"] == 7
    assert result["original_message"]["content"] == "approved"
    assert result["original_message"]["components"] == []


def test_click_right_after_send_reaches_message_bound_view(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    for _ in range(3):  # repeated to catch the click-before-registration race (pitfall 12)
        since = c.mark()
        c.post_message(emu.ids["general"], "!confirm")
        msg = c.wait(since=since, content="sure?")["message"]
        custom_id = msg["components"][0]["components"][0]["custom_id"]
        assert c.click(msg["id"], custom_id)["response_type"] == 6


def test_thread_from_message(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    sent = c.post_message(emu.ids["general"], "!thread")
    created = c.wait(since=since, kind="thread_create")
    assert created["thread_id"] == sent["id"]
    assert c.wait(since=since, channel_id=sent["id"])["message"]["content"] == "in thread"


def test_select(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    c.post_message(emu.ids["general"], "!buttons")
    msg = c.wait(since=since, content_contains="choose")["message"]
    result = c.select(msg["id"], "perm:pick", ["b"])
    assert result["response_type"] == 4 and result["message"]["content"] == "picked b"


def test_a_select_is_picked_only_among_the_options_it_shows(emu: Emulator, bot: Bot) -> None:
    """As in Discord's client: a value the select does not show (another page's, say) cannot
    be picked, nor more values than it takes; a crafted client's pick still reaches the bot."""
    c = emu.client
    since = c.mark()
    c.post_message(emu.ids["general"], "!buttons")
    msg = c.wait(since=since, content_contains="choose")["message"]
    for values in (["c"], ["a", "b"], []):
        with pytest.raises(RuntimeError, match="-> 400: the select 'perm:pick'"):
            c.select(msg["id"], "perm:pick", values)
    crafted = c.select(msg["id"], "perm:pick", ["c"], crafted=True)
    assert crafted["message"]["content"] == "picked c"


def test_modal_opened_and_submitted(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    c.post_message(emu.ids["general"], "!buttons")
    msg = c.wait(since=since, content_contains="choose")["message"]
    opened = c.click(msg["id"], "perm:answer")
    assert opened["response_type"] == 9
    assert opened["modal"]["title"] == "Your answer"
    since = c.mark()
    submitted = c.submit_modal(opened, {"answer-text": "forty-two"})
    assert submitted["response_type"] == 4 and submitted["ephemeral"] is True
    assert submitted["message"]["content"] == "got forty-two"
    # Ephemeral answers are recorded but never dispatched to the gateway.
    assert c.wait(since=since, source="interaction")["message"]["flags"] & 64


def test_slash_command(emu: Emulator, bot: Bot) -> None:
    result = emu.client.run_command(emu.ids["general"], "echo", {"text": "hi"})
    assert result["response_type"] == 4
    assert result["message"]["content"] == "echo: hi"


def test_threads_dispatch_events(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    thread = c.create_thread(emu.ids["project-a"], "work")
    since = c.mark()
    c.archive_thread(thread["id"])
    assert c.wait(since=since, kind="thread_update")["thread"]["thread_metadata"]["archived"]
    c.delete_thread(thread["id"])
    assert c.wait(since=since, kind="thread_delete")["thread_id"] == thread["id"]


def test_resume_replays_missed_events(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    assert c.gateway_reconnect() == 1
    c.wait(since=since, kind="gateway_resumed")
    c.post_message(emu.ids["general"], "!ping")
    assert c.wait(since=since, content_contains="pong")


def test_defer_then_followup_edits_thinking_message(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    result = c.run_command(emu.ids["general"], "think")
    assert result["response_type"] == 5 and result["message"]["flags"] & 128
    rec = c.wait(since=since, kind="message_update", source="followup")
    assert rec["message"]["id"] == result["message"]["id"]
    assert rec["message"]["content"] == "done thinking"
    assert not rec["message"]["flags"] & 128


def test_second_callback_is_40060(emu: Emulator, bot: Bot) -> None:
    result = emu.client.run_command(emu.ids["general"], "echo", {"text": "x"})
    url = f"{emu.api_base}/interactions/{result['interaction_id']}/{result['token']}/callback"
    again = httpx.post(url, json={"type": 6})  # no Authorization: the token is the credential
    assert again.status_code == 400 and again.json()["code"] == 40060


def test_late_ack_expires(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    c.settings(interaction_deadline=0.1)
    result = c.run_command(emu.ids["general"], "slow")
    assert result["expired"] is True and result["response_type"] is None
    since = c.mark()
    assert c.wait(since=0, kind="interaction_expired")
    with pytest.raises(TimeoutError):
        c.wait(since=since, content="late", timeout=0.5)


def test_resume_after_forced_close_replays(emu: Emulator, bot: Bot) -> None:
    c = emu.client
    since = c.mark()
    c.gateway_close(4000)
    c.wait(since=since, kind="gateway_resumed")
    c.post_message(emu.ids["general"], "!ping")
    assert c.wait(since=since, content="pong")


# ----- raw gateway -------------------------------------------------------------------------


async def _identify(emu: Emulator, token: str, intents: int) -> tuple[Any, list[dict]]:
    """Connect, IDENTIFY, and return the socket with the frames up to GUILD_CREATE."""
    session = aiohttp.ClientSession()
    _sessions[0:0] = [session]
    ws = await session.ws_connect(emu.gateway_url + "?v=10&encoding=json")
    frames = [await ws.receive_json()]
    await ws.send_json({"op": 2, "d": {"token": token, "intents": intents, "properties": {}}})
    while True:
        msg = await ws.receive(timeout=2)
        if msg.type != aiohttp.WSMsgType.TEXT:
            break
        frames.append(json.loads(msg.data))
        if frames[-1].get("t") == "GUILD_CREATE":
            break
    return ws, frames


_sessions: list[aiohttp.ClientSession] = []


async def _close(ws: Any) -> None:
    await ws.close()
    while _sessions:
        await _sessions.pop().close()


def test_gateway_bad_token_closes_4004(emu: Emulator) -> None:
    async def run() -> int | None:
        ws, _ = await _identify(emu, "bad", 513)
        code = ws.close_code
        await _close(ws)
        return code

    assert asyncio.run(run()) == 4004


def test_gateway_disallowed_intent_closes_4014(emu: Emulator) -> None:
    emu.client.settings(privileged_intents=0)

    async def run() -> int | None:
        ws, _ = await _identify(emu, emu.bot_token, 1 << 15)
        code = ws.close_code
        await _close(ws)
        return code

    assert asyncio.run(run()) == 4014


def test_reset_gives_the_next_test_the_portals_switches_back(emu: Emulator) -> None:
    """A test that turned the intents off leaves the shared emulator as it was made: the next
    test's bot logs in (seen failing: every bot after test_cli's intent test got 4014)."""
    emu.client.settings(privileged_intents=0)
    emu.client.reset()

    async def run() -> tuple[int | None, list[str]]:
        ws, frames = await _identify(emu, emu.bot_token, 1 << 15)
        code = ws.close_code
        await _close(ws)
        return code, [frame.get("t") for frame in frames]

    code, events = asyncio.run(run())
    assert code is None and "READY" in events, (code, events)


def test_gateway_ready_and_content_blanking(emu: Emulator) -> None:
    guilds, guild_messages = 1 << 0, 1 << 9

    async def run() -> tuple[list[dict], dict]:
        ws, frames = await _identify(emu, emu.bot_token, guilds | guild_messages)
        await asyncio.to_thread(emu.client.post_message, emu.ids["general"], "secret")
        event = await ws.receive_json(timeout=2)
        await _close(ws)
        return frames, event

    frames, event = asyncio.run(run())
    hello, ready, guild = frames
    assert hello["op"] == 10 and ready["d"]["resume_gateway_url"].startswith("ws://")
    assert guild["d"]["member_count"] == len(guild["d"]["members"])
    assert event["t"] == "MESSAGE_CREATE" and event["d"]["content"] == ""


# ----- raw HTTP (the hook scripts' view) ---------------------------------------------------


def test_bad_token_is_401(emu: Emulator) -> None:
    resp = _send_as_bot(emu, {"content": "x"}, token="nope")
    assert resp.status_code == 401
    assert resp.json() == {"message": "401: Unauthorized", "code": 0}
    assert resp.headers["content-type"] == "application/json"


def test_content_too_long(emu: Emulator) -> None:
    resp = _send_as_bot(emu, {"content": "x" * 2001})
    body = resp.json()
    assert resp.status_code == 400 and body["code"] == 50035
    assert body["errors"]["content"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"
    assert _send_as_bot(emu, {"content": ""}).json()["code"] == 50006


def test_too_many_rows_and_duplicate_custom_ids(emu: Emulator) -> None:
    row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "a", "custom_id": "x"}]}
    body = _send_as_bot(emu, {"content": "c", "components": [row] * 6}).json()
    assert body["code"] == 50035
    assert "COMPONENT_CUSTOM_ID_DUPLICATED" in str(body["errors"])
    assert body["errors"]["components"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"


def test_unknown_channel_and_message(emu: Emulator) -> None:
    headers = {"Authorization": f"Bot {emu.bot_token}"}
    bad_channel = httpx.post(
        f"{emu.api_base}/channels/1/messages", json={"content": "x"}, headers=headers
    )
    assert bad_channel.status_code == 404 and bad_channel.json()["code"] == 10003
    url = f"{emu.api_base}/channels/{emu.ids['general']}/messages/1"
    assert httpx.get(url, headers=headers).json()["code"] == 10008


def test_nonce_deduplicates(emu: Emulator) -> None:
    body = {
        "content": "once",
        "nonce": "outbox-1",
        "enforce_nonce": True,
        "allowed_mentions": {"parse": []},
    }
    first, second = _send_as_bot(emu, body), _send_as_bot(emu, body)
    assert first.status_code == second.status_code == 200
    assert first.json()["id"] == second.json()["id"]
    assert len(emu.client.messages(emu.ids["general"])) == 1
    rec = emu.client.wait(since=0, content="once")
    assert rec["allowed_mentions"] == {"parse": []}


def test_multipart_upload_and_size_limit() -> None:
    with Emulator(max_file_size=16) as emu:
        data = {"payload_json": '{"content": "f", "attachments": [{"id": 0, "filename": "a.bin"}]}'}
        ok = _send_as_bot(emu, None, data=data, files={"files[0]": ("a.bin", b"0123456789")})
        att = ok.json()["attachments"][0]
        assert emu.client.file_bytes(att["url"]) == b"0123456789"
        big = _send_as_bot(emu, None, data=data, files={"files[0]": ("a.bin", b"x" * 17)})
        assert big.status_code == 413 and big.json()["code"] == 40005


def test_counting_bucket(emu: Emulator) -> None:
    emu.client.set_bucket(MESSAGES, limit=2, window=5)
    remaining = [
        _send_as_bot(emu, {"content": "b"}).headers["X-RateLimit-Remaining"] for _ in range(2)
    ]
    assert remaining == ["1", "0"]
    limited = _send_as_bot(emu, {"content": "b"})
    assert limited.status_code == 429 and limited.headers["Via"]
    assert limited.json()["retry_after"] > 0 and limited.json()["global"] is False


def test_discord_rate_limits_when_enabled() -> None:
    """Opt-in: a message-create bucket per channel (5 per 5 s) and the global limit of 50
    requests/s per bot token, with X-RateLimit-* headers on every response."""
    with Emulator(rate_limits=True) as emu, httpx.Client(timeout=5) as http:
        auth = {"Authorization": f"Bot {emu.bot_token}"}

        def post(channel: str) -> httpx.Response:
            url = f"{emu.api_base}/channels/{emu.ids[channel]}/messages"
            return http.post(url, json={"content": "r"}, headers=auth)

        sent = [post("general") for _ in range(5)]
        assert [r.headers["X-RateLimit-Remaining"] for r in sent] == ["4", "3", "2", "1", "0"]
        assert all(r.headers["X-RateLimit-Limit"] == "5" for r in sent)
        limited = post("general")
        assert limited.status_code == 429 and limited.headers["X-RateLimit-Scope"] == "user"
        assert "X-RateLimit-Global" not in limited.headers
        assert 4 < limited.json()["retry_after"] <= 5
        assert post("project-a").status_code == 200  # another channel, another bucket
        assert len(emu.client.messages(emu.ids["general"])) == 5

        # Three routes in turn, each its own bucket of 50/s: a route's window is not the global
        # one's (which began with the posts above), but a third of what the global limit lets
        # through in any second (at most 100 over two of its windows) stays under 50, so on a
        # machine however slow the global limit is the one reached.
        routes = ("/users/@me", "/users/@me/guilds", "/gateway/bot")
        for n in range(200):
            limited = http.get(f"{emu.api_base}{routes[n % 3]}", headers=auth)
            if limited.status_code == 429:
                break
        assert limited.status_code == 429 and limited.headers["X-RateLimit-Global"] == "true"
        assert limited.headers["X-RateLimit-Scope"] == "global" and limited.json()["global"]
        other = {"Authorization": f"Bot {emu.second_bot_token}"}  # per bot token
        assert http.get(f"{emu.api_base}/users/@me", headers=other).status_code == 200
        counts = emu.client.counters()
        assert counts["429 global"] == 1 and counts[f"429 {MESSAGES}"] == 1

    with Emulator() as emu:  # off by default: existing tests see no limits
        assert all(_send_as_bot(emu, {"content": "x"}).status_code == 200 for _ in range(8))


def test_outage_503_and_refuse(emu: Emulator) -> None:
    c = emu.client
    c.set_outage("503")
    assert _send_as_bot(emu, {"content": "x"}).status_code == 503
    c.set_outage("refuse")
    with pytest.raises(httpx.TransportError):
        _send_as_bot(emu, {"content": "x"})
    with httpx.Client(headers={"Authorization": f"Bot {emu.bot_token}"}) as keepalive:
        c.set_outage(None)
        assert keepalive.get(f"{emu.api_base}/users/@me").status_code == 200
        c.set_outage("refuse")
        with pytest.raises(httpx.TransportError):  # an open keep-alive connection dies too
            keepalive.get(f"{emu.api_base}/users/@me")
    c.set_outage(None)
    assert _send_as_bot(emu, {"content": "x"}).status_code == 200
    assert c.counters()[f"503 {MESSAGES}"] == 1


def test_wait_timeout_lists_recent_records(emu: Emulator) -> None:
    emu.client.post_message(emu.ids["general"], "hello")
    with pytest.raises(TimeoutError, match="hello"):
        emu.client.wait(since=0, timeout=0.2)


def test_second_bot_token_acts_as_the_second_bot(emu: Emulator) -> None:
    url = f"{emu.api_base}/channels/{emu.ids['general']}/messages"
    for token, bot in ((emu.bot_token, "bot_id"), (emu.second_bot_token, "second_bot_id")):
        auth = {"Authorization": f"Bot {token}"}
        me = httpx.get(f"{emu.api_base}/users/@me", headers=auth).json()
        posted = httpx.post(url, headers=auth, json={"content": "hi"}).json()
        assert me["id"] == posted["author"]["id"] == emu.ids[bot]
    refused = httpx.post(url, headers={"Authorization": "Bot nope"}, json={"content": "hi"})
    assert refused.status_code == 401


def test_each_application_has_its_own_commands_and_interactions(emu: Emulator) -> None:
    """Two bots register the same command names; a command's interaction reaches only the
    application that owns it, which answers (and follows up) as its own bot user, and a click
    reaches only the bot whose message it is."""
    point_discord_at(emu)
    first, second = BotRunner(emu), BotRunner(emu, emu.second_bot_token)
    first.start()
    second.start()
    try:
        c, ids = emu.client, emu.ids
        wait = {"kind": "commands_update", "timeout": 5}
        c.wait(since=0, application_id=ids["bot_id"], **wait)
        c.wait(since=0, application_id=ids["second_bot_id"], **wait)
        for app in ("bot_id", "second_bot_id"):
            (names,) = [[cmd["name"] for cmd in cmds] for cmds in c.commands(ids[app]).values()]
            assert sorted(names) == ["echo", "slow", "think"]
        mark = c.mark()
        answer = c.run_command(
            ids["general"], "echo", {"text": "b"}, application_id="second_bot_id"
        )
        assert answer["application_id"] == ids["second_bot_id"]
        assert answer["message"]["author"]["id"] == ids["second_bot_id"]
        assert answer["message"]["content"] == "echo: b"
        thought = c.run_command(ids["general"], "think", application_id=ids["second_bot_id"])
        assert thought["message"]["author"]["id"] == ids["second_bot_id"]
        followup = c.wait(since=mark, kind="message_update", source="followup", timeout=5)
        assert followup["message"]["content"] == "done thinking"
        default = c.run_command(ids["general"], "echo", {"text": "a"})  # the first bot's
        assert default["message"]["author"]["id"] == ids["bot_id"]
        delivered = [r["delivered_to"] for r in c.records(since=mark, kind="interaction_create")]
        assert delivered == [[ids["second_bot_id"]], [ids["second_bot_id"]], [ids["bot_id"]]]
        callbacks = [
            (r["application_id"], r["response_type"])
            for r in c.records(since=mark, kind="interaction_callback")
        ]
        assert callbacks == [
            (ids["second_bot_id"], 4),
            (ids["second_bot_id"], 5),
            (ids["bot_id"], 4),
        ]
        # A click on the second bot's message goes to the second bot.
        since = c.mark()
        c.post_message(ids["project-b"], "!buttons")
        both = [
            c.wait(since=since, kind="message_create", content="choose", author_id=ids[b])
            for b in ("bot_id", "second_bot_id")
        ]
        picked = c.select(both[1]["message"]["id"], "perm:pick", ["b"])
        assert picked["application_id"] == ids["second_bot_id"]
        assert picked["message"]["author"]["id"] == ids["second_bot_id"]
        # One bot cannot register (or read) another application's commands.
        url = f"{emu.api_base}/applications/{ids['bot_id']}/guilds/{ids['guild_id']}/commands"
        auth = {"Authorization": f"Bot {emu.second_bot_token}"}
        assert httpx.put(url, json=[], headers=auth, timeout=5).status_code == 403
        assert [cmd["name"] for cmd in c.commands()[ids["guild_id"]]] != []
    finally:
        second.stop()
        first.stop()


def test_audit_log_says_who_archived_a_thread_and_auto_archive_is_not_in_it(emu: Emulator) -> None:
    c = emu.client
    url = f"{emu.api_base}/guilds/{emu.ids['guild_id']}/audit-logs"
    headers = {"Authorization": f"Bot {emu.bot_token}"}

    def entries() -> list[dict]:
        resp = httpx.get(url, params={"action_type": 111}, headers=headers, timeout=5)
        assert resp.status_code == 200, resp.text
        return resp.json()["audit_log_entries"]

    by_bob = c.create_thread(emu.ids["project-a"], "bob archives")
    auto = c.create_thread(emu.ids["project-a"], "goes idle")
    before = time.time()
    c.archive_thread(by_bob["id"], user="bob")
    c.archive_thread(auto["id"], user=None)  # Discord's inactivity auto-archive
    (entry,) = entries()
    assert entry["user_id"] == emu.ids["bob"] and entry["target_id"] == by_bob["id"]
    assert entry["changes"] == [{"key": "archived", "old_value": False, "new_value": True}]
    made = ((int(entry["id"]) >> 22) + 1420070400000) / 1000  # its id holds the real time
    assert before - 1 <= made <= time.time() + 1
    # The bot's own archive (REST PATCH) is logged as the bot's.
    thread = c.create_thread(emu.ids["project-a"], "bot archives")
    resp = httpx.patch(
        f"{emu.api_base}/channels/{thread['id']}", json={"archived": True}, headers=headers
    )
    assert resp.status_code == 200
    assert entries()[0]["user_id"] == emu.ids["bot_id"]
    c.settings(audit_log_access=False)  # no View Audit Log
    resp = httpx.get(url, headers=headers, timeout=5)
    assert resp.status_code == 403 and resp.json()["code"] == 50013


def test_creating_and_deleting_a_channel_needs_manage_channels(emu: Emulator) -> None:
    c = emu.client
    url = f"{emu.api_base}/guilds/{emu.ids['guild_id']}/channels"
    headers = {"Authorization": f"Bot {emu.bot_token}"}
    body = {"name": "My App", "type": 0, "parent_id": emu.ids["category_id"]}
    since = c.mark()
    resp = httpx.post(url, json=body, headers=headers, timeout=5)
    assert resp.status_code == 201, resp.text
    made = resp.json()
    assert made["name"] == "my-app" and made["parent_id"] == emu.ids["category_id"]
    assert c.wait(since=since, kind="channel_create", channel_id=made["id"])
    assert made["id"] in {ch["id"] for ch in c.channels()}
    bad = httpx.post(url, json={"name": "", "parent_id": emu.ids["project-a"]}, headers=headers)
    assert bad.status_code == 400 and set(bad.json()["errors"]) == {"name", "parent_id"}

    c.settings(manage_channels=False)
    resp = httpx.post(url, json=body, headers=headers, timeout=5)
    assert resp.status_code == 403
    assert resp.json() == {"message": "Missing Permissions", "code": 50013}
    gone = httpx.delete(f"{emu.api_base}/channels/{made['id']}", headers=headers, timeout=5)
    assert gone.status_code == 403 and gone.json()["code"] == 50013
    c.settings(manage_channels=True)
    gone = httpx.delete(f"{emu.api_base}/channels/{made['id']}", headers=headers, timeout=5)
    assert gone.status_code == 200
    assert made["id"] not in {ch["id"] for ch in c.channels()}


# ----- who may read and change what (another local user of `discord-bridge try`) ---------------


def _rest(emu: Emulator, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bot {token}"}
    return httpx.Client(base_url=emu.api_base, headers=headers, timeout=5)


def test_a_bot_cannot_edit_another_authors_message(emu: Emulator) -> None:
    """Discord answers 50005 to an edit of a message someone else wrote: another bot in the
    guild cannot rewrite the bridge's permission prompt (its **Deny** into an allow)."""
    channel = emu.ids["general"]
    deny = {"type": 2, "style": 4, "label": "Deny", "custom_id": "perm:deny"}
    row = {"type": 1, "components": [deny]}
    prompt = {"content": "Claude wants to use Bash", "components": [row]}
    with _rest(emu, emu.bot_token) as first, _rest(emu, emu.second_bot_token) as second:
        posted = first.post(f"/channels/{channel}/messages", json=prompt).json()
        route = f"/channels/{channel}/messages/{posted['id']}"
        forged = {"components": [{"type": 1, "components": [{**deny, "custom_id": "perm:allow"}]}]}
        refused = second.patch(route, json=forged)
        assert refused.status_code == 403
        assert refused.json() == {
            "message": "Cannot edit a message authored by another user",
            "code": 50005,
        }
        by_alice = emu.client.post_message(channel, "my own words")["id"]
        refused = first.patch(f"/channels/{channel}/messages/{by_alice}", json={"content": "x"})
        assert refused.status_code == 403 and refused.json()["code"] == 50005
        assert first.patch(route, json={"content": "edited by its author"}).status_code == 200
    stored = {m["id"]: m for m in emu.client.messages(channel)}
    assert stored[posted["id"]]["components"][0]["components"][0]["custom_id"] == "perm:deny"
    assert stored[posted["id"]]["content"] == "edited by its author"
    assert stored[by_alice]["content"] == "my own words"


def test_deleting_another_authors_message_needs_manage_messages(emu: Emulator) -> None:
    channel = emu.ids["general"]
    with _rest(emu, emu.bot_token) as first, _rest(emu, emu.second_bot_token) as second:

        def post() -> str:
            return first.post(f"/channels/{channel}/messages", json={"content": "x"}).json()["id"]

        emu.client.settings(manage_messages=False)
        mine, theirs = post(), post()
        refused = second.delete(f"/channels/{channel}/messages/{theirs}")
        assert refused.status_code == 403 and refused.json()["code"] == 50013
        assert first.delete(f"/channels/{channel}/messages/{mine}").status_code == 204
        emu.client.settings(manage_messages=True)  # as Discord: a moderator's right
        assert second.delete(f"/channels/{channel}/messages/{theirs}").status_code == 204


def test_reaction_routes_as_discord_has_them(emu: Emulator) -> None:
    """A message's reactions are counted, with the reader's own (``me``); who reacted is
    listed; someone else's reaction, one emoji's or all are removed with Manage Messages."""
    channel = emu.ids["general"]
    c = emu.client
    with _rest(emu, emu.bot_token) as first:
        posted = first.post(f"/channels/{channel}/messages", json={"content": "x"}).json()
        route = f"/channels/{channel}/messages/{posted['id']}"
        assert first.put(f"{route}/reactions/✅/@me").status_code == 204
        c.react(channel, posted["id"], "✅", user="alice")
        c.react(channel, posted["id"], "❌", user="bob")
        shown = {r["emoji"]["name"]: r for r in first.get(route).json()["reactions"]}
        assert (shown["✅"]["count"], shown["✅"]["me"]) == (2, True)
        assert (shown["❌"]["count"], shown["❌"]["me"]) == (1, False)
        listed = first.get(f"/channels/{channel}/messages", params={"limit": 1}).json()
        assert [r["count"] for r in listed[0]["reactions"]] == [2, 1]
        users = first.get(f"{route}/reactions/✅").json()
        assert [u["id"] for u in users] == sorted([emu.ids["bot_id"], emu.ids["alice"]], key=int)
        assert first.get(f"{route}/reactions/🙃").json()["code"] == 10014
        assert c.reactions(channel, posted["id"]) == ["✅"]  # the bots' own

        emu.client.settings(manage_messages=False)
        refused = first.delete(f"{route}/reactions/❌/{emu.ids['bob']}")
        assert refused.status_code == 403 and refused.json()["code"] == 50013
        assert first.delete(f"{route}/reactions/✅/{emu.ids['bot_id']}").status_code == 204
        emu.client.settings(manage_messages=True)
        since = c.mark()
        assert first.delete(f"{route}/reactions/❌/{emu.ids['bob']}").status_code == 204
        c.wait(since=since, kind="reaction_remove", user_id=emu.ids["bob"])
        assert first.delete(f"{route}/reactions/✅").status_code == 204
        c.wait(since=since, kind="message_reaction_remove_emoji", message_id=posted["id"])
        c.react(channel, posted["id"], "👀", user="bob")
        assert first.delete(f"{route}/reactions").status_code == 204
        c.wait(since=since, kind="message_reaction_remove_all", message_id=posted["id"])
        assert c.reaction_users(channel, posted["id"]) == {}
        assert "reactions" not in first.get(route).json()


def test_ephemeral_messages_are_never_fetched_over_rest(emu: Emulator) -> None:
    """An ephemeral answer (``/diff``'s) is its user's alone: no bot lists, fetches or edits
    it through the channel's routes; only the interaction's own token reaches it."""
    channel, app, guild = emu.ids["general"], emu.ids["bot_id"], emu.ids["guild_id"]
    with _rest(emu, emu.bot_token) as first, _rest(emu, emu.second_bot_token) as second:
        route = f"/applications/{app}/guilds/{guild}/commands"
        assert first.put(route, json=[{"name": "diff", "description": "d"}]).status_code == 200
        since = emu.client.mark()
        runner = threading.Thread(target=emu.client.run_command, args=(channel, "diff"))
        runner.start()
        created = emu.client.wait(since=since, kind="interaction_create")
        iid = created["interaction_id"]
        token = emu.call(lambda: emu.state.interactions[iid].token)
        answer = {"type": 4, "data": {"content": "secret diff", "flags": 64}}
        assert first.post(f"/interactions/{iid}/{token}/callback", json=answer).status_code == 204
        runner.join(10)
        secret = emu.client.wait(since=since, kind="message_create", content="secret diff")
        mid = secret["message"]["id"]
        for bot in (first, second):
            listed = bot.get(f"/channels/{channel}/messages").json()
            assert "secret diff" not in json.dumps(listed)
            for method in ("GET", "PATCH", "DELETE"):
                got = bot.request(method, f"/channels/{channel}/messages/{mid}", json={})
                assert got.status_code == 404 and got.json()["code"] == 10008, method
        own = first.get(f"/webhooks/{app}/{token}/messages/@original")
        assert own.status_code == 200 and own.json()["content"] == "secret diff"


def test_an_interaction_token_edits_only_its_applications_messages(emu: Emulator) -> None:
    channel, app, guild = emu.ids["general"], emu.ids["bot_id"], emu.ids["guild_id"]
    with _rest(emu, emu.bot_token) as first:
        route = f"/applications/{app}/guilds/{guild}/commands"
        assert first.put(route, json=[{"name": "hi", "description": "d"}]).status_code == 200
        by_alice = emu.client.post_message(channel, "alice wrote this")["id"]
        since = emu.client.mark()
        runner = threading.Thread(target=emu.client.run_command, args=(channel, "hi"))
        runner.start()
        iid = emu.client.wait(since=since, kind="interaction_create")["interaction_id"]
        token = emu.call(lambda: emu.state.interactions[iid].token)
        answer = {"type": 4, "data": {"content": "hello"}}
        assert first.post(f"/interactions/{iid}/{token}/callback", json=answer).status_code == 204
        runner.join(10)
        edit = first.patch(f"/webhooks/{app}/{token}/messages/{by_alice}", json={"content": "x"})
        assert edit.status_code == 404 and edit.json()["code"] == 10008
        gone = first.delete(f"/webhooks/{app}/{token}/messages/{by_alice}")
        assert gone.status_code == 404
        assert (
            first.patch(
                f"/webhooks/{app}/{token}/messages/@original", json={"content": "hello again"}
            ).status_code
            == 200
        )
    texts = [m["content"] for m in emu.client.messages(channel)]
    assert "alice wrote this" in texts and "hello again" in texts


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("https://example.com/a", True),
        ("http://example.com", True),
        ("discord://-/channels/1/2", True),
        ("javascript:alert(document.domain)", False),
        ("JavaScript:alert(1)", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("file:///etc/passwd", False),
        ("vbscript:x", False),
        ("https:no-host", False),
        ("example.com", False),
    ],
)
def test_link_buttons_take_http_https_and_discord_urls_only(
    emu: Emulator, url: str, accepted: bool
) -> None:
    """As Discord: ``Scheme "javascript" is not supported`` (the page renders a link button
    as a link; its CSP stays a second wall)."""
    link = {"type": 2, "style": 5, "label": "Open", "url": url}
    body = {"content": "x", "components": [{"type": 1, "components": [link]}]}
    sent = _send_as_bot(emu, body)
    if accepted:
        assert sent.status_code == 200, sent.text
        return
    assert sent.status_code == 400 and sent.json()["code"] == 50035, sent.text
    errors = sent.json()["errors"]["components"]["0"]["components"]["0"]["url"]["_errors"]
    assert errors[0]["code"] in ("URL_TYPE_INVALID_SCHEME", "URL_TYPE_INVALID_URL"), errors
    mid = _send_as_bot(emu, {"content": "y"}).json()["id"]
    with _rest(emu, emu.bot_token) as first:
        edit = first.patch(f"/channels/{emu.ids['general']}/messages/{mid}", json=body)
    assert edit.status_code == 400  # an edit cannot add one either


def test_an_emulator_with_a_secret_token_accepts_no_seeded_credential() -> None:
    """``discord-bridge try`` gives the emulator a secret token: every token the emulator
    would derive from its seed (which another local user can compute from the project's
    path) is refused, and there is no second bot unless one is asked for; asked for, its
    token is secret too."""
    from discord_emulator.ids import make_token

    async def identify(emu: Emulator, token: str) -> int | None:
        async with aiohttp.ClientSession() as session, session.ws_connect(emu.gateway_url) as ws:
            await ws.receive_json()  # HELLO
            await ws.send_json({"op": 2, "d": {"token": token, "intents": 513}})
            frame = await ws.receive()
            return ws.close_code if frame.type != aiohttp.WSMsgType.TEXT else None

    with Emulator(seed=5, bot_token="a-secret", second_bot=False) as emu:
        assert emu.second_bot_token == ""
        seeded = [make_token(emu.ids[bot], 5) for bot in ("bot_id", "second_bot_id")]
        for token in seeded:
            with _rest(emu, token) as guess:
                assert guess.get("/users/@me").status_code == 401
            assert asyncio.run(identify(emu, token)) == 4004
        with _rest(emu, "a-secret") as real:
            members = real.get(f"/guilds/{emu.ids['guild_id']}/members").json()
        assert [m["user"]["id"] for m in members if m["user"]["bot"]] == [emu.ids["bot_id"]]
    with Emulator(seed=5, bot_token="a-secret", second_bot=True) as emu:
        assert emu.second_bot_token not in seeded and len(emu.second_bot_token) > 40
        with _rest(emu, emu.second_bot_token) as second:
            assert second.get("/users/@me").json()["id"] == emu.ids["second_bot_id"]


def test_the_gateway_takes_nothing_but_a_login_from_an_unknown_connection(emu: Emulator) -> None:
    """Anyone on the machine can open the gateway's websocket: before IDENTIFY only a
    heartbeat is answered (anything else closes with 4003, as Discord), and no frame may
    exceed Discord's 4096 bytes (it would otherwise be held in memory whole)."""

    async def send(frame: dict) -> tuple[int | None, list[dict]]:
        since = emu.client.mark()
        async with aiohttp.ClientSession() as session, session.ws_connect(emu.gateway_url) as ws:
            await ws.receive_json()  # HELLO
            await ws.send_json({"op": 1, "d": None})
            assert (await ws.receive_json())["op"] == 11  # a heartbeat is acked
            await ws.send_json(frame)
            while (await asyncio.wait_for(ws.receive(), 5)).type == aiohttp.WSMsgType.TEXT:
                pass  # (before the fix: an op 3 stayed open, and was recorded)
            return ws.close_code, emu.client.records(since=since, kind="gateway_op")

    for op in (3, 8, 4, 99):
        code, recorded = asyncio.run(send({"op": op, "d": {"stuffed": "x" * 100}}))
        assert code == 4003 and recorded == [], (op, code, recorded)
    code, _ = asyncio.run(send({"op": 2, "d": {"token": "x" * 5000}}))
    assert code == 1009  # message too big
