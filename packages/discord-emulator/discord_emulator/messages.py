"""Message operations shared by REST, interaction and control handlers."""

from __future__ import annotations

import copy
import hashlib
import json
import mimetypes
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from aiohttp import web

from . import payloads as p
from .state import State
from .validation import ApiError, unknown, validate_message

NONCE_WINDOW = 300.0  # Discord dedupes enforce_nonce resends "within the past few minutes"
EPHEMERAL = 1 << 6
LOADING = 1 << 7


@dataclass
class Upload:
    filename: str
    data: bytes
    content_type: str | None


async def read_body(request: web.Request) -> tuple[dict[str, Any], list[Upload]]:
    """JSON body, or multipart with payload_json + files[n] parts."""
    from .responses import check_contract, read_json

    if not request.content_type.startswith("multipart/"):
        return await read_json(request), []
    body: dict[str, Any] = {}
    uploads: list[Upload] = []
    reader = await request.multipart()
    async for part in reader:
        if part.name == "payload_json":
            try:
                body = json.loads(await part.text())  # type: ignore[union-attr]
            except ValueError:
                body = None
            if not isinstance(body, dict):
                raise ApiError(400, 50109, "The request body contains invalid JSON.")
        elif part.filename is not None:
            data = await part.read()  # type: ignore[union-attr]
            ctype = part.headers.get("Content-Type")
            uploads.append(Upload(part.filename, bytes(data), ctype))
    check_contract(request, body)
    return body, uploads


def get_channel(st: State, channel_id: str) -> dict[str, Any]:
    channel = st.channels.get(channel_id)
    if channel is None:
        raise unknown("channel")
    return channel


def get_message(st: State, channel_id: str, message_id: str) -> dict[str, Any]:
    msg = st.message_index.get(message_id)
    if msg is None or msg["channel_id"] != channel_id:
        raise unknown("message")
    return msg


VOICE_KEYS = ("duration_secs", "waveform")


