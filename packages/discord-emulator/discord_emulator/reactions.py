"""Reactions on messages: who reacted with what, the REST routes, the gateway events.

``State.reactions`` maps a message id to its emojis (``"✅"``, or ``"name:id"`` for a custom
one, as the routes take them), each with the ids of the users who reacted, in order. As on
Discord: adding a reaction that is already there, or removing one that is not, changes
nothing and dispatches nothing; a message's ``reactions`` (REST and the web client) count
each emoji and say whether the reader (``me``) is among them; MESSAGE_REACTION_ADD carries
the reacting member and the message's author, the removals only ids.

Routes (Discord's, as its OpenAPI spec names them): ``PUT`` / ``DELETE …/reactions/{emoji}/@me``
(the bot's own), ``GET …/reactions/{emoji}`` (who reacted, ``after`` / ``limit``),
``DELETE …/reactions/{emoji}/{user_id}`` (someone else's: Manage Messages),
``DELETE …/reactions/{emoji}`` and ``DELETE …/reactions`` (all of one emoji, or all).
"""

from __future__ import annotations

import copy
from typing import Any

from aiohttp import web

from . import messages as m
from .responses import BOT_KEY, STATE_KEY, defer, json_response, no_content
from .state import State
from .validation import ApiError, unknown

MAX_EMOJIS = 20  # distinct reactions a message may hold (Discord: 30013 past 20)


def users_of(st: State, message_id: str) -> dict[str, list[str]]:
    """Emoji → the ids of the users who reacted with it (a copy)."""
    return {emoji: list(users) for emoji, users in st.reactions.get(message_id, {}).items()}


def summary(st: State, message_id: str, viewer_id: str | None) -> list[dict[str, Any]]:
    """A message's ``reactions`` as Discord shows them to ``viewer_id``."""
    out = []
    for emoji, users in st.reactions.get(message_id, {}).items():
        name, _, emoji_id = emoji.partition(":")
        out.append(
            {
                "emoji": {"id": emoji_id or None, "name": name},
                "count": len(users),
                "count_details": {"burst": 0, "normal": len(users)},
                "burst_colors": [],
                "me": viewer_id in users,
                "me_burst": False,
                "burst_count": 0,
            }
        )
    return out


def with_reactions(st: State, msg: dict[str, Any], viewer_id: str | None) -> dict[str, Any]:
    """``msg`` as ``viewer_id`` reads it: with its reactions, if it has any."""
    found = summary(st, msg["id"], viewer_id)
    return {**msg, "reactions": found} if found else msg


def react(st: State, msg: dict[str, Any], emoji: str, user_id: str, add: bool) -> bool:
    """Add or remove ``user_id``'s ``emoji`` on ``msg``, then dispatch and record it. False
    (and nothing sent) when that changed nothing."""
    changed = change(st, msg, emoji, user_id, add)
    if changed:
        event(st, msg, emoji, user_id, add)
    return changed


def change(st: State, msg: dict[str, Any], emoji: str, user_id: str, add: bool) -> bool:
    """Add or remove ``user_id``'s ``emoji`` on ``msg`` (no event); False if already so."""
    emojis = st.reactions.setdefault(msg["id"], {})
    users = emojis.get(emoji, [])
    if add == (user_id in users):
        return False
    if add:
        if emoji not in emojis and len(emojis) >= MAX_EMOJIS:
            raise ApiError(400, 30010, "Maximum number of reactions reached (20)")
        emojis[emoji] = [*users, user_id]
    else:
        users.remove(user_id)
        if not users:
            del emojis[emoji]
    return True


def event(st: State, msg: dict[str, Any], emoji: str, user_id: str, add: bool) -> None:
    """MESSAGE_REACTION_ADD / _REMOVE on the gateway, and its record."""
    data: dict[str, Any] = {
        "user_id": user_id,
        "channel_id": msg["channel_id"],
        "message_id": msg["id"],
        "emoji": _emoji(emoji),
        "burst": False,
        "type": 0,
    }
    if add:
        data["message_author_id"] = msg["author"]["id"]
    if msg.get("guild_id"):
        data["guild_id"] = msg["guild_id"]
        if add:
            data["member"] = st.member(st.user(user_id))
    st.gateway.dispatch("MESSAGE_REACTION_ADD" if add else "MESSAGE_REACTION_REMOVE", data)
    st.record(
        "reaction_add" if add else "reaction_remove",
        channel_id=msg["channel_id"],
        message_id=msg["id"],
        emoji=emoji,
        user_id=user_id,
    )


