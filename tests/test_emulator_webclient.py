"""The emulator's web client (what `discord-bridge try` serves): its guard, what it does as its
user, the gateway as a user client (ephemeral messages reach only that user), downloads.

Real HTTP and websockets against a real Emulator; the page itself is driven in a browser by
tests/e2e/test_try.py.
"""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import os
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp
import httpx
import pytest

from discord_emulator import Emulator

TOKEN = "access-token-for-tests"
HEADER = {"Authorization": f"Bearer {TOKEN}"}  # what the page sends with every request


@pytest.fixture(scope="module")
def web() -> Iterator[tuple[Emulator, str]]:
    with Emulator(seed=7, bot_token="secret-bot-token", control_token="ctl") as emu:
        port = emu.serve_web("127.0.0.1", 0, TOKEN, "alice", emu.ids["project-a"])
        yield emu, f"http://127.0.0.1:{port}"


@contextmanager
def logged_in(base: str) -> Iterator[httpx.Client]:
    """A client of the page's API, carrying the token as the page does."""
    with httpx.Client(base_url=base, timeout=10, headers=HEADER) as client:
        yield client


def test_everything_needs_the_token(web) -> None:
    """The page itself is static (no secret in it); everything it reads or does needs the
    token in a header, never in a cookie (a browser sends a host's cookies to all its ports)."""
    _, base = web
    with httpx.Client(base_url=base, timeout=10) as anon:
        page = anon.get("/")
        assert page.status_code == 200 and "/client.js" in page.text
        assert "access token" in page.text  # what it says when opened without its token
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        assert anon.get(f"/?token={TOKEN}").status_code == 200  # no cookie for a query either
        assert anon.get("/api/session").status_code == 401
        wrong = {"Authorization": f"Bearer {TOKEN}x"}
        assert anon.get("/api/session", headers=wrong).status_code == 401
        assert anon.post("/api/messages", json={}).status_code == 401
        assert anon.post("/api/messages", json={}, headers=wrong).status_code == 401
        assert not anon.cookies
    with logged_in(base) as client:
        session = client.get("/api/session")
        assert session.json()["user"]["username"] == "alice" and session.json()["home_channel"]
        assert "set-cookie" not in session.headers and not client.cookies


def test_control_api_needs_the_control_token(web) -> None:
    emu, _ = web
    assert httpx.get(f"{emu.control_url}/_test/info").status_code == 401
    assert emu.client.ids["alice"]  # the emulator's own client carries it


def test_posts_act_as_the_user_and_need_the_header(web) -> None:
    emu, base = web
    channel = emu.ids["project-a"]
    with logged_in(base) as client:
        body = {"channel_id": channel, "content": "hi", "user": "bob", "bot": True}
        assert httpx.post(f"{base}/api/messages", json=body).status_code == 401  # no header
        since = emu.client.mark()
        sent = client.post("/api/messages", json=body).json()
        assert sent["author"]["id"] == emu.ids["alice"] and not sent["author"]["bot"]
        record = emu.client.wait(since=since, kind="user_message", channel_id=channel)
        assert record["message"]["content"] == "hi"


def test_the_switcher_acts_as_its_second_user_only_and_members_carry_their_roles() -> None:
    """``also_as``: the page may act as bob (``X-Act-As``), never as anyone else (the bot, a
    stranger: it stays alice); bob's messages carry his guild roles, as Discord's do."""
    with Emulator(seed=8, bot_token="secret-bot-token", control_token="ctl") as emu:
        ids = emu.ids
        port = emu.serve_web("127.0.0.1", 0, TOKEN, "alice", ids["project-a"], also_as=("bob",))
        emu.client.set_roles("bob", ["drivers"])
        with logged_in(f"http://127.0.0.1:{port}") as client:
            session = client.get("/api/session").json()
            assert [u["id"] for u in session["also_as"]] == [ids["bob"]]
            assert session["also_as"][0]["roles"] == [ids["drivers_role_id"]]
            assert session["roles"][ids["drivers_role_id"]] == "drivers"
            body = {"channel_id": ids["project-a"], "content": "hi"}
            for who, acts_as in (("bob", "bob"), (ids["bot_id"], "alice"), ("carol", "alice")):
                sent = client.post(
                    "/api/messages", json=body, headers={"X-Act-As": ids.get(who, who)}
                )
                assert sent.json()["author"]["id"] == ids[acts_as], who
        bot = {"Authorization": "Bot secret-bot-token"}
        url = f"{emu.api_base}/guilds/{ids['guild_id']}/members/{ids['bob']}"
        assert httpx.get(url, headers=bot).json()["roles"] == [ids["drivers_role_id"]]
        roles = httpx.get(f"{emu.api_base}/guilds/{ids['guild_id']}/roles", headers=bot).json()
        assert {r["name"] for r in roles} == {"@everyone", "drivers", "approvers", "watchers"}


