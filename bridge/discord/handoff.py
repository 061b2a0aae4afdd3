"""Handing a hook's messages to the running bot, which posts them on its warm connection.

A hook process that posts itself pays for importing httpx and opening a TLS connection on every
reply (~100–250 ms). The bot already holds a warm HTTP session and the one rate-limit state of
its token, so while it runs a hook only spools its messages to the outbox (as it would when
Discord is down), wakes the bot with a datagram on ``bot.sock`` in the runtime dir, and waits
until the bot has taken them (their entries are gone). The bot listens on that socket only
while it runs: no listener means no bot, and the hook posts directly at once.

Exactly once: an entry carries its nonce (``enforce_nonce``) and leaves the outbox only after
Discord accepted it; whoever posts it — the bot, or the hook when the bot did not take it within
:data:`HANDOFF_WAIT` — posts it under the channel's outbox lock, so never both at once; a crash
at any point leaves the entry in the outbox for the next drain.

A Stop event the bot runs (:class:`Claim`): its entries wait in the outbox until the bot
releases its claim, so that a bot killed in between, whose successor drops them and runs the
event again, has posted nothing of it.

Receipts: an entry that asks for one (a prompt, whose message the hook edits later) gets
``receipts/<nonce>.json`` with the posted message's id, written before the entry is removed.
"""

from __future__ import annotations

import os
import time

from bridge.state import private_files, runtime

SOCKET_NAME = "bot.sock"
HANDOFF_WAIT = 2.0  # seconds the bot has to take a message before the hook posts it itself
POLL = 0.002  # seconds between looks at the entries a hook handed off
_MAX_SOCKET_PATH = 100  # sockaddr_un holds 108 bytes (104 on macOS)

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable


def socket_path(rt: runtime.Runtime) -> str:
    return rt.path(SOCKET_NAME)


def socket_address(path: str) -> tuple[str, int]:
    """``path`` as an address to bind or send to, and a descriptor to close once done (-1:
    none; "": no address). A path too long for ``sockaddr_un`` (a long HOME, a ``try`` of a
    deep project: the hooks used to skip the bot silently) is reached through its directory's
    descriptor, ``/proc/self/fd/<n>/bot.sock`` (Linux); elsewhere it gets no hand-off."""
    if len(path) <= _MAX_SOCKET_PATH:
        return path, -1
    o_path = getattr(os, "O_PATH", 0)
    if not o_path or not os.path.isdir("/proc/self/fd"):
        return "", -1
    flags = o_path | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
    fd = os.open(os.path.dirname(path), flags)
    return f"/proc/self/fd/{fd}/{os.path.basename(path)}", fd


class _Unresponsive:
    """Set in a process whose bot did not take what it was handed (the Stop hook's event,
    ``handlers/stop_handoff``): the rest of it does not wait for that bot again."""

    seen = False


class Claim:
    """A Stop event the bot runs (``bot/delivery/stop_events``), claimed as the file ``path``.

    The outbox entries of its messages name ``path`` and are not posted while it exists
    (``Outbox.draining``); ``release`` removes it once they are all in the outbox. A bot killed
    in between leaves the claim and unposted entries: the next bot drops them and runs the
    event again (``Outbox.drop_claimed``), so the reply is posted once however late that
    is. (Had it relied on the nonce alone, the re-run's messages would carry fresh nonces;
    and Discord only remembers a nonce for a few minutes.)"""

    __slots__ = ("path", "release")

    def __init__(self, path: str, release: Callable[[], None]) -> None:
        self.path = path
        self.release = release


def bot_listening(rt: runtime.Runtime) -> bool:
    """A bot's socket is there (it may still be a crashed bot's leftover: :func:`wake_bot`
    tells), and this process has not seen it fail to take a hand-off."""
    return not _Unresponsive.seen and os.path.exists(socket_path(rt))


def give_up_on_bot() -> None:
    """The bot did not take what it was handed in time: post directly from now on."""
    _Unresponsive.seen = True


def wake_bot(rt: runtime.Runtime, channel_id: str) -> bool:
    """Tell the running bot that ``channel_id`` has messages to post. False: no bot listens."""
    import _socket  # the C module: ``socket`` would import enum, selectors… (milliseconds)

    try:
        address, fd = socket_address(socket_path(rt))
    except OSError:  # no runtime dir
        return False
    if not address:
        return False
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_DGRAM)
    sock.setblocking(False)  # a bot that is alive but not reading must never block a hook
    try:
        sock.sendto(channel_id.encode(), address)
    except BlockingIOError:  # its queue is full of wake-ups: it is not reading them either
        return False
    except OSError:  # no socket (no bot), refused (a dead bot's leftover)
        return False
    finally:
        sock.close()
        if fd >= 0:
            os.close(fd)
    return True


def wait_taken(paths: list[str], until: float) -> bool:
    """Wait until every entry in ``paths`` left the outbox (posted), or ``until`` passes."""
    while True:
        if not any(os.path.lexists(path) for path in paths):
            return True
        if time.monotonic() >= until:
            return False
        time.sleep(POLL)


def receipt_path(rt: runtime.Runtime, nonce: object) -> str | None:
    """``receipts/<nonce>.json``; None for a nonce that is not what :func:`new_nonce` makes."""
    if not isinstance(nonce, str) or not 0 < len(nonce) <= 25 or not nonce.isalnum():
        return None
    return rt.path("receipts", nonce + ".json")


def read_receipt(rt: runtime.Runtime, nonce: str) -> dict | None:
    """The posted message (``{"id": …}``) the bot recorded for a nonce; removed once read."""
    path = receipt_path(rt, nonce)
    if path is None:
        return None
    record = private_files.read_json(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return record


def write_receipt(rt: runtime.Runtime, nonce: object, message: dict) -> None:
    from bridge import fastjson

    path = receipt_path(rt, nonce)
    if path is None:
        return
    record = {"id": str(message.get("id", "")), "channel_id": str(message.get("channel_id", ""))}
    private_files.write_atomic(path, fastjson.dumps(record).encode())
