"""The test control API under /_test (no auth): inject events, inspect records, steer failures."""

from __future__ import annotations

import asyncio
import base64
import copy
import time
from typing import Any

from aiohttp import web

from . import interactions as itx
from . import messages as m
from . import payloads as p
from . import reactions as reacting
from . import rest
from .responses import OUTAGE_KEY, STATE_KEY, json_response, read_json
from .state import Bucket, Forced429, InteractionState, State

CLICK_SETTLE = 0.05  # let discord.py register a View after reading its REST response


def _st(request: web.Request) -> State:
    return request.app[STATE_KEY]


def _bad(message: str, status: int = 400) -> web.HTTPException:
    return web.HTTPBadRequest(text=message) if status == 400 else web.HTTPNotFound(text=message)


async def info(request: web.Request) -> web.Response:
    st = _st(request)
    return json_response({"ids": st.ids, "token": st.token, "base_url": st.base_url})


async def mark(request: web.Request) -> web.Response:
    return json_response({"seq": _st(request).seq})


async def reset(request: web.Request) -> web.Response:
    await request.app[OUTAGE_KEY](None)  # reopen the main port if it was refusing
    _st(request).reset()
    return json_response({"ok": True})


# ----- records -----------------------------------------------------------------------------


async def records(request: web.Request) -> web.Response:
    st = _st(request)
    since = int(request.query.get("since") or 0)
    kind = request.query.get("kind")
    out = [r for r in st.records if r["seq"] > since and (kind is None or r["kind"] == kind)]
    return json_response(out)


def _summary(rec: dict[str, Any]) -> dict[str, Any]:
    msg = rec.get("message") or {}
    brief = {
        k: rec.get(k)
        for k in ("seq", "kind", "source", "channel_id", "message_id", "emoji", "response_type")
        if rec.get(k) is not None
    }
    if msg:
        brief["content"] = (msg.get("content") or "")[:80]
    return brief


async def wait(request: web.Request) -> web.Response:
    st = _st(request)
    body = await read_json(request)
    since = body.get("since")
    since = st.seq if since is None else int(since)
    kind, timeout = body.get("kind"), float(body.get("timeout", 5.0))
    filters = body.get("filters") or {}
    rec = await st.wait_record(since, kind, filters, timeout)
    if rec is not None:
        return json_response(rec)
    recent = [_summary(r) for r in st.records if r["seq"] > since][-15:]
    return json_response(
        {
            "error": f"no {kind} record after seq {since} matching {filters} within {timeout}s",
            "recent": recent,
        },
        408,
    )


# ----- inspection --------------------------------------------------------------------------


async def guild_channels(request: web.Request) -> web.Response:
    """Every channel and category of the guild now (threads not included)."""
    return json_response(_st(request).guild_channels())


async def channel_messages(request: web.Request) -> web.Response:
    st = _st(request)
    channel = m.get_channel(st, request.match_info["channel_id"])
    return json_response(st.messages.get(channel["id"], []))


async def reactions(request: web.Request) -> web.Response:
    """The emojis the bots reacted with on a message (``/users``: every emoji, with who)."""
    st = _st(request)
    found = reacting.users_of(st, request.match_info["message_id"])
    if request.path.endswith("/users"):
        return json_response(found)
    return json_response([e for e, users in found.items() if any(map(st.is_bot, users))])


async def counters(request: web.Request) -> web.Response:
    st = _st(request)
    if request.method == "DELETE":
        st.counters.clear()
    return json_response(dict(st.counters))


async def contract(request: web.Request) -> web.Response:
    """Request bodies checked against Discord's OpenAPI spec since the emulator started, and
    how many it refused, per operation (``reset`` leaves them)."""
    return json_response(_st(request).contract.summary())


async def commands(request: web.Request) -> web.Response:
    """One application's commands by scope (the first bot's unless ``?application_id=``)."""
    st = _st(request)
    app_id = request.query.get("application_id") or st.ids["bot_id"]
    return json_response(st.app_commands.get(app_id, {}))


# ----- failures ----------------------------------------------------------------------------


async def force_429(request: web.Request) -> web.Response:
    st = _st(request)
    body = await read_json(request)
    if body.get("clear"):
        st.forced.clear()
    else:
        st.forced[body.get("route", "*")] = Forced429(
            int(body.get("count", 1)),
            float(body.get("retry_after", 0.5)),
            bool(body.get("global", False)),
        )
    return json_response({"ok": True})


