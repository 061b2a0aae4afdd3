"""Interactions: INTERACTION_CREATE payloads, the callback route, follow-ups and @original."""

from __future__ import annotations

import copy
import secrets
import time
from typing import Any

from aiohttp import web

from . import messages as m
from . import payloads as p
from .responses import STATE_KEY, defer, json_response, no_content
from .state import InteractionState, State
from .validation import ApiError, unknown, validate_modal

PING, COMMAND, COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 1, 2, 3, 4, 5
# Which callback types fit which interaction types (Discord rejects the rest).
ALLOWED = {
    COMMAND: {4, 5, 9},
    COMPONENT: {4, 5, 6, 7, 9},
    AUTOCOMPLETE: {8},
    MODAL_SUBMIT: {4, 5, 6, 7},
}


def _st(request: web.Request) -> State:
    return request.app[STATE_KEY]


# ----- creating interactions ---------------------------------------------------------------


def create_interaction(
    st: State,
    kind: int,
    user: dict[str, Any],
    channel: dict[str, Any],
    data: dict[str, Any],
    message: dict[str, Any] | None = None,
    app_id: str | None = None,
) -> InteractionState:
    """Build and dispatch an INTERACTION_CREATE with every field discord.py needs (pitfall 5).

    It goes to one application only (the gateway sends it to that bot's sessions alone): a
    command's to the application that registered it (``app_id``), a click's to the bot whose
    message it is, as Discord does."""
    iid, token = st.flakes.next(), "aW50ZXJhY3Rpb24" + secrets.token_urlsafe(48)
    author = ((message or {}).get("author") or {}).get("id")
    if app_id is None:
        app_id = author if st.is_bot(author) else st.ids["bot_id"]
    payload: dict[str, Any] = {
        "id": iid,
        "application_id": app_id,
        "type": kind,
        "data": data,
        "channel_id": channel["id"],
        "channel": copy.deepcopy(channel),
        "token": token,
        "version": 1,
        "app_permissions": st.bot_permissions(),
        "locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": st.max_file_size,
        "authorizing_integration_owners": {"0": channel.get("guild_id") or "0"},
    }
    if channel.get("guild_id"):
        payload.update(
            guild_id=channel["guild_id"],
            guild_locale="en-US",
            context=0,
            guild={"id": channel["guild_id"], "locale": "en-US", "features": []},
            member={**st.member(user), "permissions": p.ALL_PERMISSIONS},
        )
    else:
        payload.update(user=user, context=1)
    if message is not None:
        payload["message"] = m.gateway_copy(st, message)
    ist = InteractionState(
        id=iid,
        token=token,
        type=kind,
        channel_id=channel["id"],
        created=time.monotonic(),
        payload=payload,
        message_id=message["id"] if message else None,
    )
    st.interactions[iid] = ist
    st.interaction_by_token[token] = ist
    delivered_to = st.gateway.dispatch("INTERACTION_CREATE", payload)
    st.record(
        "interaction_create",
        interaction_id=iid,
        application_id=app_id,
        delivered_to=delivered_to,  # the bots (gateway sessions) that received it
        interaction_type=kind,
        channel_id=channel["id"],
        user_id=user["id"],
        data=data,
    )
    return ist


def interaction_result(st: State, ist: InteractionState) -> dict[str, Any]:
    """What the control API returns for a click/select/modal/command."""

    def msg(mid: str | None) -> dict[str, Any] | None:
        found = st.message_index.get(mid) if mid else None
        return copy.deepcopy(found) if found else None

    return {
        "interaction_id": ist.id,
        "application_id": ist.application_id,
        "token": ist.token,
        "response_type": ist.response_type,
        "ephemeral": ist.ephemeral,
        "expired": ist.expired,
        "message": msg(ist.response_message_id),
        "original_message": msg(ist.message_id),
        "modal": copy.deepcopy(ist.modal),
        "choices": ist.choices,
        "followups": [x for x in (msg(f) for f in ist.followups) if x],
    }


# ----- callback ----------------------------------------------------------------------------


