"""The web client: a small Discord-like page for one user of the emulator.

Served on its own address (``Emulator.serve_web``), separate from the bot's REST/gateway port
and the control API. What it offers is what a Discord client offers its user, acting as that
one user: read channels and threads, post messages with files, start and archive threads,
click buttons, pick in selects, submit modals, run slash commands, react to messages. It
follows the gateway like a client (``/gateway``, IDENTIFY with a user token), so it sees what
the bot posts as it happens; ephemeral messages reach it there too, and only it.

The page itself (``/``, its script and style sheet) is static and holds no secret. What it
reads and does needs the access token: the address ``try`` prints carries it in its fragment
(``/#token=…``, never sent over HTTP), the page moves it into ``sessionStorage`` (this tab, this
origin only) and sends it as ``Authorization: Bearer …`` with every request of its API; the
gateway websocket must come from the page's own origin and its first frame (IDENTIFY) carries
the user token the API handed out. No cookie is ever set: a browser sends a host's cookies to
every port of it, so any other local web service the owner visits would receive one.
Attachments download (never render as a page of this origin), except plain images and audio,
and only with the key their URL carries (as Discord's CDN signs its links).
"""

from __future__ import annotations

import copy
import hmac
import mimetypes
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from . import control, reactions
from . import messages as m
from .responses import STATE_KEY, json_response, read_json
from .state import State
from .validation import ApiError

WEB_DIR = Path(__file__).parent / "web"
# The page's files beside index.html (which loads them).
WEB_FILES = ("client.js", "markdown.js", "composer.js", "welcome.js", "threads.js", "client.css")
INLINE_IMAGES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
# Played in an <audio> element (a voice message); like an image, never a page of this origin.
INLINE_AUDIO = {"audio/ogg", "audio/mpeg", "audio/wav", "audio/x-wav", "audio/webm"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "media-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)


@dataclass
class WebUser:
    user: dict[str, Any]
    gateway_token: str
    access_token: str
    home_channel: str | None
    others: list[dict[str, Any]]  # users the page may also act as (its switcher)


USER_KEY = web.AppKey("web_user", WebUser)


def make_app(
    st: State,
    access_token: str,
    user_ref: str,
    home_channel: str | None = None,
    also_as: tuple[str, ...] = (),
) -> web.Application:
    """The web client's app, acting as ``user_ref`` (a seeded name or a user id), or as one of
    ``also_as`` when the page's switcher picks one; ``home_channel``: the channel the page
    opens on."""
    user = st.user(user_ref)
    gateway_token = "user." + secrets.token_urlsafe(32)
    st.user_tokens[gateway_token] = user
    app = web.Application(middlewares=[_guard], client_max_size=64 * 1024 * 1024)
    app[STATE_KEY] = st
    others = [st.user(ref) for ref in also_as]
    app[USER_KEY] = WebUser(user, gateway_token, access_token, home_channel, others)
    r = app.router
    r.add_get("/", page)
    for name in WEB_FILES:
        r.add_get("/" + name, static_file)
    r.add_get("/gateway", gateway)
    r.add_get("/api/session", session)
    r.add_get("/api/channels/{channel_id}/messages", channel_messages)
    r.add_get("/api/channels/{channel_id}/threads/archived", archived_threads)
    r.add_get("/api/commands", commands)
    r.add_post("/api/messages", post_message)
    r.add_post("/api/threads", start_thread)
    r.add_post("/api/threads/{thread_id}/archive", archive_thread)
    r.add_post("/api/interactions", interaction)
    r.add_post("/api/reactions", react)
    r.add_get("/attachments/{channel_id}/{attachment_id}/{filename}", attachment)
    return app


PUBLIC = ("/", *("/" + name for name in WEB_FILES))


def _same(given: str | None, want: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), want.encode())


@web.middleware
async def _guard(request: web.Request, handler: Any) -> web.StreamResponse:
    """The API needs the token in its header (a cross-site page can neither know it nor, with
    that header, send a request without the browser asking this server first, which never
    agrees); the gateway, the page's origin; an attachment, its key."""
    token = request.app[USER_KEY].access_token
    path = request.path
    if path.startswith("/api/"):
        if not _same(request.headers.get("Authorization"), f"Bearer {token}"):
            return json_response({"message": "401: Unauthorized", "code": 0}, 401)
    elif path == "/gateway":
        if not _same_origin(request):
            return json_response({"message": "403: Forbidden (origin)", "code": 0}, 403)
    elif path not in PUBLIC and not path.startswith("/attachments/"):
        raise web.HTTPNotFound()
    try:
        response = await handler(request)
    except ApiError as err:
        return json_response(err.body(), err.status)
    except (KeyError, ValueError, TypeError) as err:
        return json_response({"message": f"400: Bad Request ({err})", "code": 0}, 400)
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def _same_origin(request: web.Request) -> bool:
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # not a browser page (a browser always sends Origin on websockets)
    return origin.split("://", 1)[-1] == request.host


# ----- the page ----------------------------------------------------------------------------