async def buckets(request: web.Request) -> web.Response:
    st = _st(request)
    body = await read_json(request)
    if body.get("clear"):
        st.buckets.clear()
    else:
        st.buckets[body["route"]] = Bucket(int(body["limit"]), float(body["window"]))
    return json_response({"ok": True})


async def outage(request: web.Request) -> web.Response:
    body = await read_json(request)
    await request.app[OUTAGE_KEY](body.get("mode"))
    return json_response({"ok": True, "mode": body.get("mode")})


async def settings(request: web.Request) -> web.Response:
    """Tune limits at runtime: max_file_size, interaction_deadline, privileged_intents,
    audit_log_access, manage_channels (the bot's Manage Channels permission),
    manage_messages (Manage Messages: deleting others' messages), rate_limits (Discord's
    global limit and per-resource buckets, off by default)."""
    st = _st(request)
    body = await read_json(request)
    keys = (
        "max_file_size",
        "interaction_deadline",
        "privileged_intents",
        "audit_log_access",
        "manage_channels",
        "manage_messages",
        "rate_limits",
    )
    for key in keys:
        if key in body:
            setattr(st, key, type(getattr(st, key))(body[key]))
    return json_response({"ok": True})


async def attach_files(request: web.Request) -> web.Response:
    """Deny or grant the bot Attach Files in a channel: {"channel_id": …, "deny": true}."""
    st = _st(request)
    body = await read_json(request)
    channel_id = str(body["channel_id"])
    if body.get("deny", True):
        st.no_attach_files.add(channel_id)
    else:
        st.no_attach_files.discard(channel_id)
    return json_response({"ok": True, "denied": sorted(st.no_attach_files)})


async def gateway(request: web.Request) -> web.Response:
    st = _st(request)
    body = await read_json(request)
    if body.get("action") == "dispatch":
        st.gateway.dispatch(body["t"], body["d"])
        return json_response({"ok": True})
    n = await st.gateway.control(body.get("action", "reconnect"), int(body.get("code", 4000)))
    return json_response({"ok": True, "sessions": n})


# ----- user actions ------------------------------------------------------------------------


def _author(st: State, body: dict[str, Any]) -> dict[str, Any]:
    user = st.user(str(body.get("user") or "alice"))
    if body.get("bot"):
        user = {**user, "bot": True}
    return user


async def post_message(request: web.Request) -> web.Response:
    return json_response(user_post(_st(request), await read_json(request)))


def user_post(st: State, body: dict[str, Any]) -> dict[str, Any]:
    """A user's message (``attachments``: filename, base64 data, content_type), announced."""
    channel = m.get_channel(st, str(body["channel_id"]))
    files = body.get("attachments") or []
    uploads, meta = [], []
    for i, f in enumerate(files):
        uploads.append(m.Upload(f["filename"], base64.b64decode(f["data"]), f.get("content_type")))
        # A voice message's attachment: duration_secs and waveform (flags IS_VOICE_MESSAGE).
        meta.append({"id": str(i), **{k: f[k] for k in m.VOICE_KEYS if k in f}})
    flags = int(body.get("flags") or 0)
    msg_body = {"content": body.get("content", ""), "flags": flags, "attachments": meta}
    if body.get("reply_to"):
        msg_body["message_reference"] = {"message_id": str(body["reply_to"])}
    msg = m.create_message(st, channel, _author(st, body), msg_body, uploads, validate=False)
    if body.get("age_seconds"):  # sent that long ago (a message the bot finds in the history)
        msg["timestamp"] = p.iso_ago(float(body["age_seconds"]))
    if body.get("type"):  # a system message in the user's name (18: "started a thread")
        msg["type"] = int(body["type"])
    if body.get("webhook_id"):  # posted through a channel webhook, under the user's name
        msg["webhook_id"] = str(body["webhook_id"])
    mentioned = [st.users[u] for u in st.users if f"<@{u}>" in msg["content"]]
    msg["mentions"] = mentioned
    m.announce(st, msg, "user_message", source="user")
    return msg


