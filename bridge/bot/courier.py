"""The bot's side of the hand-off: posting spooled messages on its warm discord.py session.

Hooks hand their messages to the running bot (``bridge.discord.handoff``): they spool them to
the outbox and send a datagram naming the channel to ``bot.sock``. :class:`WakeSocket` turns
those datagrams into wake-ups of the outbox drainer, which posts with :func:`create_message`
through discord.py's HTTP client: one warm connection and one rate-limit state (per-route
buckets and the global limit) for every session of the bot's token.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import Callable

import discord
from discord.http import Route

from bridge.discord.delivery import refused_files_note
from bridge.discord.handoff import socket_path
from bridge.discord.post import DeliveryError, Post, message_payload
from bridge.state import runtime

log = logging.getLogger(__name__)


class _Datagrams(asyncio.DatagramProtocol):
    def __init__(self, on_channel: Callable[[str], None]) -> None:
        self.on_channel = on_channel

    def datagram_received(self, data: bytes, addr: object) -> None:
        channel = data.decode(errors="replace").strip()
        if channel.isascii() and channel.isdigit():
            self.on_channel(channel)


class WakeSocket:
    """``bot.sock`` in the runtime dir while the bot runs; its presence tells hooks a bot
    is there to hand messages to."""

    def __init__(self, rt: runtime.Runtime, on_channel: Callable[[str], None]) -> None:
        self.path = socket_path(rt)
        self.on_channel = on_channel
        self._transport: asyncio.DatagramTransport | None = None
        self._inode = 0

    async def open(self) -> bool:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a previous bot's leftover (this dir is ours and private)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            sock.bind(self.path)
            os.chmod(self.path, 0o600)
            self._inode = os.stat(self.path).st_ino
        except OSError as err:
            sock.close()
            log.warning("hooks will post directly: cannot listen on %s (%s)", self.path, err)
            return False
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.create_datagram_endpoint(
            lambda: _Datagrams(self.on_channel), sock=sock
        )
        return True

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None
            with contextlib.suppress(FileNotFoundError):
                if os.stat(self.path).st_ino == self._inode:  # not a newer bot's socket
                    os.unlink(self.path)


async def create_message(http: discord.http.HTTPClient, channel_id: str, post: Post) -> dict:
    """POST the message (JSON, or multipart with its files) through discord.py's client."""
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=int(channel_id))
    try:
        if not post.files:
            return await http.request(route, json=post.payload)
        payload = dict(post.payload)
        payload["attachments"] = [{"id": i, "filename": n} for i, (n, _) in enumerate(post.files)]
        form = [{"name": "payload_json", "value": json.dumps(payload)}]
        form += [
            {"name": f"files[{i}]", "value": data, "filename": name,
             "content_type": "application/octet-stream"}
            for i, (name, data) in enumerate(post.files)
        ]  # fmt: skip
        return await http.request(route, form=form)
    except discord.HTTPException as err:
        status = err.status
        retryable = status in (401, 429) or status >= 500
        raise DeliveryError(
            f"Discord answered {status}: {err.text[:300]}", retryable, status
        ) from err
    except (TimeoutError, OSError) as err:
        raise DeliveryError(f"cannot reach Discord ({type(err).__name__})", True) from err


async def send_post_async(http: discord.http.HTTPClient, channel_id: str, post: Post) -> dict:
    """:func:`bridge.discord.delivery.send_post` on the bot's session: if Discord refuses the
    files, the text goes anyway (same nonce) with a note saying what was not attached."""
    try:
        return await create_message(http, channel_id, post)
    except DeliveryError as err:
        if err.retryable or not post.files:
            raise
        message: dict = {}
        if post.payload.get("content"):
            message = await create_message(http, channel_id, Post(post.payload))
        note = Post(message_payload(refused_files_note(post, err)))
        note_message = await create_message(http, channel_id, note)
        return message or note_message
