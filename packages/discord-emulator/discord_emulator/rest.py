"""REST v10 routes the bot and the hook scripts call (identity, guild, channels, messages)."""

from __future__ import annotations

import bisect
import copy
import hmac
from typing import Any

from aiohttp import web

from . import messages as m
from . import payloads as p
from . import reactions
from .gateway import guild_payload
from .guild_channels import check_delete, create_guild_channel
from .responses import BOT_KEY, STATE_KEY, defer, json_response, no_content, read_json
from .state import State
from .validation import ApiError, FormErrors, unknown, validate_command


def _st(request: web.Request) -> State:
    return request.app[STATE_KEY]


# ----- identity ----------------------------------------------------------------------------


def _bot(request: web.Request) -> dict[str, Any]:
    """The bot user whose token made the request (the first bot for token routes)."""
    return request.get(BOT_KEY) or _st(request).bot_user


async def get_me(request: web.Request) -> web.Response:
    return json_response({**_bot(request), "verified": True, "mfa_enabled": False})


def _application(st: State, bot: dict[str, Any] | None = None) -> dict[str, Any]:
    # discord.py reads these fields at login (pitfall 7); app id == bot user id.
    bot = bot or st.bot_user
    return {
        "id": bot["id"],
        "name": bot["username"],
        "description": "",
        "icon": None,
        "bot_public": False,
        "bot_require_code_grant": False,
        "verify_key": "0" * 64,
        "owner": st.users[st.ids["alice"]],
        "flags": 0,
        "team": None,
        "bot": bot,
        "summary": "",
        "rpc_origins": [],
    }


async def get_application(request: web.Request) -> web.Response:
    return json_response(_application(_st(request), _bot(request)))


async def get_gateway(request: web.Request) -> web.Response:
    url = _st(request).base_url.replace("http", "ws", 1) + "/gateway"
    body: dict[str, Any] = {"url": url}
    if request.path.endswith("/bot"):
        limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
        body.update(shards=1, session_start_limit=limit)
    return json_response(body)


async def get_user(request: web.Request) -> web.Response:
    st = _st(request)
    user = st.users.get(request.match_info["user_id"])
    if user is None:
        raise unknown("user")
    return json_response(user)


async def my_guilds(request: web.Request) -> web.Response:
    st = _st(request)
    g = st.guild
    return json_response(
        [
            {
                "id": g["id"],
                "name": g["name"],
                "icon": None,
                "owner": False,
                "permissions": p.ALL_PERMISSIONS,
                "features": [],
            }
        ]
    )


async def create_dm(request: web.Request) -> web.Response:
    st = _st(request)
    body = await read_json(request)
    user = st.users.get(str(body.get("recipient_id")))
    if user is None:
        raise unknown("user")
    cid = f"{int(user['id']) + 1}"  # stable per user, never a seeded id
    if cid not in st.channels:
        st.add_channel(
            {"id": cid, "type": 1, "recipients": [user], "last_message_id": None, "flags": 0}
        )
    return json_response(st.channels[cid])


# ----- guild -------------------------------------------------------------------------------


def _guild(request: web.Request) -> State:
    st = _st(request)
    if request.match_info["guild_id"] != st.ids["guild_id"]:
        raise ApiError(404, 10004, "Unknown Guild")
    return st


async def get_guild(request: web.Request) -> web.Response:
    st = _guild(request)
    body = {
        k: v for k, v in guild_payload(st).items() if k not in ("members", "channels", "threads")
    }
    return json_response({**body, "approximate_member_count": len(st.members())})


async def guild_channels(request: web.Request) -> web.Response:
    return json_response(_guild(request).guild_channels())


async def guild_roles(request: web.Request) -> web.Response:
    return json_response(_guild(request).guild["roles"])


async def guild_members(request: web.Request) -> web.Response:
    return json_response(_guild(request).members())


async def guild_member(request: web.Request) -> web.Response:
    st = _guild(request)
    user = st.users.get(request.match_info["user_id"])
    if user is None:
        raise ApiError(404, 10007, "Unknown Member")
    return json_response(st.member(user))


