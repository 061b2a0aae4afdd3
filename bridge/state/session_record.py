"""What the SessionStart hook records about a session, for the bot to read back.

``sessions/<channel>.json`` holds the Claude ``session_id``, transcript path, cwd and pane of
the session serving that channel or thread, so the bot can resume the conversation after a
crash and tell which Claude session is which.
"""

from __future__ import annotations

import os

from bridge.state import private_files, runtime


def record_path(rt: runtime.Runtime, channel_id: str) -> str:
    return os.path.join(rt.sessions, f"{channel_id}.json")


def read_record(rt: runtime.Runtime, channel_id: str) -> dict | None:
    return private_files.read_json(record_path(rt, channel_id))


def write_record(rt: runtime.Runtime, channel_id: str, record: dict, durable: bool = True) -> None:
    """``durable=False``: not yet on disk (:func:`private_files.make_durable` it)."""
    from bridge import fastjson

    data = fastjson.dumps(record).encode()
    private_files.write_atomic(record_path(rt, channel_id), data, durable=durable)
