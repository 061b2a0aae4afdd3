"""Creating and deleting a guild's channels, which needs the bot's Manage Channels permission.

``POST /guilds/{id}/channels`` creates a text channel or a category (Discord normalises a text
channel's name: lower case, whitespace as ``-``); without Manage Channels it answers, as
Discord does, ``403 {"code": 50013, "message": "Missing Permissions"}``. ``DELETE
/channels/{id}`` of a guild channel (not a thread) needs the same permission
(:func:`check_delete`).
"""

from __future__ import annotations

import copy
from typing import Any

from aiohttp import web

from . import payloads as p
from .responses import STATE_KEY, defer, json_response, read_json
from .state import State
from .validation import ApiError, FormErrors

CREATABLE = (p.TEXT_CHANNEL, p.CATEGORY)


def missing_permissions() -> ApiError:
    return ApiError(403, 50013, "Missing Permissions")


def check_delete(st: State, channel: dict[str, Any]) -> None:
    """A guild channel (not a thread) is deleted only with Manage Channels."""
    guild_channel = channel.get("guild_id") and channel["type"] not in p.THREAD_TYPES
    if guild_channel and not st.manage_channels:
        raise missing_permissions()


def normalise_name(name: str, kind: int) -> str:
    if kind != p.TEXT_CHANNEL:
        return name
    return "-".join(name.lower().split())


async def create_guild_channel(request: web.Request) -> web.Response:
    st: State = request.app[STATE_KEY]
    if request.match_info["guild_id"] != st.ids["guild_id"]:
        raise ApiError(404, 10004, "Unknown Guild")
    errs = FormErrors()  # the spec's findings, then ours: one answer names every bad field
    body = await read_json(request, errors=errs)
    if not st.manage_channels:
        raise missing_permissions()
    kind = body.get("type") or p.TEXT_CHANNEL
    name = body.get("name")
    if kind not in CREATABLE and not errs.has(("type",)):
        errs.add(("type",), "BASE_TYPE_CHOICES", f"Value must be one of {CREATABLE}.")
    parent_id = body.get("parent_id")
    if parent_id is not None and not errs.has(("parent_id",)):
        parent = st.channels.get(str(parent_id))
        if parent is None or parent["type"] != p.CATEGORY or kind == p.CATEGORY:
            errs.add(("parent_id",), "CHANNEL_PARENT_INVALID", "Not a category")
    errs.raise_if_any()
    siblings = [c for c in st.guild_channels() if c.get("parent_id") == parent_id]
    position = max((c["position"] for c in siblings), default=-1) + 1
    channel = p.channel_obj(
        st.flakes.next(),
        normalise_name(name, kind),
        st.ids["guild_id"],
        str(parent_id) if parent_id is not None else None,
        position,
        kind,
    )
    if isinstance(body.get("topic"), str):
        channel["topic"] = body["topic"]
    st.add_channel(channel)
    snapshot = copy.deepcopy(channel)

    def announce() -> None:
        st.gateway.dispatch("CHANNEL_CREATE", snapshot)
        st.record("channel_create", channel_id=snapshot["id"], thread=snapshot, source="rest")

    defer(request, announce)
    return json_response(channel, 201)