async def active_threads(request: web.Request) -> web.Response:
    st = _guild(request)
    return json_response({"threads": st.active_threads(), "members": []})


# ----- channels ----------------------------------------------------------------------------


async def get_channel(request: web.Request) -> web.Response:
    return json_response(m.get_channel(_st(request), request.match_info["channel_id"]))


async def patch_channel(request: web.Request) -> web.Response:
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    body = await read_json(request)
    meta = channel.get("thread_metadata")
    for key in ("name", "topic", "rate_limit_per_user"):
        if key in body:
            channel[key] = body[key]
    if meta is not None:
        changes = thread_changes(meta, body)
        for key in ("archived", "locked", "auto_archive_duration"):
            if key in body:
                meta[key] = body[key]
        if "archived" in body:
            meta["archive_timestamp"] = p.iso_now()
        if changes:
            st.audit(_bot(request)["id"], p.AUDIT_THREAD_UPDATE, channel["id"], changes)
    snapshot = copy.deepcopy(channel)
    kind = "thread_update" if meta is not None else "channel_update"
    defer(request, lambda: _announce_channel(st, kind, snapshot, "rest"))
    return json_response(channel)


def thread_changes(meta: dict[str, Any], body: dict[str, Any]) -> list[dict[str, Any]]:
    """The audit-log ``changes`` of a thread update (archived / locked, as Discord logs)."""
    return [
        {"key": key, "old_value": meta[key], "new_value": bool(body[key])}
        for key in ("archived", "locked")
        if key in body and bool(body[key]) != meta[key]
    ]


async def audit_logs(request: web.Request) -> web.Response:
    """``GET /guilds/{id}/audit-logs``: newest first; ``action_type``, ``user_id``, ``before``,
    ``limit`` (1-100) as Discord takes them. Without View Audit Log: 403 / 50013."""
    st = _guild(request)
    if not st.audit_log_access:
        raise ApiError(403, 50013, "Missing Permissions")
    query = request.query
    limit = max(1, min(100, int(query.get("limit") or 50)))
    entries = [
        e
        for e in reversed(st.audit_log)
        if ("action_type" not in query or str(e["action_type"]) == query["action_type"])
        and ("user_id" not in query or e["user_id"] == query["user_id"])
        and ("before" not in query or int(e["id"]) < int(query["before"]))
    ][:limit]
    users = [st.user(uid) for uid in dict.fromkeys(e["user_id"] for e in entries)]
    threads = [st.channels[e["target_id"]] for e in entries if e["target_id"] in st.channels]
    return json_response(
        {
            "audit_log_entries": entries,
            "users": users,
            "threads": threads,
            "integrations": [],
            "webhooks": [],
            "guild_scheduled_events": [],
            "application_commands": [],
            "auto_moderation_rules": [],
        }
    )


def _announce_channel(st: State, kind: str, channel: dict[str, Any], source: str) -> None:
    st.gateway.dispatch(kind.upper(), channel)
    st.record(kind, channel_id=channel["id"], thread=channel, source=source)


async def delete_channel(request: web.Request) -> web.Response:
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    check_delete(st, channel)
    st.channels.pop(channel["id"])
    is_thread = channel["type"] in p.THREAD_TYPES
    kind = "thread_delete" if is_thread else "channel_delete"
    data = (
        channel
        if not is_thread
        else {k: channel[k] for k in ("id", "guild_id", "parent_id", "type")}
    )
    defer(request, lambda: _announce_channel(st, kind, data, "rest"))
    return json_response(channel)


async def typing(request: web.Request) -> web.Response:
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    defer(request, lambda: st.record("typing", channel_id=channel["id"]))
    return no_content()


# ----- messages ----------------------------------------------------------------------------


def _channel_message(request: web.Request) -> dict[str, Any]:
    """The message of a channel route. An ephemeral one does not exist there: only its
    interaction's token reaches it (``/webhooks/…``), as on Discord."""
    mi = request.match_info
    msg = m.get_message(_st(request), mi["channel_id"], mi["message_id"])
    if msg["flags"] & m.EPHEMERAL:
        raise unknown("message")
    return msg