def _live(st: State, iid: str, token: str) -> InteractionState:
    ist = st.interactions.get(iid)
    if ist is None or ist.token != token:
        raise unknown("interaction")
    if ist.response_type is None and time.monotonic() - ist.created > st.interaction_deadline:
        # Discord drops the token after 3 s without an ack (pitfall 14).
        if not ist.expired:
            ist.expired = True
            st.record("interaction_expired", interaction_id=ist.id)
            ist.done.set()
        raise unknown("interaction")
    return ist


async def callback(request: web.Request) -> web.Response:
    st = _st(request)
    mi = request.match_info
    ist = _live(st, mi["interaction_id"], mi["interaction_token"])
    body, uploads = await m.read_body(request)
    if ist.response_type is not None:
        raise ApiError(400, 40060, "Interaction has already been acknowledged.")
    rtype = int(body.get("type") or 0)
    if rtype not in ALLOWED.get(ist.type, set()):
        raise ApiError(
            400,
            50035,
            "Invalid Form Body",
            {
                "type": {
                    "_errors": [
                        {
                            "code": "INTERACTION_RESPONSE_TYPE_INVALID",
                            "message": "Interaction response type is invalid for this interaction",
                        }
                    ]
                }
            },
        )
    data = body.get("data") or {}
    effect = _apply_callback(st, ist, rtype, data, uploads)
    ist.response_type = rtype
    defer(request, lambda: _publish_callback(st, ist, effect))
    if request.query.get("with_response") not in ("1", "true", "True"):
        return no_content()
    return json_response(_callback_body(st, ist, rtype))


def _apply_callback(
    st: State, ist: InteractionState, rtype: int, data: dict[str, Any], uploads: list[m.Upload]
) -> tuple[str, dict[str, Any]] | None:
    """Perform the response; returns (record kind, message) to announce after the flush."""
    channel = st.channels.get(ist.channel_id) or {}
    flags = int(data.get("flags") or 0)
    bot = st.users[ist.application_id]  # the application answers as its own bot user
    if rtype == 4:
        msg = m.create_message(st, channel, bot, data, uploads)
        return _own_response(ist, msg, "message_create")
    if rtype == 5:
        body = {"flags": (flags & m.EPHEMERAL) | m.LOADING}
        msg = m.create_message(st, channel, bot, body, [], validate=False)
        ist.thinking = True
        return _own_response(ist, msg, "message_create")
    if rtype == 7 and ist.message_id in st.message_index:
        msg = m.edit_message(st, st.message_index[ist.message_id], data, uploads)
        return "message_update", msg
    if rtype == 8:
        ist.choices = data.get("choices") or []
    if rtype == 9:
        validate_modal(data)
        ist.modal = data
        st.modals.append((ist, data))
    return None


def _own_response(
    ist: InteractionState, msg: dict[str, Any], kind: str
) -> tuple[str, dict[str, Any]]:
    msg["interaction_metadata"] = {
        "id": ist.id,
        "type": ist.type,
        "user": _actor(ist),
        "authorizing_integration_owners": {},
    }
    msg["webhook_id"] = msg["author"]["id"]
    ist.response_message_id = msg["id"]
    ist.ephemeral = bool(msg["flags"] & m.EPHEMERAL)
    return kind, msg


def _actor(ist: InteractionState) -> dict[str, Any]:
    payload = ist.payload
    return (payload.get("member") or {}).get("user") or payload.get("user") or {}


def _publish_callback(
    st: State, ist: InteractionState, effect: tuple[str, dict[str, Any]] | None
) -> None:
    if effect is not None:
        kind, msg = effect
        sources = {5: "interaction_defer", 7: "interaction_update"}
        m.announce(
            st,
            msg,
            kind,
            source=sources.get(ist.response_type or 0, "interaction"),
            interaction_id=ist.id,
        )
    st.record(
        "interaction_callback",
        interaction_id=ist.id,
        application_id=ist.application_id,
        response_type=ist.response_type,
        ephemeral=ist.ephemeral,
        channel_id=ist.channel_id,
        message_id=ist.response_message_id or ist.message_id,
    )
    ist.done.set()


