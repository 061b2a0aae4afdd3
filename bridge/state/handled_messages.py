"""``state/handled-<key>.json``: where the bot is in a channel's or thread's messages.

Discord does not replay messages to a bot that identifies afresh, so the bot keeps, per
channel or thread (``key``), the id of the last message it handled (``last``); when it is back
it reads the history after it (``bridge/bot/turn/catchup.py``). Message ids grow with time and a
channel's messages are handled in order, one at a time, so everything up to ``last`` is done
and a message id at or below it is never handled again (a history page repeated or overlapping
types nothing twice).

``typing`` is the message being typed right now: its id, when typing began and a digest of the
prompt. A bot killed after Enter but before ``last`` moved on leaves it behind, and the catch-up
asks Claude Code's transcript whether that prompt arrived, rather than type it again.
``offers``: messages too old to type unasked, answered with **Send now** / **Drop**, until
one is clicked.

The file is private, written atomically without following a link (``private_files``) and read
only when it is this user's own private regular file: a link, someone else's file or a file of
the wrong shape reads as no record (the bot then starts from the channel's newest message,
typing nothing it cannot prove is new).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from bridge import fastjson
from bridge.state import private_files, runtime

MAX_OFFERS = 50  # Send now / Drop buttons kept answerable per channel


@dataclass
class Typing:
    """The message whose prompt is being typed: ``at`` (epoch seconds) just before typing."""

    message_id: int
    at: float
    digest: str


@dataclass
class Handled:
    last: int  # every message of the channel up to this id is handled
    typing: Typing | None = None
    offers: list[int] = field(default_factory=list)


def _path(rt: runtime.Runtime, key: str) -> str:
    if not (key.isascii() and key.isdigit()):
        raise ValueError(f"not a channel id: {key!r}")  # keys become file names
    return os.path.join(rt.state, f"handled-{key}.json")


def load(rt: runtime.Runtime, key: str) -> Handled | None:
    """The key's record; None when there is none, or none the bot can trust."""
    record = private_files.read_json(_path(rt, key), max_bytes=64 << 10, own=True)
    if record is None:
        return None
    last = _snowflake(record.get("last"))
    if last is None:
        return None
    typing = record.get("typing")
    offers = record.get("offers")
    return Handled(
        last=last,
        typing=_typing(typing) if isinstance(typing, dict) else None,
        offers=[o for o in map(_snowflake, offers) if o] if isinstance(offers, list) else [],
    )


def save(rt: runtime.Runtime, key: str, handled: Handled, durable: bool = True) -> None:
    """``durable=False``: atomic and seen by the next process, not yet on disk (what a bot
    killed needs; a machine that loses power may lose it)."""
    record: dict = {"key": key, "last": str(handled.last)}
    if handled.typing is not None:
        t = handled.typing
        record["typing"] = {"id": str(t.message_id), "at": t.at, "digest": t.digest}
    if handled.offers:
        record["offers"] = [str(o) for o in handled.offers[-MAX_OFFERS:]]
    private_files.write_atomic(_path(rt, key), fastjson.dumps(record).encode(), durable=durable)


def remove(rt: runtime.Runtime, key: str) -> None:
    """The record goes with its channel's project: mapped again, the channel starts from its
    newest message, never typing what was said there while it was no project's."""
    try:
        os.unlink(_path(rt, key))
    except FileNotFoundError:
        pass


def _snowflake(value: object) -> int | None:
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 21:
        return int(value)
    return None


def _typing(raw: dict) -> Typing | None:
    message_id, at, digest = _snowflake(raw.get("id")), raw.get("at"), raw.get("digest")
    if message_id is None or not isinstance(at, (int, float)) or not isinstance(digest, str):
        return None
    return Typing(message_id, float(at), digest)