def store_uploads(
    st: State, channel_id: str, uploads: list[Upload], meta: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Keep the bytes and build attachment objects whose url the emulator serves."""
    out = []
    for i, up in enumerate(uploads):
        if len(up.data) > st.max_file_size:
            raise ApiError(413, 40005, "Request entity too large")
        info = next((m for m in meta if str(m.get("id")) == str(i)), {})
        filename = info.get("filename") or up.filename
        att_id = st.flakes.next()
        st.files[att_id] = up.data
        # Quoted as Discord's CDN does, so names like "../x" or "a b" stay one path segment;
        # signed like its links (``hm``): ids are sequential, and any local user can connect.
        st.file_keys[att_id] = secrets.token_urlsafe(16)
        url = f"{st.base_url}/attachments/{channel_id}/{att_id}/{quote(filename, safe='')}"
        url += f"?hm={st.file_keys[att_id]}"
        ctype = up.content_type
        if not ctype or ctype == "application/octet-stream":
            ctype = mimetypes.guess_type(filename)[0] or ctype
        att = p.attachment_obj(att_id, filename, len(up.data), url, ctype, info.get("description"))
        for key in VOICE_KEYS:  # a voice message's attachment (flags IS_VOICE_MESSAGE)
            if info.get(key) is not None:
                att[key] = info[key]
        out.append(att)
    return out


def file_meta(st: State, msg: dict[str, Any]) -> list[dict[str, Any]]:
    """Attachment metadata for records, with the sha256 of the stored bytes."""
    return [
        {
            "id": a["id"],
            "filename": a["filename"],
            "size": a["size"],
            "url": a["url"],
            "content_type": a.get("content_type"),
            "sha256": hashlib.sha256(st.files.get(a["id"], b"")).hexdigest(),
        }
        for a in msg["attachments"]
    ]


def nonce_hit(st: State, channel_id: str, author_id: str, body: dict[str, Any]) -> dict | None:
    """The original message for an enforce_nonce resend, if any."""
    nonce = body.get("nonce")
    if nonce is None or not body.get("enforce_nonce"):
        return None
    hit = st.nonces.get((channel_id, author_id, str(nonce)))
    if hit is None or time.monotonic() - hit[0] > NONCE_WINDOW:
        return None
    return st.message_index.get(hit[1])


def create_message(
    st: State,
    channel: dict[str, Any],
    author: dict[str, Any],
    body: dict[str, Any],
    uploads: list[Upload],
    validate: bool = True,
) -> dict[str, Any]:
    """Validate, build and store a message. Dispatch is up to the caller."""
    if validate:
        validate_message(body, len(uploads))
        if uploads and st.denies_attach_files(channel):
            raise ApiError(403, 50013, "Missing Permissions")
    check_thread_writable(st, channel)
    msg = p.message_obj(st.flakes.next(), channel, author, body)
    msg["attachments"] = store_uploads(st, channel["id"], uploads, body.get("attachments") or [])
    st.messages.setdefault(channel["id"], []).append(msg)
    st.message_index[msg["id"]] = msg
    st.message_born[msg["id"]] = time.monotonic()
    channel["last_message_id"] = msg["id"]
    if body.get("nonce") is not None and body.get("enforce_nonce"):
        st.nonces[(channel["id"], author["id"], str(body["nonce"]))] = (time.monotonic(), msg["id"])
    return msg


def check_thread_writable(st: State, channel: dict[str, Any]) -> None:
    """Locked archived threads refuse posts; archived ones get un-archived by a post."""
    meta = channel.get("thread_metadata")
    if not meta or not meta["archived"]:
        return
    if meta["locked"]:
        raise ApiError(400, 50083, "Thread is archived")
    meta["archived"] = False
    st.gateway.dispatch("THREAD_UPDATE", copy.deepcopy(channel))
    st.record("thread_update", channel_id=channel["id"], thread=copy.deepcopy(channel))


def edit_message(
    st: State, msg: dict[str, Any], body: dict[str, Any], uploads: list[Upload]
) -> dict[str, Any]:
    validate_message(body, len(uploads), edit=True)
    for key in ("content", "embeds", "components", "flags"):
        if key in body and body[key] is not None:
            msg[key] = body[key]
    if "attachments" in body or uploads:
        keep = {str(a.get("id")) for a in body.get("attachments") or []}
        kept = [a for a in msg["attachments"] if a["id"] in keep]
        msg["attachments"] = kept + store_uploads(
            st, msg["channel_id"], uploads, body.get("attachments") or []
        )
    msg["edited_timestamp"] = p.iso_now()
    return msg


def gateway_copy(st: State, msg: dict[str, Any]) -> dict[str, Any]:
    """A message as MESSAGE_CREATE carries it: with guild_id and the author's member."""
    data = copy.deepcopy(msg)
    channel = st.channels.get(msg["channel_id"]) or {}
    if channel.get("guild_id"):
        data["guild_id"] = channel["guild_id"]
        if not msg.get("webhook_id"):
            data["member"] = st.member(msg["author"], with_user=False)
    return data


def announce(st: State, msg: dict[str, Any], kind: str = "message_create", **extra: Any) -> None:
    """Record a message effect and echo it on the gateway (never for ephemeral messages)."""
    event = "MESSAGE_UPDATE" if kind == "message_update" else "MESSAGE_CREATE"
    if not msg["flags"] & EPHEMERAL:
        st.gateway.dispatch(event, gateway_copy(st, msg))
    else:
        actor = _actor_id(st, extra.get("interaction_id"))
        if actor:  # only the user who ran the interaction sees it, in their client
            st.gateway.dispatch_to_user(actor, event, gateway_copy(st, msg))
    rec_msg = copy.deepcopy(msg)
    rec_msg["attachments"] = file_meta(st, msg)
    st.record(kind, message=rec_msg, channel_id=msg["channel_id"], message_id=msg["id"], **extra)


def _actor_id(st: State, interaction_id: str | None) -> str | None:
    ist = st.interactions.get(interaction_id or "")
    if ist is None:
        return None
    payload = ist.payload
    user = (payload.get("member") or {}).get("user") or payload.get("user") or {}
    return user.get("id")


def delete_message(st: State, msg: dict[str, Any], source: str) -> None:
    channel_msgs = st.messages.get(msg["channel_id"], [])
    if msg in channel_msgs:
        channel_msgs.remove(msg)
    st.message_index.pop(msg["id"], None)
    data = {"id": msg["id"], "channel_id": msg["channel_id"]}
    if msg.get("guild_id"):
        data["guild_id"] = msg["guild_id"]
    if not msg["flags"] & EPHEMERAL:
        st.gateway.dispatch("MESSAGE_DELETE", data)
    st.record("message_delete", channel_id=msg["channel_id"], message_id=msg["id"], source=source)