def _callback_body(st: State, ist: InteractionState, rtype: int) -> dict[str, Any]:
    # discord.py 2.7 always asks with_response=1 and parses this (pitfall 3).
    inter: dict[str, Any] = {
        "id": ist.id,
        "type": ist.type,
        "response_message_loading": rtype == 5,
        "response_message_ephemeral": ist.ephemeral,
    }
    resource: dict[str, Any] = {"type": rtype}
    mid = ist.response_message_id or (ist.message_id if rtype == 7 else None)
    if mid and mid in st.message_index:
        inter["response_message_id"] = mid
        resource["message"] = st.message_index[mid]
    return {"interaction": inter, "resource": resource}


# ----- webhooks / follow-ups ---------------------------------------------------------------


def _by_token(st: State, request: web.Request) -> InteractionState:
    mi = request.match_info
    ist = st.interaction_by_token.get(mi["webhook_token"])
    if ist is None or mi["webhook_id"] != ist.application_id:
        raise unknown("webhook")
    if ist.response_type is None:
        raise unknown("webhook")  # follow-ups before the ack do not exist yet
    return ist


async def followup(request: web.Request) -> web.Response:
    st = _st(request)
    ist = _by_token(st, request)
    body, uploads = await m.read_body(request)
    if ist.thinking and ist.response_message_id in st.message_index:
        # The first follow-up after a type-5 defer replaces the "thinking" message.
        ist.thinking = False
        msg = st.message_index[ist.response_message_id]
        m.edit_message(st, msg, body, uploads)
        msg["flags"] &= ~m.LOADING
        snapshot = copy.deepcopy(msg)
        defer(
            request,
            lambda: m.announce(
                st, snapshot, "message_update", source="followup", interaction_id=ist.id
            ),
        )
    else:
        channel = st.channels.get(ist.channel_id) or {}
        msg = m.create_message(st, channel, st.users[ist.application_id], body, uploads)
        msg["webhook_id"] = ist.application_id
        ist.followups.append(msg["id"])
        snapshot = copy.deepcopy(msg)
        defer(request, lambda: m.announce(st, snapshot, source="followup", interaction_id=ist.id))
    if request.query.get("wait") in ("true", "1", "True"):
        return json_response(msg)
    return no_content()


def _webhook_message(st: State, request: web.Request) -> tuple[InteractionState, dict]:
    ist = _by_token(st, request)
    ref = request.match_info["message_id"]
    mid = (ist.response_message_id or ist.message_id) if ref == "@original" else ref
    msg = st.message_index.get(mid or "")
    if msg is None or msg["author"]["id"] != ist.application_id:
        raise unknown("message")  # the interaction's webhook reaches its application's only
    return ist, msg


async def get_webhook_message(request: web.Request) -> web.Response:
    _, msg = _webhook_message(_st(request), request)
    return json_response(msg)


async def patch_webhook_message(request: web.Request) -> web.Response:
    st = _st(request)
    ist, msg = _webhook_message(st, request)
    body, uploads = await m.read_body(request)
    m.edit_message(st, msg, body, uploads)
    if msg["id"] == ist.response_message_id and ist.thinking:
        ist.thinking = False
        msg["flags"] &= ~m.LOADING
    snapshot = copy.deepcopy(msg)
    defer(
        request,
        lambda: m.announce(
            st, snapshot, "message_update", source="webhook_edit", interaction_id=ist.id
        ),
    )
    return json_response(msg)


async def delete_webhook_message(request: web.Request) -> web.Response:
    st = _st(request)
    _, msg = _webhook_message(st, request)
    st.message_index.pop(msg["id"], None)
    defer(request, lambda: m.delete_message(st, msg, "webhook"))
    return no_content()


def add_routes(app: web.Application) -> None:
    base = "/api/v{version:\\d+}"
    hook = base + "/webhooks/{webhook_id}/{webhook_token}"
    app.router.add_post(
        base + "/interactions/{interaction_id}/{interaction_token}/callback", callback
    )
    app.router.add_post(hook, followup)
    app.router.add_get(hook + "/messages/{message_id}", get_webhook_message)
    app.router.add_patch(hook + "/messages/{message_id}", patch_webhook_message)
    app.router.add_delete(hook + "/messages/{message_id}", delete_webhook_message)
