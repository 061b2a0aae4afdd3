"""``status/<session_id>.json``: what Claude Code last told the statusLine command about a
session (model, context %, cost, rate-limit usage), kept for the reply footer."""

from __future__ import annotations

import os

from bridge import fastjson
from bridge.state import private_files, runtime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from typing import TypeGuard

_MAX_SESSION_ID = 128
_SESSION_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_MAX_BYTES = 1 << 16


def read_status(rt: runtime.Runtime, session_id: object) -> dict | None:
    """The cached record of ``session_id``, or None if there is none (or it is unreadable)."""
    if not is_safe_session_id(session_id):
        return None
    return private_files.read_json(status_path(rt, session_id), _MAX_BYTES)


def write_status(rt: runtime.Runtime, session_id: str, record: dict) -> str:
    """Cache ``record``; a refresh with nothing new skips the write and its fsync."""
    path = status_path(rt, session_id)
    data = fastjson.dumps(record).encode()
    try:
        if private_files.read_private(path, _MAX_BYTES) == data:
            return path
    except OSError:
        pass
    private_files.write_atomic(path, data)
    return path


def status_path(rt: runtime.Runtime, session_id: str) -> str:
    return os.path.join(rt.status, f"{session_id}.json")


def is_safe_session_id(session_id: object) -> TypeGuard[str]:
    """Claude session ids are UUIDs; anything that is not a plain name never becomes a path."""
    return (
        isinstance(session_id, str)
        and 0 < len(session_id) <= _MAX_SESSION_ID
        and not session_id.startswith("-")
        and all(ch in _SESSION_ID_CHARS for ch in session_id)
    )
