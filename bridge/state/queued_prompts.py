"""``state/queued-<key>.json``: prompts waiting for the running turn of a session to end.

A message sent with the queue prefix (``>>``) or ``/queue`` while Claude works is not typed
into the turn (Claude Code would fold it in: steering) but kept here, and the bot types the
first one each time a turn of that session ends (``bridge/bot/turn/queue.py``), so each queued
prompt is a turn of its own, in the order they were sent. The file is durable state, written
atomically like the outbox: a bot restart or a reboot loses nothing. The bot is its only
writer; its changes run in worker threads (``asyncio.to_thread``), so each read-modify-write
holds :data:`_LOCK` (an add and a notice's update once raced and lost an entry).

:func:`queue_prompt` is what any part of the bot calls to say "type this into session X once
it is idle" (a scheduled prompt that finds its session busy, for one).
"""

from __future__ import annotations

import os
import threading
import time
import uuid

from bridge import fastjson
from bridge.state import private_files, runtime

MAX_QUEUED = 20  # per session: more is a mistake, not a plan
MAX_CHARS = 20_000  # of one queued prompt (Discord's own limit is 4,000 for Nitro)


_LOCK = threading.Lock()  # one read-modify-write of a queue file at a time


class QueueFull(ValueError):
    """The session already has :data:`MAX_QUEUED` prompts waiting."""


def _path(rt: runtime.Runtime, key: str) -> str:
    if not (key.isascii() and key.isdigit()):
        raise ValueError(f"not a channel id: {key!r}")  # keys become file names
    return os.path.join(rt.state, f"queued-{key}.json")


def entries(rt: runtime.Runtime, key: str) -> list[dict]:
    """The session's queued prompts, oldest first (unreadable entries skipped)."""
    try:
        record = private_files.read_json(_path(rt, key))
    except (OSError, ValueError):
        return []
    items = (record or {}).get("queued")
    if not isinstance(items, list):
        return []
    return [e for e in items if isinstance(e, dict) and _valid(e)]


def _valid(entry: dict) -> bool:
    return isinstance(entry.get("id"), str) and isinstance(entry.get("text"), str)


def _save(rt: runtime.Runtime, key: str, items: list[dict]) -> None:
    path = _path(rt, key)
    if not items:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    private_files.write_atomic(path, fastjson.dumps({"key": key, "queued": items}).encode())


def queue_prompt(
    rt: runtime.Runtime,
    key: str,
    text: str,
    source: str = "discord",
    message_id: str | None = None,
    author: str | None = None,
) -> dict:
    """Queue ``text`` (a prompt ready to type: sanitised and defused) for session ``key``;
    the bot types it when the session's running turn ends, after those queued before it.
    ``source`` says who queued it (``discord``, ``schedule``…); ``message_id``: the Discord
    message it came from (its ✅ comes once typed). Returns the entry; raises
    :class:`QueueFull`."""
    with _LOCK:
        return _add(rt, key, text, source, message_id, author)


def _add(
    rt: runtime.Runtime,
    key: str,
    text: str,
    source: str,
    message_id: str | None,
    author: str | None,
) -> dict:
    items = entries(rt, key)
    if len(items) >= MAX_QUEUED:
        raise QueueFull(f"{MAX_QUEUED} prompts are already queued here")
    entry = {
        "id": uuid.uuid4().hex[:12],
        "text": text[:MAX_CHARS],
        "source": source,
        "message_id": message_id,
        "author": author,
        "queued_at": time.time(),
    }
    _save(rt, key, [*items, entry])
    return entry


def update(rt: runtime.Runtime, key: str, entry_id: str, **changes: object) -> None:
    """Merge ``changes`` into one entry (its notice's message id, say)."""
    with _LOCK:
        items = entries(rt, key)
        for entry in items:
            if entry["id"] == entry_id:
                entry.update(changes)
        _save(rt, key, items)


def remove(rt: runtime.Runtime, key: str, entry_id: str) -> dict | None:
    """Take one entry out (typed or cancelled); the entry, or None if it was not there."""
    with _LOCK:
        items = entries(rt, key)
        kept = [e for e in items if e["id"] != entry_id]
        if len(kept) == len(items):
            return None
        _save(rt, key, kept)
        return next(e for e in items if e["id"] == entry_id)


def drop(rt: runtime.Runtime, key: str) -> list[dict]:
    """Forget everything of session ``key`` (its project was removed): its queued prompts,
    which are returned, and the messages it typed into a running turn."""
    with _LOCK:
        items = entries(rt, key)
        _save(rt, key, [])
        try:
            os.unlink(_steered_path(rt, key))
        except FileNotFoundError:
            pass
        return items


def keys_with_entries(rt: runtime.Runtime) -> list[str]:
    """Every session that has prompts queued."""
    try:
        names = os.listdir(rt.state)
    except FileNotFoundError:
        return []
    keys = [n[len("queued-") : -len(".json")] for n in names]
    return sorted(
        k
        for n, k in zip(names, keys, strict=True)
        if n.startswith("queued-") and n.endswith(".json") and k.isdigit()
    )


# --- messages typed into a running turn (steering), which the owner may still take back -----

MAX_STEERED = 20  # per session: the latest mid-turn messages whose receipt buttons still work


def _steered_path(rt: runtime.Runtime, key: str) -> str:
    _path(rt, key)  # the same check: only digits reach the file name
    return os.path.join(rt.state, f"steered-{key}.json")


def remember_steered(rt: runtime.Runtime, key: str, message_id: str, text: str) -> None:
    """``text`` (as typed) went into the running turn of ``key`` from Discord message
    ``message_id``: kept so that **⏭ After this turn** can take it back and queue it."""
    path = _steered_path(rt, key)
    with _LOCK:
        try:
            record = private_files.read_json(path) or {}
        except (OSError, ValueError):
            record = {}
        items = [e for e in record.get("steered") or [] if isinstance(e, dict)]
        items = items[-MAX_STEERED + 1 :]
        items.append({"message_id": message_id, "text": text[:MAX_CHARS], "at": time.time()})
        private_files.write_atomic(path, fastjson.dumps({"key": key, "steered": items}).encode())


def steered_text(rt: runtime.Runtime, key: str, message_id: str) -> str | None:
    """What message ``message_id`` typed into a running turn of ``key``, if remembered."""
    try:
        record = private_files.read_json(_steered_path(rt, key)) or {}
    except (OSError, ValueError):
        return None
    for entry in record.get("steered") or []:
        if isinstance(entry, dict) and entry.get("message_id") == message_id:
            text = entry.get("text")
            return text if isinstance(text, str) else None
    return None