async def user_message_action(request: web.Request) -> web.Response:
    """The author edits (``PATCH``, ``{"content"}``) or deletes (``DELETE``) a user's
    message: MESSAGE_UPDATE or MESSAGE_DELETE, as Discord sends them."""
    st = _st(request)
    mi = request.match_info
    msg = m.get_message(st, mi["channel_id"], mi["message_id"])
    if request.method == "DELETE":
        m.delete_message(st, msg, "user")
        return json_response({"ok": True})
    body = await read_json(request)
    msg["content"] = str(body.get("content", ""))
    msg["edited_timestamp"] = p.iso_now()
    m.announce(st, msg, "message_update", source="user_edit")
    return json_response(msg)


async def react(request: web.Request) -> web.Response:
    st = _st(request)
    body = await read_json(request)
    msg = m.get_message(st, str(body["channel_id"]), str(body["message_id"]))
    user = st.user(str(body.get("user") or "alice"))
    changed = reacting.react(st, msg, str(body["emoji"]), user["id"], not body.get("remove"))
    return json_response({"ok": True, "changed": changed})


# ----- threads -----------------------------------------------------------------------------


async def create_channel(request: web.Request) -> web.Response:
    """A text channel in the guild's category, kept across resets (CHANNEL_CREATE to a bot
    already connected; one that connects later sees it in GUILD_CREATE)."""
    body = await read_json(request)
    return json_response(add_text_channel(_st(request), str(body["name"])))


def add_text_channel(st: State, name: str) -> dict[str, Any]:
    """A text channel in the guild's category, kept across resets."""
    category = st.ids["category_id"]
    position = len(st.base_channels)
    channel = p.channel_obj(st.flakes.next(), name, st.ids["guild_id"], category, position)
    st.base_channels[channel["id"]] = channel
    st.channels[channel["id"]] = dict(channel)
    st.messages[channel["id"]] = []
    if st.gateway is not None:
        st.gateway.dispatch("CHANNEL_CREATE", channel)
    return channel


async def create_thread(request: web.Request) -> web.Response:
    return json_response(user_thread(_st(request), await read_json(request)))


def user_thread(st: State, body: dict[str, Any]) -> dict[str, Any]:
    """A thread a user starts in ``channel_id`` (named ``name``), announced."""
    parent = m.get_channel(st, str(body["channel_id"]))
    user = st.user(str(body.get("user") or "alice"))
    thread = rest.start_thread(st, parent, user["id"], {"name": body["name"]})
    rest.announce_thread(st, thread, "user")
    return thread


async def thread_action(request: web.Request) -> web.Response:
    st = _st(request)
    thread = m.get_channel(st, request.match_info["thread_id"])
    if request.method == "DELETE":
        st.channels.pop(thread["id"])
        data = {k: thread[k] for k in ("id", "guild_id", "parent_id", "type")}
        st.gateway.dispatch("THREAD_DELETE", data)
        st.record(
            "thread_delete", thread_id=thread["id"], channel_id=thread["parent_id"], source="user"
        )
        return json_response(thread)
    return json_response(user_thread_update(st, thread, await read_json(request)))


