"""Builders for Discord JSON objects in the shapes discord.py parses."""

from __future__ import annotations

import datetime as dt
from typing import Any

ALL_PERMISSIONS = str((1 << 50) - 1)
MANAGE_CHANNELS = 1 << 4
MANAGE_MESSAGES = 1 << 13
TEXT_CHANNEL, CATEGORY = 0, 4
THREAD_TYPES = (10, 11, 12)
AUDIT_THREAD_UPDATE = 111  # audit-log action_type of a thread's archive, lock or rename


def iso_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


def iso_ago(seconds: float) -> str:
    """The time ``seconds`` ago, as Discord writes a message's ``timestamp``."""
    return (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)).isoformat()


def user_obj(user_id: str, name: str, bot: bool = False) -> dict[str, Any]:
    return {
        "id": user_id,
        "username": name,
        "global_name": name.capitalize(),
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
        "flags": 0,
    }


def member_obj(
    user: dict[str, Any], with_user: bool = True, roles: list[str] | None = None
) -> dict[str, Any]:
    """A guild member: ``roles`` are role ids (never @everyone's), as Discord sends them."""
    member: dict[str, Any] = {
        "roles": list(roles or ()),
        "nick": None,
        "joined_at": "2025-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "flags": 0,
        "pending": False,
    }
    if with_user:
        member["user"] = user
    return member


def role_obj(role_id: str, name: str = "@everyone") -> dict[str, Any]:
    return {
        "id": role_id,
        "name": name,
        "color": 0,
        "hoist": False,
        "position": 0,
        "permissions": ALL_PERMISSIONS,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }


def channel_obj(
    channel_id: str, name: str, guild_id: str, parent_id: str | None, position: int, kind: int = 0
) -> dict[str, Any]:
    return {
        "id": channel_id,
        "type": kind,
        "guild_id": guild_id,
        "name": name,
        "position": position,
        "parent_id": parent_id,
        "permission_overwrites": [],
        "nsfw": False,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "flags": 0,
    }


def thread_obj(
    thread_id: str,
    name: str,
    parent: dict[str, Any],
    owner_id: str,
    kind: int = 11,
    auto_archive: int = 1440,
) -> dict[str, Any]:
    return {
        "id": thread_id,
        "type": kind,
        "guild_id": parent["guild_id"],
        "parent_id": parent["id"],
        "owner_id": owner_id,
        "name": name,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "message_count": 0,
        "member_count": 1,
        "total_message_sent": 0,
        "flags": 0,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": auto_archive,
            "archive_timestamp": iso_now(),
            "locked": False,
        },
    }


def message_obj(
    message_id: str, channel: dict[str, Any], author: dict[str, Any], body: dict[str, Any]
) -> dict[str, Any]:
    """A message as REST returns it; gateway copies add guild_id/member."""
    msg: dict[str, Any] = {
        "id": message_id,
        "channel_id": channel["id"],
        "type": 0 if not body.get("message_reference") else 19,
        "author": author,
        "content": body.get("content") or "",
        "timestamp": iso_now(),
        "edited_timestamp": None,
        "tts": bool(body.get("tts", False)),
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": list(body.get("embeds") or []),
        "components": list(body.get("components") or []),
        "pinned": False,
        "flags": int(body.get("flags") or 0),
    }
    if channel.get("guild_id"):
        msg["guild_id"] = channel["guild_id"]
    if body.get("nonce") is not None:
        msg["nonce"] = body["nonce"]
    ref = body.get("message_reference")
    if ref:
        ref = {k: str(v) if k.endswith("_id") and v is not None else v for k, v in ref.items()}
        msg["message_reference"] = {"channel_id": channel["id"], **ref}
    return msg


def attachment_obj(
    att_id: str,
    filename: str,
    size: int,
    url: str,
    content_type: str | None,
    description: str | None = None,
) -> dict[str, Any]:
    att: dict[str, Any] = {
        "id": att_id,
        "filename": filename,
        "size": size,
        "url": url,
        "proxy_url": url,
        "content_type": content_type,
    }
    if description:
        att["description"] = description
    return att