async def list_messages(request: web.Request) -> web.Response:
    """``GET /channels/{id}/messages``: ``around``, ``before`` or ``after`` a message id (one of
    them; with none, the newest), ``limit`` 1–100 (default 50), always newest first, as
    Discord: ``after=X`` gives the ``limit`` messages right after X, not the newest ones, and
    a client pages on from the first (newest) of them (discord.py's ``history``)."""
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    listed = [x for x in st.messages.get(channel["id"], []) if not x["flags"] & m.EPHEMERAL]
    q = request.query
    limit, anchors = _history_query(q)
    oldest_first = sorted(listed, key=lambda x: int(x["id"]))
    page = history_page(oldest_first, limit, **anchors)
    reader = _bot(request)["id"]
    return json_response([reactions.with_reactions(st, x, reader) for x in page])


def _history_query(q: Any) -> tuple[int, dict[str, int]]:
    """The query's ``limit`` and its anchor (Discord reads one: ``around``, else ``before``,
    else ``after``), refused as Discord refuses a bad one: 400, 50035, naming the field."""
    errs = FormErrors()
    limit = 50
    if "limit" in q:
        try:
            limit = int(q["limit"])
        except ValueError:
            errs.add(("limit",), "NUMBER_TYPE_COERCE", f'Value "{q["limit"]}" is not int.')
        else:
            if not 1 <= limit <= 100:
                errs.add(
                    ("limit",),
                    "NUMBER_TYPE_MAX" if limit > 100 else "NUMBER_TYPE_MIN",
                    "int value should be between 1 and 100.",
                )
    anchors: dict[str, int] = {}
    for name in ("around", "before", "after"):
        if name in q:
            if q[name].isascii() and q[name].isdigit():
                anchors[name] = int(q[name])
            else:
                errs.add((name,), "NUMBER_TYPE_COERCE", f'Value "{q[name]}" is not snowflake.')
    errs.raise_if_any()
    for name in ("around", "before", "after"):  # the first one given wins
        if name in anchors:
            return limit, {name: anchors[name]}
    return limit, {}