def user_thread_update(st: State, thread: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """Archive (``archived``, default true) or lock a thread as ``user`` (null: Discord's own
    inactivity auto-archive, not in the audit log)."""
    if "thread_metadata" not in thread:
        raise _bad("not a thread")
    meta = thread["thread_metadata"]
    update = {"archived": bool(body.get("archived", True)), "locked": body.get("locked")}
    update["locked"] = meta["locked"] if update["locked"] is None else bool(update["locked"])
    # A user's archive is in the audit log; Discord's inactivity auto-archive (user: null)
    # is not. THREAD_UPDATE itself never says who archived.
    by = body.get("user", "alice")
    changes = rest.thread_changes(meta, update)
    meta.update(update)
    meta["archive_timestamp"] = p.iso_now()
    if by is not None and changes:
        st.audit(st.user(str(by))["id"], p.AUDIT_THREAD_UPDATE, thread["id"], changes)
    st.gateway.dispatch("THREAD_UPDATE", copy.deepcopy(thread))
    st.record(
        "thread_update",
        thread_id=thread["id"],
        channel_id=thread["parent_id"],
        thread=copy.deepcopy(thread),
        source="user",
    )
    return thread


# ----- interactions ------------------------------------------------------------------------


def _find_component(msg: dict[str, Any], custom_id: str) -> dict[str, Any] | None:
    stack = list(msg.get("components") or [])
    while stack:
        comp = stack.pop()
        if comp.get("custom_id") == custom_id:
            return comp
        stack.extend(comp.get("components") or [])
        if comp.get("component"):
            stack.append(comp["component"])
    return None


async def _settle_and_await(st: State, ist: InteractionState, timeout: float) -> dict[str, Any]:
    """Wait for the bot's callback; past the 3 s deadline the interaction counts as expired."""
    try:
        await asyncio.wait_for(ist.done.wait(), min(timeout, st.interaction_deadline + 0.05))
    except TimeoutError:
        if ist.response_type is None and not ist.expired:
            ist.expired = True
            st.record("interaction_expired", interaction_id=ist.id)
    return itx.interaction_result(st, ist)


async def _component_interaction(request: web.Request, select: bool) -> web.Response:
    return json_response(await user_component(_st(request), await read_json(request), select))


async def user_component(st: State, body: dict[str, Any], select: bool) -> dict[str, Any]:
    """A click on a button (or a pick in a select) of a message; the bot's answer."""
    msg = st.message_index.get(str(body["message_id"]))
    if msg is None:
        raise _bad("unknown message", 404)
    comp = _find_component(msg, body["custom_id"])
    ctype = comp.get("type", 3 if select else 2) if comp else (3 if select else 2)
    data: dict[str, Any] = {"custom_id": body["custom_id"], "component_type": ctype}
    if select:
        data["values"] = [str(v) for v in body.get("values") or []]
        if comp is not None and not body.get("crafted"):
            _offered(comp, data["values"])
    born = st.message_born.get(msg["id"], 0.0)
    await asyncio.sleep(max(0.0, born + CLICK_SETTLE - time.monotonic()))
    channel = m.get_channel(st, msg["channel_id"])
    ist = itx.create_interaction(st, itx.COMPONENT, _author(st, body), channel, data, msg)
    return await _settle_and_await(st, ist, float(body.get("timeout", 5.0)))


def _offered(comp: dict[str, Any], values: list[str]) -> None:
    """A user picks in a select only what it shows: the options of the page on screen (a
    bot that pages a long list edits the select's options), as many as it allows. A pick of
    anything else is a crafted client's (``crafted``), or a test's mistake."""
    if comp.get("type") == 3:
        shown = {str(o.get("value")) for o in comp.get("options") or []}
        missing = [v for v in values if v not in shown]
        if missing:
            raise _bad(
                f"the select {comp.get('custom_id')!r} does not show {missing} (it shows "
                f"{sorted(shown)}): pass crafted=True to send it anyway"
            )
    low, high = int(comp.get("min_values", 1)), int(comp.get("max_values", 1))
    if not low <= len(values) <= high:
        raise _bad(
            f"the select {comp.get('custom_id')!r} takes {low} to {high} values, not {len(values)}"
        )


async def click(request: web.Request) -> web.Response:
    return await _component_interaction(request, select=False)


async def select(request: web.Request) -> web.Response:
    return await _component_interaction(request, select=True)


def _mirror(layout: list[dict[str, Any]], values: dict[str, Any]) -> list[dict[str, Any]]:
    """Submitted components follow the modal's own layout: rows (type 1) or labels (type 18)."""

    def answer(comp: dict[str, Any]) -> dict[str, Any]:
        cid = comp.get("custom_id")
        if comp.get("type") == 4:
            return {"type": 4, "custom_id": cid, "value": str(values.get(cid, ""))}
        got = values.get(cid, [])
        return {
            "type": comp.get("type"),
            "custom_id": cid,
            "values": got if isinstance(got, list) else [got],
        }

    out = []
    for item in layout:
        if item.get("type") == 1:
            out.append({"type": 1, "components": [answer(c) for c in item["components"]]})
        elif item.get("type") == 18:
            out.append({"type": 18, "component": answer(item["component"])})
    return out


async def _crafted_modal_submit(st: State, body: dict[str, Any]) -> web.Response:
    """A MODAL_SUBMIT the bot never opened a modal for: any custom_id, on a given message,
    its text inputs (custom_id → value) in one row each. Only a crafted client sends this:
    a bot must refuse it cleanly and still answer it."""
    msg = st.message_index.get(str(body.get("message_id") or ""))
    if msg is None:
        raise _bad("unknown message", 404)
    values = body.get("values") or {}
    data = {
        "custom_id": str(body.get("custom_id") or ""),
        "components": [
            {"type": 1, "components": [{"type": 4, "custom_id": cid, "value": str(value)}]}
            for cid, value in values.items()
        ],
    }
    channel = m.get_channel(st, msg["channel_id"])
    ist = itx.create_interaction(st, itx.MODAL_SUBMIT, _author(st, body), channel, data, msg)
    ist.message_id = msg["id"]
    return json_response(await _settle_and_await(st, ist, float(body.get("timeout", 5.0))))


async def submit_modal(request: web.Request) -> web.Response:
    st = _st(request)
    body = await read_json(request)
    if body.get("crafted"):
        return await _crafted_modal_submit(st, body)
    return json_response(await user_modal(st, body))


async def user_modal(st: State, body: dict[str, Any]) -> dict[str, Any]:
    """Submit a modal the bot opened (by ``custom_id`` or ``interaction_id``; the last one
    opened otherwise) with ``values`` (custom_id → text or list of values)."""
    wanted = body.get("custom_id")
    found = [
        (ist, modal)
        for ist, modal in st.modals
        if (wanted is None and body.get("interaction_id") in (None, ist.id))
        or modal.get("custom_id") == wanted
        or ist.id == body.get("interaction_id")
    ]
    if not found:
        raise _bad(f"no modal with custom_id {wanted!r} was opened", 404)
    origin, modal = found[-1]
    data = {
        "custom_id": modal["custom_id"],
        "components": _mirror(modal.get("components") or [], body.get("values") or {}),
    }
    channel = m.get_channel(st, origin.channel_id)
    message = st.message_index.get(origin.message_id or "")
    ist = itx.create_interaction(st, itx.MODAL_SUBMIT, _author(st, body), channel, data, message)
    ist.message_id = origin.message_id
    return await _settle_and_await(st, ist, float(body.get("timeout", 5.0)))


def _find_command(st: State, name: str, app_id: str | None) -> dict[str, Any] | None:
    """The command ``name`` of application ``app_id``; without one, the first bot's, else any
    other application's (as a user picks one bot's command in Discord's picker)."""
    apps = [app_id] if app_id else [st.ids["bot_id"], *sorted(st.app_commands)]
    for app in apps:
        for scope in (st.ids["guild_id"], "global"):
            for cmd in st.app_commands.get(app, {}).get(scope, []):
                if cmd["name"] == name:
                    return cmd
    return None


def _options(cmd: dict[str, Any], options: Any) -> list[dict[str, Any]]:
    if isinstance(options, list):
        return options
    types = {o["name"]: o.get("type", 3) for o in cmd.get("options") or []}
    return [{"name": k, "type": types.get(k, 3), "value": v} for k, v in (options or {}).items()]


SUBCOMMAND, SUBCOMMAND_GROUP, CHANNEL_OPTION = 1, 2, 7


def _nested_options(cmd: dict[str, Any], path: list[str], options: Any) -> list[dict[str, Any]]:
    """The options of ``/cmd group sub`` as Discord nests them: a subcommand group (type 2)
    holding a subcommand (type 1) holding the values."""
    if not path:
        return _options(cmd, options)
    sub = next(
        (
            o
            for o in cmd.get("options") or []
            if o["name"] == path[0] and o.get("type") in (SUBCOMMAND, SUBCOMMAND_GROUP)
        ),
        None,
    )
    if sub is None:
        raise _bad(f"{cmd['name']!r} has no subcommand {path[0]!r}", 404)
    inner = _nested_options(sub, path[1:], options)
    return [{"type": sub["type"], "name": sub["name"], "options": inner}]


def _resolved(st: State, options: list[dict[str, Any]]) -> dict[str, Any]:
    """``data.resolved`` for the channels the options name (discord.py reads them from
    there): the partial channel Discord sends, with the user's permissions in it."""
    resolved: dict[str, Any] = {}
    stack = list(options)
    while stack:
        option = stack.pop()
        stack.extend(option.get("options") or [])
        if option.get("type") == CHANNEL_OPTION:
            channel = st.channels.get(str(option["value"]))
            if channel is not None:
                keys = ("id", "name", "type", "parent_id", "thread_metadata", "guild_id")
                partial = {k: channel[k] for k in keys if k in channel}
                partial["permissions"] = p.ALL_PERMISSIONS
                resolved.setdefault("channels", {})[channel["id"]] = partial
    return resolved


async def run_command(request: web.Request) -> web.Response:
    return json_response(await user_command(_st(request), await read_json(request)))


async def user_command(st: State, body: dict[str, Any]) -> dict[str, Any]:
    """A slash command (``name``, ``options``: name → value) run in ``channel_id``."""
    app_id = st.ids.get(body.get("application_id") or "", body.get("application_id"))
    # "project add": a subcommand, as the user picks it in Discord's command picker.
    name, *path = str(body["name"]).split()
    cmd = _find_command(st, name, app_id)
    if cmd is None:
        raise _bad(f"command {body['name']!r} was never registered by the bot", 404)
    data: dict[str, Any] = {
        "id": cmd["id"],
        "name": cmd["name"],
        "type": cmd.get("type", 1),
        "options": _nested_options(cmd, path, body.get("options")),
    }
    resolved = _resolved(st, data["options"])
    if resolved:
        data["resolved"] = resolved
    if cmd.get("guild_id"):
        data["guild_id"] = cmd["guild_id"]  # else CommandTree looks in globals (pitfall 6)
    kind = itx.AUTOCOMPLETE if body.get("autocomplete") else itx.COMMAND
    if kind == itx.AUTOCOMPLETE:
        leaves = data["options"]
        while leaves and leaves[0].get("type") in (SUBCOMMAND, SUBCOMMAND_GROUP):
            leaves = leaves[0]["options"]
        for opt in leaves:
            opt["focused"] = opt["name"] == body["autocomplete"]
    channel = m.get_channel(st, str(body["channel_id"]))
    ist = itx.create_interaction(
        st, kind, _author(st, body), channel, data, app_id=cmd["application_id"]
    )
    return await _settle_and_await(st, ist, float(body.get("timeout", 5.0)))


async def member_roles(request: web.Request) -> web.Response:
    """Give a user guild roles: {"user": name or id, "roles": [role names or ids]} (until reset)."""
    st = _st(request)
    body = await read_json(request)
    user = st.user(str(body["user"]))
    st.member_roles[user["id"]] = [st.ids.get(f"{r}_role_id", str(r)) for r in body["roles"]]
    return json_response({"ok": True, "roles": st.member_roles[user["id"]]})


def add_routes(app: web.Application) -> None:
    r = app.router
    r.add_get("/_test/info", info)
    r.add_get("/_test/mark", mark)
    r.add_post("/_test/reset", reset)
    r.add_get("/_test/records", records)
    r.add_post("/_test/wait", wait)
    r.add_get("/_test/channels", guild_channels)
    r.add_get("/_test/channels/{channel_id}/messages", channel_messages)
    r.add_get("/_test/reactions/{message_id}", reactions)
    r.add_get("/_test/reactions/{message_id}/users", reactions)
    r.add_route("*", "/_test/counters", counters)
    r.add_get("/_test/commands", commands)
    r.add_get("/_test/contract", contract)
    r.add_post("/_test/force_429", force_429)
    r.add_post("/_test/channels", create_channel)
    r.add_post("/_test/buckets", buckets)
    r.add_post("/_test/outage", outage)
    r.add_post("/_test/settings", settings)
    r.add_post("/_test/attach_files", attach_files)
    r.add_post("/_test/member_roles", member_roles)
    r.add_post("/_test/gateway", gateway)
    r.add_post("/_test/messages", post_message)
    r.add_route("PATCH", "/_test/messages/{channel_id}/{message_id}", user_message_action)
    r.add_delete("/_test/messages/{channel_id}/{message_id}", user_message_action)
    r.add_post("/_test/react", react)
    r.add_post("/_test/threads", create_thread)
    r.add_post("/_test/threads/{thread_id}/archive", thread_action)
    r.add_delete("/_test/threads/{thread_id}", thread_action)
    r.add_post("/_test/click", click)
    r.add_post("/_test/select", select)
    r.add_post("/_test/modal", submit_modal)
    r.add_post("/_test/command", run_command)