def _emoji(emoji: str) -> dict[str, Any]:
    name, _, emoji_id = emoji.partition(":")
    return {"id": emoji_id or None, "name": name}


# ----- REST --------------------------------------------------------------------------------


def _st(request: web.Request) -> State:
    return request.app[STATE_KEY]


def _bot_id(request: web.Request) -> str:
    return (request.get(BOT_KEY) or _st(request).bot_user)["id"]


def _message(request: web.Request) -> dict[str, Any]:
    mi = request.match_info
    msg = m.get_message(_st(request), mi["channel_id"], mi["message_id"])
    if msg["flags"] & m.EPHEMERAL:
        raise unknown("message")
    return msg


def _known(st: State, msg: dict[str, Any], emoji: str) -> list[str]:
    users = st.reactions.get(msg["id"], {}).get(emoji)
    if users is None:
        raise ApiError(404, 10014, "Unknown Emoji")
    return users


async def add_own(request: web.Request) -> web.Response:
    return _react(request, request.match_info["emoji"], _bot_id(request), add=True)


async def remove_own(request: web.Request) -> web.Response:
    return _react(request, request.match_info["emoji"], _bot_id(request), add=False)


def _react(request: web.Request, emoji: str, user_id: str, add: bool) -> web.Response:
    """Changed now; announced once the response is written (as every REST effect)."""
    st, msg = _st(request), _message(request)
    if change(st, msg, emoji, user_id, add):
        defer(request, lambda: event(st, msg, emoji, user_id, add))
    return no_content()


async def remove_user(request: web.Request) -> web.Response:
    """Someone's reaction: the bot's own, or anyone's with Manage Messages."""
    user_id = request.match_info["user_id"]
    if user_id != _bot_id(request):
        _need_manage_messages(_st(request))
    return _react(request, request.match_info["emoji"], user_id, add=False)


async def list_users(request: web.Request) -> web.Response:
    """Who reacted with ``emoji``: users in order of their ids, after ``after``, ``limit``
    (1-100, default 25)."""
    st, msg = _st(request), _message(request)
    users = _known(st, msg, request.match_info["emoji"])
    after = int(request.query.get("after") or 0)
    limit = max(1, min(100, int(request.query.get("limit") or 25)))
    ids = sorted((u for u in users if int(u) > after), key=int)[:limit]
    return json_response([st.user(u) for u in ids])


async def remove_emoji(request: web.Request) -> web.Response:
    """Every reaction with one emoji (MESSAGE_REACTION_REMOVE_EMOJI)."""
    st, msg = _st(request), _message(request)
    emoji = request.match_info["emoji"]
    _known(st, msg, emoji)
    _need_manage_messages(st)
    del st.reactions[msg["id"]][emoji]
    data = {"channel_id": msg["channel_id"], "message_id": msg["id"], "emoji": _emoji(emoji)}
    defer(request, lambda: _cleared(st, msg, "MESSAGE_REACTION_REMOVE_EMOJI", data))
    return no_content()


async def remove_all(request: web.Request) -> web.Response:
    """Every reaction on the message (MESSAGE_REACTION_REMOVE_ALL)."""
    st, msg = _st(request), _message(request)
    _need_manage_messages(st)
    st.reactions.pop(msg["id"], None)
    data = {"channel_id": msg["channel_id"], "message_id": msg["id"]}
    defer(request, lambda: _cleared(st, msg, "MESSAGE_REACTION_REMOVE_ALL", data))
    return no_content()


def _need_manage_messages(st: State) -> None:
    if not st.manage_messages:
        raise ApiError(403, 50013, "Missing Permissions")


def _cleared(st: State, msg: dict[str, Any], event_name: str, data: dict[str, Any]) -> None:
    if msg.get("guild_id"):
        data = {**data, "guild_id": msg["guild_id"]}
    st.gateway.dispatch(event_name, copy.deepcopy(data))
    st.record(
        event_name.lower(),
        channel_id=msg["channel_id"],
        message_id=msg["id"],
        emoji=(data.get("emoji") or {}).get("name"),
    )


def routes(message_path: str) -> list[tuple[str, str, Any]]:
    """The reaction routes under a message's REST path."""
    base = message_path + "/reactions"
    return [
        ("PUT", base + "/{emoji}/@me", add_own),
        ("DELETE", base + "/{emoji}/@me", remove_own),
        ("GET", base + "/{emoji}", list_users),
        ("DELETE", base + "/{emoji}/{user_id}", remove_user),
        ("DELETE", base + "/{emoji}", remove_emoji),
        ("DELETE", base, remove_all),
    ]
