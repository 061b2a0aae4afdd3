"""The emulator's web client (what `discord-bridge try` serves): its guard, what it does as its
user, the gateway as a user client (ephemeral messages reach only that user), downloads.

Real HTTP and websockets against a real Emulator; the page itself is driven in a browser by
tests/e2e/test_try.py.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp
import httpx
import pytest

from discord_emulator import Emulator

TOKEN = "access-token-for-tests"
HEADER = {"X-Emulator-Client": "1"}


@pytest.fixture(scope="module")
def web() -> Iterator[tuple[Emulator, str]]:
    with Emulator(seed=7, bot_token="secret-bot-token", control_token="ctl") as emu:
        port = emu.serve_web("127.0.0.1", 0, TOKEN, "alice", emu.ids["project-a"])
        yield emu, f"http://127.0.0.1:{port}"


@contextmanager
def logged_in(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=10) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 302  # token traded for a cookie
        yield client


def test_everything_needs_the_token(web) -> None:
    _, base = web
    with httpx.Client(base_url=base, timeout=10) as anon:
        page = anon.get("/")
        assert page.status_code == 401 and "access token" in page.text
        assert anon.get("/?token=wrong").status_code == 401
        assert anon.get("/api/session").status_code == 401
        assert anon.post("/api/messages", json={}, headers=HEADER).status_code == 401
        assert anon.get("/client.js").status_code == 401
    with logged_in(base) as client:
        page = client.get("/")
        assert page.status_code == 200 and "/client.js" in page.text
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        session = client.get("/api/session").json()
        assert session["user"]["username"] == "alice" and session["home_channel"]


def test_control_api_needs_the_control_token(web) -> None:
    emu, _ = web
    assert httpx.get(f"{emu.control_url}/_test/info").status_code == 401
    assert emu.client.ids["alice"]  # the emulator's own client carries it


def test_posts_act_as_the_user_and_need_the_header(web) -> None:
    emu, base = web
    channel = emu.ids["project-a"]
    with logged_in(base) as client:
        body = {"channel_id": channel, "content": "hi", "user": "bob", "bot": True}
        assert client.post("/api/messages", json=body).status_code == 403  # no header
        since = emu.client.mark()
        sent = client.post("/api/messages", json=body, headers=HEADER).json()
        assert sent["author"]["id"] == emu.ids["alice"] and not sent["author"]["bot"]
        record = emu.client.wait(since=since, kind="user_message", channel_id=channel)
        assert record["message"]["content"] == "hi"


def test_attachments_download_and_only_images_show_inline(web) -> None:
    emu, base = web
    files = [
        {"filename": "page.html", "data": base64.b64encode(b"<script>x</script>").decode()},
        {"filename": "dot.png", "data": base64.b64encode(b"\x89PNG").decode()},
    ]
    with logged_in(base) as client:
        body = {"channel_id": emu.ids["project-a"], "content": "", "attachments": files}
        sent = client.post("/api/messages", json=body, headers=HEADER).json()
        html, png = (httpx.URL(a["url"]).path for a in sent["attachments"])
        got = client.get(html)
        assert got.content == b"<script>x</script>"
        assert got.headers["Content-Type"] == "application/octet-stream"
        assert got.headers["Content-Disposition"] == "attachment"
        assert client.get(png).headers["Content-Type"] == "image/png"


def test_an_uploaded_file_is_not_readable_on_loopback_by_its_id(web) -> None:
    """The emulator's REST port is on loopback, where every local user can connect (and see
    the port). A file uploaded through the page must not be readable there by its id and
    name alone (ids are sequential): like Discord's signed CDN links, only the full URL the
    message carries (the bot downloads that) opens it."""
    emu, base = web
    secret = base64.b64encode(b"my private notes").decode()
    body = {
        "channel_id": emu.ids["project-a"],
        "content": "",
        "attachments": [{"filename": "notes.txt", "data": secret}],
    }
    with logged_in(base) as client:
        (att,) = client.post("/api/messages", json=body, headers=HEADER).json()["attachments"]
    url = httpx.URL(att["url"])
    assert url.host == "127.0.0.1"
    for port in (emu.port, emu.control_port):
        guessed = f"http://127.0.0.1:{port}{url.path}"  # no key: what another user can build
        assert httpx.get(guessed).status_code == 404
        assert httpx.get(f"{guessed}?hm=0").status_code == 404
    assert httpx.get(str(url)).content == b"my private notes"


async def _gateway(base: str, origin: str | None, cookie: str) -> Any:
    session = aiohttp.ClientSession(cookies={cookie: TOKEN})
    headers = {"Origin": origin} if origin else {}
    try:
        ws = await session.ws_connect(base.replace("http", "ws") + "/gateway", headers=headers)
    except aiohttp.WSServerHandshakeError as err:
        await session.close()
        return err.status
    return session, ws


async def _next_event(ws: aiohttp.ClientWebSocketResponse, name: str) -> dict:
    while True:
        frame = await asyncio.wait_for(ws.receive_json(), 10)
        if frame.get("t") == name:
            return frame["d"]


def test_gateway_as_the_user_sees_ephemeral_answers_to_its_own_interactions(web) -> None:
    emu, base = web
    port = base.rsplit(":", 1)[1]
    cookie = f"emulator_access_{port}"
    with logged_in(base) as client:
        gateway_token = client.get("/api/session").json()["gateway_token"]
        rest = httpx.Client(
            base_url=emu.api_base, headers={"Authorization": "Bot secret-bot-token"}
        )
        app, guild = emu.ids["bot_id"], emu.ids["guild_id"]
        route = f"/applications/{app}/guilds/{guild}/commands"
        assert rest.put(route, json=[{"name": "hello", "description": "hi"}]).status_code == 200

        async def scenario() -> tuple[dict, dict]:
            assert await _gateway(base, "http://evil.example", cookie) == 403
            session, ws = await _gateway(base, base, cookie)
            try:
                await ws.send_json({"op": 2, "d": {"token": gateway_token, "intents": 1 | 512}})
                ready = await _next_event(ws, "READY")
                assert ready["user"]["id"] == emu.ids["alice"]
                await _next_event(ws, "GUILD_CREATE")
                result: dict = {}
                since = emu.client.mark()
                body = {"kind": "command", "name": "hello", "channel_id": emu.ids["project-a"]}
                runner = threading.Thread(
                    target=lambda: result.update(
                        client.post("/api/interactions", json=body, headers=HEADER).json()
                    )
                )
                runner.start()
                created = await asyncio.to_thread(
                    emu.client.wait, since=since, kind="interaction_create"
                )
                iid = created["interaction_id"]
                token = emu.call(lambda: emu.state.interactions[iid].token)
                answer = {"type": 4, "data": {"content": "only you", "flags": 64}}
                callback = f"/interactions/{iid}/{token}/callback"
                assert rest.post(callback, json=answer).status_code == 204
                event = await _next_event(ws, "MESSAGE_CREATE")
                await asyncio.to_thread(runner.join, 10)
                return event, result
            finally:
                await ws.close()
                await session.close()

        event, result = asyncio.run(scenario())
        assert event["content"] == "only you" and event["flags"] & 64
        assert result["response_type"] == 4 and result["ephemeral"]
        assert "token" not in result  # the interaction token is the bot's, not the page's
        rest.close()


def test_threads_start_and_archive_as_the_user(web) -> None:
    emu, base = web
    with logged_in(base) as client:
        body = {"channel_id": emu.ids["project-a"], "name": "idea"}
        thread = client.post("/api/threads", json=body, headers=HEADER).json()
        assert thread["parent_id"] == emu.ids["project-a"] and thread["name"] == "idea"
        since = emu.client.mark()
        route = f"/api/threads/{thread['id']}/archive"
        archived = client.post(route, json={"user": "bob"}, headers=HEADER).json()
        assert archived["thread_metadata"]["archived"]
        record = emu.client.wait(since=since, kind="thread_update", thread_id=thread["id"])
        assert record["thread"]["thread_metadata"]["archived"]
        entry = emu.call(lambda: emu.state.audit_log[-1])
        assert entry["user_id"] == emu.ids["alice"]  # as the page's user, whatever was sent
        reopened = client.post(route, json={"archived": False}, headers=HEADER).json()
        assert not reopened["thread_metadata"]["archived"]
        notathread = f"/api/threads/{emu.ids['project-a']}/archive"
        assert client.post(notathread, json={}, headers=HEADER).status_code == 400


def test_the_address_opened_from_a_link_on_another_site_opens_the_page(web) -> None:
    """The printed address is often opened from a link elsewhere (a chat or mail page on the
    phone, for --listen): the token it carries must still let the page in. A real Chromium
    follows the link; the page must come up (its gateway online), not the token page."""
    import http.server
    import os
    import socketserver

    from playwright.sync_api import sync_playwright

    if not os.access("/usr/bin/chromium", os.X_OK):
        pytest.fail("/usr/bin/chromium is missing (./scripts/test.sh installs Debian's chromium)")
    _, base = web
    link = f'<a id="go" href="{base}/?token={TOKEN}">open</a>'.encode()

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(link)

        def log_message(self, *_: object) -> None:
            pass

    with socketserver.TCPServer(("127.0.0.1", 0), Elsewhere) as other:
        threading.Thread(target=other.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
                )
                try:
                    page = browser.new_page()
                    page.set_default_timeout(15_000)
                    # localhost and 127.0.0.1 are different sites
                    page.goto(f"http://localhost:{other.server_address[1]}/")
                    page.click("#go")
                    page.locator("#status.online").wait_for()
                    assert "token" not in page.url
                finally:
                    browser.close()
        finally:
            other.shutdown()