def history_page(
    oldest_first: list[dict[str, Any]],
    limit: int,
    around: int | None = None,
    before: int | None = None,
    after: int | None = None,
) -> list[dict[str, Any]]:
    """One page of a channel's history (its messages given oldest first), newest first."""
    ids = [int(x["id"]) for x in oldest_first]
    if around is not None:  # the message itself (if any) in the middle, half on each side
        start = max(0, bisect.bisect_left(ids, around) - limit // 2)
        page = oldest_first[start : start + limit]
    elif before is not None:
        end = bisect.bisect_left(ids, before)
        page = oldest_first[max(0, end - limit) : end]
    elif after is not None:
        start = bisect.bisect_right(ids, after)
        page = oldest_first[start : start + limit]
    else:
        page = oldest_first[-limit:]
    return list(reversed(page))


async def post_message(request: web.Request) -> web.Response:
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    body, uploads = await m.read_body(request)
    author = _bot(request)
    original = m.nonce_hit(st, channel["id"], author["id"], body)
    if original is not None:
        # enforce_nonce resend: answer with the original, create nothing (exactly-once).
        st.counters["nonce_dedup"] += 1
        return json_response(original)
    msg = m.create_message(st, channel, author, body, uploads)
    extra = {
        "source": "rest",
        "allowed_mentions": body.get("allowed_mentions"),
        "nonce": body.get("nonce"),
    }
    snapshot = copy.deepcopy(msg)
    defer(request, lambda: m.announce(st, snapshot, **extra))
    return json_response(msg)


async def get_message(request: web.Request) -> web.Response:
    msg = _channel_message(request)
    return json_response(reactions.with_reactions(_st(request), msg, _bot(request)["id"]))


async def patch_message(request: web.Request) -> web.Response:
    st = _st(request)
    msg = _channel_message(request)
    if msg["author"]["id"] != _bot(request)["id"]:
        raise ApiError(403, 50005, "Cannot edit a message authored by another user")
    body, uploads = await m.read_body(request)
    m.edit_message(st, msg, body, uploads)
    snapshot = copy.deepcopy(msg)
    extra = {"source": "rest", "allowed_mentions": body.get("allowed_mentions")}
    defer(request, lambda: m.announce(st, snapshot, "message_update", **extra))
    return json_response(msg)


async def delete_message(request: web.Request) -> web.Response:
    st = _st(request)
    msg = _channel_message(request)
    if msg["author"]["id"] != _bot(request)["id"] and not st.manage_messages:
        raise ApiError(403, 50013, "Missing Permissions")  # someone else's: a moderator's right
    defer(request, lambda: m.delete_message(st, msg, "rest"))
    st.message_index.pop(msg["id"], None)
    return no_content()


# ----- threads -----------------------------------------------------------------------------


def start_thread(
    st: State,
    parent: dict[str, Any],
    owner_id: str,
    body: dict[str, Any],
    thread_id: str | None = None,
) -> dict[str, Any]:
    if parent["type"] not in (0, 5, 15):
        raise ApiError(400, 50024, "Cannot execute action on this channel type")
    errs = FormErrors()
    errs.len_range(("name",), body.get("name"), 1, 100)
    errs.raise_if_any()
    kind = int(body.get("type") or 11)
    thread = p.thread_obj(
        thread_id or st.flakes.next(),
        body["name"],
        parent,
        owner_id,
        kind,
        int(body.get("auto_archive_duration") or 1440),
    )
    st.add_channel(thread)
    return thread


def announce_thread(st: State, thread: dict[str, Any], source: str) -> None:
    st.gateway.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
    st.record(
        "thread_create",
        channel_id=thread["parent_id"],
        thread_id=thread["id"],
        thread=thread,
        source=source,
    )


async def thread_from_message(request: web.Request) -> web.Response:
    st = _st(request)
    mi = request.match_info
    parent = m.get_channel(st, mi["channel_id"])
    msg = _channel_message(request)
    if msg["id"] in st.channels:
        raise ApiError(400, 160004, "A thread has already been created for this message")
    # A thread started from a message takes the message's id.
    thread = start_thread(st, parent, _bot(request)["id"], await read_json(request), msg["id"])
    msg["thread"] = thread
    defer(request, lambda: announce_thread(st, thread, "rest"))
    return json_response(thread, 201)


async def thread_without_message(request: web.Request) -> web.Response:
    st = _st(request)
    parent = m.get_channel(st, request.match_info["channel_id"])
    thread = start_thread(st, parent, _bot(request)["id"], await read_json(request))
    defer(request, lambda: announce_thread(st, thread, "rest"))
    return json_response(thread, 201)


async def thread_member(request: web.Request) -> web.Response:
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    kind = "thread_join" if request.method == "PUT" else "thread_leave"
    defer(request, lambda: st.record(kind, thread_id=channel["id"], channel_id=channel["id"]))
    return no_content()


# ----- application commands ----------------------------------------------------------------


def _scope(request: web.Request) -> tuple[str, str]:
    """(application id, scope) of a command route. Each bot registers only its own
    application's commands: another application's id is 403, an unknown one 404."""
    st = _st(request)
    app_id = request.match_info["application_id"]
    if not st.is_bot(app_id):
        raise ApiError(404, 10002, "Unknown Application")
    if app_id != _bot(request)["id"]:
        raise ApiError(403, 50001, "Missing Access")
    return app_id, request.match_info.get("guild_id", "global")


def _command(st: State, app_id: str, scope: str, cmd: dict[str, Any]) -> dict[str, Any]:
    out = {
        "type": 1,
        "description": "",
        "options": [],
        "default_member_permissions": None,
        "nsfw": False,
        **cmd,
    }
    out.update(
        id=cmd.get("id") or st.flakes.next(),
        application_id=app_id,
        version=st.flakes.next(),
    )
    if scope != "global":
        out["guild_id"] = scope
    return out


async def get_commands(request: web.Request) -> web.Response:
    app_id, scope = _scope(request)
    return json_response(_st(request).app_commands.get(app_id, {}).get(scope, []))


async def put_commands(request: web.Request) -> web.Response:
    st, (app_id, scope) = _st(request), _scope(request)
    body = await read_json(request, array=True)
    errs = FormErrors()
    for i, cmd in enumerate(body):
        validate_command(errs, i, cmd)
    errs.raise_if_any()
    scopes = st.app_commands.setdefault(app_id, {})
    scopes[scope] = [_command(st, app_id, scope, c) for c in body]
    cmds = scopes[scope]
    defer(
        request,
        lambda: st.record("commands_update", scope=scope, application_id=app_id, commands=cmds),
    )
    return json_response(cmds)


async def post_command(request: web.Request) -> web.Response:
    st, (app_id, scope) = _st(request), _scope(request)
    body = await read_json(request)
    errs = FormErrors()
    validate_command(errs, 0, body)
    errs.raise_if_any()
    scopes = st.app_commands.setdefault(app_id, {})
    cmds = [c for c in scopes.get(scope, []) if c["name"] != body.get("name")]
    cmd = _command(st, app_id, scope, body)
    scopes[scope] = [*cmds, cmd]
    defer(
        request,
        lambda: st.record(
            "commands_update", scope=scope, application_id=app_id, commands=scopes[scope]
        ),
    )
    return json_response(cmd, 201)


# ----- attachments (served without auth, like the CDN) -------------------------------------


async def get_attachment(request: web.Request) -> web.Response:
    st = _st(request)
    att_id = request.match_info["attachment_id"]
    data = st.files.get(att_id)
    key = request.query.get("hm", "").encode()
    if data is None or not hmac.compare_digest(key, st.file_keys.get(att_id, "").encode()):
        return web.Response(status=404, text="Not Found")  # a wrong key: as Discord's CDN
    return web.Response(body=data, content_type="application/octet-stream")


def add_routes(app: web.Application) -> None:
    base = "/api/v{version:\\d+}"
    ch = base + "/channels/{channel_id}"
    msg = ch + "/messages/{message_id}"
    guild = base + "/guilds/{guild_id}"
    app_cmds = base + "/applications/{application_id}"
    routes = [
        ("GET", base + "/users/@me", get_me),
        ("GET", base + "/users/@me/guilds", my_guilds),
        ("POST", base + "/users/@me/channels", create_dm),
        ("GET", base + "/users/{user_id}", get_user),
        ("GET", base + "/oauth2/applications/@me", get_application),
        ("GET", base + "/applications/@me", get_application),
        ("GET", base + "/gateway", get_gateway),
        ("GET", base + "/gateway/bot", get_gateway),
        ("GET", guild, get_guild),
        ("GET", guild + "/channels", guild_channels),
        ("POST", guild + "/channels", create_guild_channel),
        ("GET", guild + "/roles", guild_roles),
        ("GET", guild + "/members", guild_members),
        ("GET", guild + "/members/{user_id}", guild_member),
        ("GET", guild + "/threads/active", active_threads),
        ("GET", guild + "/audit-logs", audit_logs),
        ("GET", ch, get_channel),
        ("PATCH", ch, patch_channel),
        ("DELETE", ch, delete_channel),
        ("POST", ch + "/typing", typing),
        ("GET", ch + "/messages", list_messages),
        ("POST", ch + "/messages", post_message),
        ("GET", msg, get_message),
        ("PATCH", msg, patch_message),
        ("DELETE", msg, delete_message),
        *reactions.routes(msg),
        ("POST", msg + "/threads", thread_from_message),
        ("POST", ch + "/threads", thread_without_message),
        ("PUT", ch + "/thread-members/@me", thread_member),
        ("DELETE", ch + "/thread-members/@me", thread_member),
        ("GET", app_cmds + "/commands", get_commands),
        ("PUT", app_cmds + "/commands", put_commands),
        ("POST", app_cmds + "/commands", post_command),
        ("GET", app_cmds + "/guilds/{guild_id}/commands", get_commands),
        ("PUT", app_cmds + "/guilds/{guild_id}/commands", put_commands),
        ("POST", app_cmds + "/guilds/{guild_id}/commands", post_command),
        ("GET", "/attachments/{channel_id}/{attachment_id}/{filename:.*}", get_attachment),
    ]
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)
