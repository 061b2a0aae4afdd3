"""The bot's side of the hand-off: posting spooled messages on its warm discord.py session.

Hooks hand their messages to the running bot (``bridge.discord.handoff``): they spool them to
the outbox and send a datagram naming the channel to ``bot.sock`` (the Stop hook hands over
its whole event instead: ``stop:<name>``, ``bot/delivery/stop_events``). :class:`WakeSocket` turns
those datagrams into wake-ups of the outbox drainer, which posts with :func:`send_post` through
discord.py's HTTP client: one warm connection and one rate-limit state (per-route buckets and
the global limit) for every session of the bot's token. This is the bot's sender, the twin of
the hooks' blocking ``bridge.discord.rest``: only the I/O is here, what to send and what
Discord's answers mean is decided once in :mod:`bridge.discord.post`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable
from typing import Any

import discord
from discord.http import Route

from bridge.discord import post as posting
from bridge.discord.handoff import socket_address, socket_path
from bridge.discord.post import DeliveryError, Post
from bridge.state import runtime

log = logging.getLogger(__name__)


class _Datagrams(asyncio.DatagramProtocol):
    def __init__(
        self, on_channel: Callable[[str], None], on_stop: Callable[[str], None] | None
    ) -> None:
        self.on_channel = on_channel
        self.on_stop = on_stop

    def datagram_received(self, data: bytes, addr: object) -> None:
        said = data.decode(errors="replace").strip()
        if said.isascii() and said.isdigit():
            self.on_channel(said)
        elif said.startswith("stop:") and self.on_stop is not None:  # a Stop hook's event
            self.on_stop(said[5:])


class WakeSocket:
    """``bot.sock`` in the runtime dir while the bot runs; its presence tells hooks a bot
    is there to hand messages to."""

    def __init__(
        self,
        rt: runtime.Runtime,
        on_channel: Callable[[str], None],
        on_stop: Callable[[str], None] | None = None,
    ) -> None:
        self.path = socket_path(rt)
        self.on_channel = on_channel
        self.on_stop = on_stop  # ``stop:<name>``: bot/delivery/stop_events
        self._transport: asyncio.DatagramTransport | None = None
        self._inode = 0

    async def open(self) -> bool:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a previous bot's leftover (this dir is ours and private)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        fd = -1
        try:
            address, fd = socket_address(self.path)
            if not address:
                raise OSError(f"a path of {len(self.path)} bytes is too long for a socket here")
            sock.bind(address)
            os.chmod(self.path, 0o600)
            self._inode = os.stat(self.path).st_ino
        except OSError as err:
            sock.close()
            log.warning("hooks will post directly: cannot listen on %s (%s)", self.path, err)
            return False
        finally:
            if fd >= 0:
                os.close(fd)
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.create_datagram_endpoint(
            lambda: _Datagrams(self.on_channel, self.on_stop), sock=sock
        )
        return True

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None
            with contextlib.suppress(FileNotFoundError):
                if os.stat(self.path).st_ino == self._inode:  # not a newer bot's socket
                    os.unlink(self.path)


async def send_post(http: discord.http.HTTPClient, channel_id: str, post: Post) -> dict:
    """:meth:`bridge.discord.rest.DiscordREST.send_post` on the bot's session: create the
    message (returns it); when Discord refuses its files for good, send what
    :func:`~bridge.discord.post.instead_of_refused_files` says instead."""
    try:
        return await create_message(http, channel_id, post)
    except DeliveryError as err:
        instead = posting.instead_of_refused_files(post, err)
        if not instead:
            raise
        sent = [await create_message(http, channel_id, other) for other in instead]
        return sent[0]  # the text, or the note when there was none


async def create_message(http: discord.http.HTTPClient, channel_id: str, post: Post) -> dict:
    """POST the message (JSON, or multipart with its files) through discord.py's client,
    which waits out rate limits and retries 5xx itself; what its last answer means is
    :func:`~bridge.discord.post.refusal`'s to say."""
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=int(channel_id))
    try:
        if not post.files:
            return await http.request(route, json=post.payload)
        payload_json, parts = posting.multipart(post)
        form: list[dict[str, Any]] = [{"name": "payload_json", "value": payload_json}]
        form += [
            {"name": field, "value": data, "filename": name, "content_type": _content_type(name)}
            for field, name, data in parts
        ]
        return await http.request(route, form=form)
    except discord.HTTPException as err:
        raise posting.refusal(err.status, err.text, err.code) from err
    except (TimeoutError, OSError) as err:
        raise posting.unreachable(err) from err


def _content_type(filename: str) -> str:
    """``audio/ogg`` for a voice message's file (Discord plays it by its type); anything
    else goes as bytes, as the hooks send it."""
    return "audio/ogg" if filename.endswith(".ogg") else "application/octet-stream"


async def edit_message(
    http: discord.http.HTTPClient, channel_id: str, message_id: str, payload: dict
) -> dict:
    """PATCH a message the bot posted (a reply's footer brought in): as :func:`create_message`."""
    route = Route(
        "PATCH",
        "/channels/{channel_id}/messages/{message_id}",
        channel_id=int(channel_id),
        message_id=int(message_id),
    )
    try:
        return await http.request(route, json=payload)
    except discord.HTTPException as err:
        raise posting.refusal(err.status, err.text, err.code) from err
    except (TimeoutError, OSError) as err:
        raise posting.unreachable(err) from err
