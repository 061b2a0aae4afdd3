"""Which adopted Claude Code session posts where: one record per Claude ``session_id``.

A session the bridge did not start (``/sessions`` → Adopt: ``bridge/sessions/adoption.py``)
carries none of the bridge's env markers, so its hooks cannot tell whose they are from their
environment, and guessing from the cwd would send a stranger's session to a channel. At
adoption the bot records the conversation's ``session_id`` here (``adopted/<id>.json`` in the
private state dir: written atomically, read without following links); every hook event
carries that id (``bridge/handlers/context.py``). Release keeps the record, marked released:
from then on that session's hooks post nowhere, as before it was adopted, even in a project's
directory. Only the standard library's ``os`` at import: hooks read this on their fast path.
"""

from __future__ import annotations

import os

from bridge.state import private_files, runtime


def is_session_id(value: object) -> bool:
    """A Claude session id as the CLI makes them (a UUID): safe as a file name."""
    return (
        isinstance(value, str) and 8 <= len(value) <= 64 and value.isascii()
        and all(c.isalnum() or c == "-" for c in value)
    )  # fmt: skip


def record_path(rt: runtime.Runtime, session_id: str) -> str:
    if not is_session_id(session_id):
        raise ValueError(f"not a Claude session id: {session_id[:70]!r}")
    return os.path.join(rt.path("adopted"), f"{session_id}.json")


def lookup(rt: runtime.Runtime, session_id: object) -> dict | None:
    """The adoption of ``session_id`` (``released`` set once given back), or None."""
    if not isinstance(session_id, str) or not is_session_id(session_id):
        return None
    return private_files.read_json(record_path(rt, session_id), 1 << 14)


def adopt(rt: runtime.Runtime, session_id: str, key: str, project: str, parent_id: str) -> dict:
    """Route ``session_id``'s hooks to thread ``key`` of ``project`` (channel ``parent_id``)."""
    from bridge import fastjson

    record = {"session_id": session_id, "key": key, "project": project, "parent_id": parent_id}
    os.makedirs(rt.path("adopted"), 0o700, exist_ok=True)
    private_files.write_atomic(record_path(rt, session_id), fastjson.dumps(record).encode())
    return record


def release(rt: runtime.Runtime, session_id: str) -> None:
    """Its hooks post nowhere from now on (the record stays, so the cwd does not route them)."""
    from bridge import fastjson

    record = lookup(rt, session_id) or {"session_id": session_id}
    record["released"] = True
    private_files.write_atomic(record_path(rt, session_id), fastjson.dumps(record).encode())