def test_reactions_act_as_the_user_and_show_whose(web) -> None:
    """The page reacts as its user (never as someone it names), sees its own (``me``) and
    can take it back; a message it cannot see takes none."""
    emu, base = web
    channel = emu.ids["project-a"]
    posted = emu.client.post_message(channel, "react to me", user="bob")
    body = {"channel_id": channel, "message_id": posted["id"], "emoji": "✅", "user": "bob"}
    assert httpx.post(f"{base}/api/reactions", json=body).status_code == 401  # no header
    with logged_in(base) as client:
        since = emu.client.mark()
        assert client.post("/api/reactions", json=body).json() == {"changed": True}
        added = emu.client.wait(since=since, kind="reaction_add", message_id=posted["id"])
        assert added["user_id"] == emu.ids["alice"] and added["emoji"] == "✅"
        emu.client.react(channel, posted["id"], "✅", user="bob")
        (shown,) = [
            m
            for m in client.get(f"/api/channels/{channel}/messages").json()
            if m["id"] == posted["id"]
        ]
        assert [(r["emoji"]["name"], r["count"], r["me"]) for r in shown["reactions"]] == [
            ("✅", 2, True)
        ]
        assert client.post("/api/reactions", json={**body, "remove": True}).json()["changed"]
        users = emu.client.reaction_users(channel, posted["id"])
        assert users == {"✅": [emu.ids["bob"]]}
        long = client.post("/api/reactions", json={**body, "emoji": "x" * 33})
        assert long.status_code == 400


def test_attachments_download_and_only_images_show_inline(web) -> None:
    emu, base = web
    files = [
        {"filename": "page.html", "data": base64.b64encode(b"<script>x</script>").decode()},
        {"filename": "dot.png", "data": base64.b64encode(b"\x89PNG").decode()},
    ]
    with logged_in(base) as client:
        body = {"channel_id": emu.ids["project-a"], "content": "", "attachments": files}
        sent = client.post("/api/messages", json=body).json()
        # as the page links them: this address, the path and key of the message's url
        html, png = (httpx.URL(a["url"]).raw_path.decode() for a in sent["attachments"])
        assert client.get(html.split("?")[0]).status_code == 404  # not without its key
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
        (att,) = client.post("/api/messages", json=body).json()["attachments"]
    url = httpx.URL(att["url"])
    assert url.host == "127.0.0.1"
    for port in (emu.port, emu.control_port, int(base.rsplit(":", 1)[1])):
        guessed = f"http://127.0.0.1:{port}{url.path}"  # no key: what another user can build
        assert httpx.get(guessed).status_code == 404
        assert httpx.get(f"{guessed}?hm=0").status_code == 404
    assert httpx.get(str(url)).content == b"my private notes"