async def page(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(WEB_DIR / "index.html", headers={"Content-Type": "text/html"})


async def static_file(request: web.Request) -> web.StreamResponse:
    name = request.path.lstrip("/")
    ctype = "text/javascript" if name.endswith(".js") else "text/css"
    return web.FileResponse(WEB_DIR / name, headers={"Content-Type": ctype})


async def gateway(request: web.Request) -> web.StreamResponse:
    return await request.app[STATE_KEY].gateway.handle(request)


def _st(request: web.Request) -> State:
    return request.app[STATE_KEY]


async def session(request: web.Request) -> web.Response:
    st, web_user = _st(request), request.app[USER_KEY]
    return json_response(
        {
            "user": web_user.user,
            "gateway_token": web_user.gateway_token,
            "guild": {"id": st.guild["id"], "name": st.guild["name"]},
            "bot_id": st.ids["bot_id"],
            "home_channel": web_user.home_channel,
            "also_as": [
                {**other, "roles": st.member_roles.get(other["id"], [])}
                for other in web_user.others
            ],
            "roles": {r["id"]: r["name"] for r in st.guild["roles"]},
        }
    )


def _visible(msg: dict[str, Any]) -> bool:
    return not msg["flags"] & m.EPHEMERAL  # ephemeral ones are shown as they arrive only


async def channel_messages(request: web.Request) -> web.Response:
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    reader = request.app[USER_KEY].user["id"]
    msgs = [
        copy.deepcopy(reactions.with_reactions(st, msg, reader))
        for msg in st.messages.get(channel["id"], [])
        if _visible(msg)
    ]
    return json_response(msgs[-200:])


async def archived_threads(request: web.Request) -> web.Response:
    """A channel's archived threads, newest archive first (Discord's client lists them apart:
    its gateway sends active threads only)."""
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    found = [
        copy.deepcopy(c)
        for c in st.channels.values()
        if c.get("parent_id") == channel["id"] and (c.get("thread_metadata") or {}).get("archived")
    ]
    found.sort(key=lambda c: c["thread_metadata"].get("archive_timestamp") or "", reverse=True)
    return json_response({"threads": found})


async def commands(request: web.Request) -> web.Response:
    """The slash commands a user can pick: every bot's, guild and global."""
    st = _st(request)
    out = []
    for app_id, scopes in st.app_commands.items():
        for scope in (st.ids["guild_id"], "global"):
            out += [{**cmd, "application_id": app_id} for cmd in scopes.get(scope, [])]
    return json_response(out)


def _as_user(request: web.Request, body: dict[str, Any]) -> dict[str, Any]:
    """The request's body, acting as the page's user or the one its switcher picked
    (``X-Act-As``: only one of ``also_as``; never as a bot, never crafted)."""
    web_user = request.app[USER_KEY]
    body = {k: v for k, v in body.items() if k not in ("user", "bot", "crafted")}
    chosen = request.headers.get("X-Act-As")
    others = [other["id"] for other in web_user.others]
    body["user"] = chosen if chosen in others else web_user.user["id"]
    return body


async def post_message(request: web.Request) -> web.Response:
    body = _as_user(request, await read_json(request))
    body.pop("reply_to", None)
    return json_response(control.user_post(_st(request), body))


async def start_thread(request: web.Request) -> web.Response:
    body = _as_user(request, await read_json(request))
    return json_response(control.user_thread(_st(request), body))


async def archive_thread(request: web.Request) -> web.Response:
    """Archive the thread (``{"archived": false}``: reopen it), as the user."""
    st = _st(request)
    body = _as_user(request, await read_json(request))
    thread = m.get_channel(st, request.match_info["thread_id"])
    update = {"archived": bool(body.get("archived", True)), "user": body["user"]}
    return json_response(control.user_thread_update(st, thread, update))


async def interaction(request: web.Request) -> web.Response:
    """``kind``: click (message_id, custom_id), select (… values), modal (interaction_id,
    custom_id, values), command (channel_id, name, options, application_id), autocomplete
    (a command's, with ``focused``: the option being typed; the answer has ``choices``)."""
    st = _st(request)
    body = _as_user(request, await read_json(request))
    kind = body.pop("kind", None)
    focused = body.pop("focused", None)
    body.pop("autocomplete", None)
    if kind == "autocomplete" and isinstance(focused, str) and focused:
        result = await control.user_command(st, {**body, "autocomplete": focused})
    elif kind in ("click", "select"):
        result = await control.user_component(st, body, select=kind == "select")
    elif kind == "modal":
        result = await control.user_modal(st, body)
    elif kind == "command":
        result = await control.user_command(st, body)
    else:
        raise ApiError(400, 50035, f"unknown interaction kind {kind!r}")
    result.pop("token", None)  # the interaction token is the bot's credential, not the user's
    return json_response(result)


async def react(request: web.Request) -> web.Response:
    """Add (``remove``: take back) the user's reaction ``emoji`` on a message it can see."""
    st = _st(request)
    body = _as_user(request, await read_json(request))
    msg = m.get_message(st, str(body["channel_id"]), str(body["message_id"]))
    emoji = str(body["emoji"])
    if not _visible(msg) or not 1 <= len(emoji) <= 32:
        raise ApiError(400, 50035, "Invalid Form Body")
    changed = reactions.react(st, msg, emoji, body["user"], not body.get("remove"))
    return json_response({"changed": changed})


async def attachment(request: web.Request) -> web.StreamResponse:
    """A file of a message, with the key its URL carries (the page links it so: an ``<img>``
    or a download link sends no header)."""
    st = _st(request)
    att_id = request.match_info["attachment_id"]
    data, key = st.files.get(att_id), st.file_keys.get(att_id)
    if data is None or key is None or not _same(request.query.get("hm"), key):
        raise web.HTTPNotFound()
    filename = request.match_info["filename"]
    ctype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    headers = {"Content-Security-Policy": "sandbox; default-src 'none'"}
    if ctype not in INLINE_IMAGES | INLINE_AUDIO:
        ctype = "application/octet-stream"  # never a page (HTML, SVG…) of this origin
        headers["Content-Disposition"] = "attachment"
    return web.Response(body=data, content_type=ctype, headers=headers)
