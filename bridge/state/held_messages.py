"""Messages held back while Claude Code shows a screen (a dialog no hook reports).

One private file per channel or thread, ``screens/<key>.json`` in the runtime directory::

    {"fingerprint": "…", "prompt_message_id": "…",        the screen prompt posted for it
     "messages": [{"id": "…", "channel_id": "…", "prompt": "…"}, …]}

The bot writes it when a message cannot be typed because of such a screen, and types the
messages, in order, once the input box is back: a bot restart in between loses nothing.
"""

from __future__ import annotations

import os

from bridge import fastjson
from bridge.state import private_files, runtime

SUBDIR = "screens"


def _path(rt: runtime.Runtime, key: str) -> str:
    if not (key.isascii() and key.isdigit()):
        raise ValueError(f"not a channel id: {key!r}")
    return rt.path(SUBDIR, key + ".json")


def load(rt: runtime.Runtime, key: str) -> dict:
    record = private_files.read_json(_path(rt, key)) or {}
    messages = record.get("messages")
    record["messages"] = (
        [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    )
    return record


def save(rt: runtime.Runtime, key: str, record: dict) -> None:
    runtime.ensure_private_dir(rt.path(SUBDIR))
    private_files.write_atomic(_path(rt, key), fastjson.dumps(record).encode())


def hold(rt: runtime.Runtime, key: str, message_id: str, channel_id: str, prompt: str) -> dict:
    """Add a message to the channel's held messages; returns the record."""
    record = load(rt, key)
    if not any(m.get("id") == message_id for m in record["messages"]):
        record["messages"].append({"id": message_id, "channel_id": channel_id, "prompt": prompt})
    save(rt, key, record)
    return record


def clear(rt: runtime.Runtime, key: str) -> None:
    try:
        os.unlink(_path(rt, key))
    except FileNotFoundError:
        pass