async def _gateway(base: str, origin: str | None) -> Any:
    session = aiohttp.ClientSession()
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
    with logged_in(base) as client:
        gateway_token = client.get("/api/session").json()["gateway_token"]
        rest = httpx.Client(
            base_url=emu.api_base, headers={"Authorization": "Bot secret-bot-token"}
        )
        app, guild = emu.ids["bot_id"], emu.ids["guild_id"]
        route = f"/applications/{app}/guilds/{guild}/commands"
        assert rest.put(route, json=[{"name": "hello", "description": "hi"}]).status_code == 200

        async def scenario() -> tuple[dict, dict]:
            assert await _gateway(base, "http://evil.example") == 403
            session, ws = await _gateway(base, None)  # without the page's token: refused
            try:
                await ws.receive_json()  # HELLO
                await ws.send_json({"op": 2, "d": {"token": TOKEN, "intents": 1 | 512}})
                assert (await ws.receive()).type == aiohttp.WSMsgType.CLOSE
                assert ws.close_code == 4004
            finally:
                await ws.close()
                await session.close()
            session, ws = await _gateway(base, base)
            try:
                await ws.send_json({"op": 2, "d": {"token": gateway_token, "intents": 1 | 512}})
                ready = await _next_event(ws, "READY")
                assert ready["user"]["id"] == emu.ids["alice"]
                await _next_event(ws, "GUILD_CREATE")
                result: dict = {}
                since = emu.client.mark()
                body = {"kind": "command", "name": "hello", "channel_id": emu.ids["project-a"]}
                runner = threading.Thread(
                    target=lambda: result.update(client.post("/api/interactions", json=body).json())
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
        thread = client.post("/api/threads", json=body).json()
        assert thread["parent_id"] == emu.ids["project-a"] and thread["name"] == "idea"
        since = emu.client.mark()
        route = f"/api/threads/{thread['id']}/archive"
        archived = client.post(route, json={"user": "bob"}).json()
        assert archived["thread_metadata"]["archived"]
        record = emu.client.wait(since=since, kind="thread_update", thread_id=thread["id"])
        assert record["thread"]["thread_metadata"]["archived"]
        entry = emu.call(lambda: emu.state.audit_log[-1])
        assert entry["user_id"] == emu.ids["alice"]  # as the page's user, whatever was sent
        reopened = client.post(route, json={"archived": False}).json()
        assert not reopened["thread_metadata"]["archived"]
        notathread = f"/api/threads/{emu.ids['project-a']}/archive"
        assert client.post(notathread, json={}).status_code == 400


@contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not os.access("/usr/bin/chromium", os.X_OK):
        pytest.fail("/usr/bin/chromium is missing (./scripts/test.sh installs Debian's chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
        )
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def elsewhere(body: bytes) -> Iterator[tuple[int, list[tuple[str, dict[str, str]]]]]:
    """Another local web server (a dev server, a Jupyter) on 127.0.0.1: its port, and every
    request it received (path, headers)."""
    seen: list[tuple[str, dict[str, str]]] = []

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append((self.path, dict(self.headers.items())))
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    with socketserver.TCPServer(("127.0.0.1", 0), Elsewhere) as other:
        threading.Thread(target=other.serve_forever, daemon=True).start()
        try:
            yield other.server_address[1], seen
        finally:
            other.shutdown()


def test_the_address_opened_from_a_link_on_another_site_opens_the_page(web) -> None:
    """The printed address is often opened from a link elsewhere (a chat or mail page on the
    phone, for --listen): the token it carries must still let the page in. A real Chromium
    follows the link; the page must come up (its gateway online), not the token page."""
    _, base = web
    link = f'<a id="go" href="{base}/#token={TOKEN}">open</a>'.encode()
    with elsewhere(link) as (port, _), chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(15_000)
        page.goto(f"http://localhost:{port}/")  # localhost and 127.0.0.1 are different sites
        page.click("#go")
        page.locator("#status.online").wait_for()
        assert "token" not in page.url


def test_another_local_server_the_browser_visits_receives_nothing_usable(web) -> None:
    """A browser sends a host's cookies to every port of it: a dev server or a Jupyter the
    owner opens next to the page (127.0.0.1 or localhost, another port) must receive nothing
    that opens the page's API: no cookie, no token in an address or a Referer. The page keeps
    its token for its own tab (a reload stays in); a new tab needs the printed address."""
    _, base = web
    with elsewhere(b"<p>another local service</p>") as (port, seen), chromium() as browser:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(f"{base}/#token={TOKEN}")
        page.locator("#status.online").wait_for()
        assert "token" not in page.url  # out of the address bar (and of the history entry)
        page.reload()
        page.locator("#status.online").wait_for()
        for host in ("127.0.0.1", "localhost"):
            context.new_page().goto(f"http://{host}:{port}/dev-server")
        page.evaluate(f"location.href = 'http://127.0.0.1:{port}/followed-a-link'")
        page.wait_for_url(f"http://127.0.0.1:{port}/followed-a-link")
        bare = context.new_page()
        bare.goto(base)
        bare.locator("#locked", has_text="access token").wait_for()
    assert {"/dev-server", "/followed-a-link"} <= {path for path, _ in seen}, seen
    for path, headers in seen:
        assert TOKEN not in path and TOKEN not in json.dumps(headers), (path, headers)
        replayed = {k: v for k, v in headers.items() if k.lower() not in ("host", "connection")}
        assert httpx.get(f"{base}/api/session", headers=replayed).status_code == 401, headers


def test_a_javascript_link_button_is_never_a_live_link_on_the_page(web) -> None:
    """The emulator refuses a ``javascript:`` link button as Discord does
    (tests/test_emulator.py); should one get through anyway, the page renders it as text,
    and its CSP would block it: nothing runs when it is clicked."""
    from discord_emulator import messages as m

    emu, base = web
    channel = emu.ids["project-a"]
    rows = [
        {
            "type": 1,
            "components": [
                {
                    "type": 2,
                    "style": 5,
                    "label": "evil",
                    "url": "javascript:alert(document.domain)",
                },
                {"type": 2, "style": 5, "label": "docs", "url": "https://example.com/docs"},
            ],
        }
    ]

    def smuggle() -> None:  # past the emulator's validation, as a bug there would let it
        st = emu.state
        body = {"content": "links", "components": rows}
        msg = m.create_message(st, st.channels[channel], st.bot_user, body, [], validate=False)
        m.announce(st, msg)

    with chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(15_000)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(f"{base}/#token={TOKEN}")
        page.locator("#status.online").wait_for()
        emu.call(smuggle)
        message = page.locator(".message", has_text="links")
        message.locator(".link-button", has_text="evil").click()
        docs = message.locator("a.link-button", has_text="docs")
        assert docs.get_attribute("href") == "https://example.com/docs"
        assert message.locator("a.link-button", has_text="evil").count() == 0
        assert message.locator("[href^='javascript']").count() == 0
    assert dialogs == []


def test_a_message_posted_while_its_channel_loads_still_shows(web) -> None:
    """The page reads a channel's history over REST while the gateway goes on: a message
    posted between that request and its answer is in the events, not in the answer, and
    must still show (it was lost, so a prompt posted the moment the page opened never came)."""
    emu, base = web
    channel = emu.ids["project-a"]
    frames: list[str] = []
    posted: dict[str, Any] = {}

    with chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(15_000)

        def history_after_a_post(route: Any) -> None:
            answer = route.fetch()  # the history as it is before the message
            posted.update(emu.client.post_message(channel, "posted while loading", bot=True))
            deadline = time.monotonic() + 10
            while not any(posted["id"] in f for f in frames) and time.monotonic() < deadline:
                page.wait_for_timeout(20)  # the page has the event before it gets the answer
            route.fulfill(response=answer)

        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
        page.route(f"**/api/channels/{channel}/messages", history_after_a_post, times=1)
        page.goto(f"{base}/#token={TOKEN}")
        page.locator("#status.online").wait_for()
        page.wait_for_function("() => document.querySelectorAll('.message').length > 0")
        assert any(posted["id"] in f for f in frames), "the gateway never sent the message"
        page.locator(f"#m-{posted['id']}", has_text="posted while loading").wait_for()


LINK = 'class="link" href="{0}" title="{0}" target="_blank" rel="noopener noreferrer"'
# What a message's text becomes on the page, as Discord renders it (the HTML of its content).
MARKDOWN = [
    # the bridge's permission prompt: bold around inline code (docs/try.png showed it raw)
    (
        "🔐 **Claude wants to use `Bash`**",
        "🔐 <strong>Claude wants to use <code>Bash</code></strong>",
    ),
    (
        "***both*** __*under italic*__",
        "<strong><em>both</em></strong> <u><em>under italic</em></u>",
    ),
    (
        "~~gone~~ ||secret|| _it_ *it*",
        '<s>gone</s> <span class="spoiler">secret</span> <em>it</em> <em>it</em>',
    ),
    ("snake_case_name stays, \\*so do these\\*", "snake_case_name stays, *so do these*"),
    ("`**not bold**` and ``a`b``", "<code>**not bold**</code> and <code>a`b</code>"),
    (
        "<b>not html</b> & <img src=x onerror=alert(1)>",
        "&lt;b&gt;not html&lt;/b&gt; &amp; &lt;img src=x onerror=alert(1)&gt;",
    ),
    ("```py\nprint('<hi>')\n```\nafter", "<pre><code>print('&lt;hi&gt;')</code></pre>after"),
    (
        "# Title\n## Sub\n-# small print\ntext",
        '<h1>Title</h1><h2>Sub</h2><div class="subtext">small print</div>text',
    ),
    ("#not a header", "#not a header"),
    (
        "- one\n- two **b**\n  - nested",
        "<ul><li>one</li><li>two <strong>b</strong><ul><li>nested</li></ul></li></ul>",
    ),
    (
        "3. third\n4. fourth\n- other",
        '<ol start="3"><li>third</li><li>fourth</li></ol><ul><li>other</li></ul>',
    ),
    (
        "> quoted **bold**\n> more\nafter",
        "<blockquote>quoted <strong>bold</strong>\nmore</blockquote>after",
    ),
    (">>> all\n# of\nthis", "<blockquote>all<h1>of</h1>this</blockquote>"),
    (
        "[the docs](https://example.com/a?b=1&c=2)",
        f"<a {LINK.format('https://example.com/a?b=1&amp;c=2')}>the docs</a>",
    ),
    (
        "[evil](javascript:alert(1)) [data](data:text/html,x)",
        "[evil](javascript:alert(1)) [data](data:text/html,x)",
    ),
    (
        "see https://example.com/x. or <https://example.com/y>",
        f"see <a {LINK.format('https://example.com/x')}>https://example.com/x</a>. or "
        f"<a {LINK.format('https://example.com/y')}>https://example.com/y</a>",
    ),
]


def test_markdown_renders_as_discord_does_and_html_stays_text(web) -> None:
    """Each message is posted to the channel and read back from the page: formatting as
    Discord's client does it, and nothing of a message ever becomes markup of its own."""
    emu, base = web
    channel = emu.ids["project-a"]
    with chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(15_000)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(f"{base}/#token={TOKEN}")
        page.locator("#status.online").wait_for()
        posted = [emu.client.post_message(channel, text, bot=True) for text, _ in MARKDOWN]
        shown = []
        for msg in posted:
            content = page.locator(f"#m-{msg['id']} .content")
            content.wait_for()
            shown.append(content.inner_html())
        mention = emu.client.post_message(channel, f"hi <@{emu.ids['alice']}>", bot=True)
        pill = page.locator(f"#m-{mention['id']} .content .mention")
        assert pill.inner_text().startswith("@") and emu.ids["alice"] not in pill.inner_text()
    assert dialogs == []
    for (text, expected), got in zip(MARKDOWN, shown, strict=True):
        assert got == expected, f"{text!r}:\n  page:     {got}\n  expected: {expected}"


def test_timestamps_show_in_the_style_they_ask_for(web) -> None:
    """``<t:…:t>`` is a short time, ``:R`` a relative one (the usage-limit message's "resumes
    at 5:19 PM (in 1 hour)"), each style as Discord's client shows it, in the reader's zone."""
    emu, base = web
    at = 1_700_000_000  # Tuesday 14 November 2023, 22:13:20 UTC
    soon = int(time.time()) + 2 * 3600 + 60
    styles = {
        f"<t:{at}:t>": "10:13 PM",
        f"<t:{at}:T>": "10:13:20 PM",
        f"<t:{at}:d>": "11/14/23",
        f"<t:{at}:D>": "November 14, 2023",
        f"<t:{at}>": "November 14, 2023 at 10:13 PM",
        f"<t:{at}:F>": "Tuesday, November 14, 2023 at 10:13 PM",
        f"<t:{soon}:R>": "in 2 hours",
        "<t:9999999999999>": "<t:9999999999999>",  # past what a Date holds: left as text
    }
    with chromium() as browser:
        page = browser.new_page(locale="en-US", timezone_id="UTC")
        page.set_default_timeout(15_000)
        page.goto(f"{base}/#token={TOKEN}")
        page.locator("#status.online").wait_for()
        msg = emu.client.post_message(emu.ids["project-a"], " | ".join(styles), bot=True)
        content = page.locator(f"#m-{msg['id']} .content")
        content.wait_for()
        shown = content.inner_text().replace("\u202f", " ")  # ICU's narrow space before PM
        hover = page.locator(f"#m-{msg['id']} .timestamp").first.get_attribute("title")
    assert shown.split(" | ") == list(styles.values()), shown
    assert hover.replace("\u202f", " ") == "Tuesday, November 14, 2023 at 10:13 PM"
