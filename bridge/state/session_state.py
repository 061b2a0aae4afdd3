"""The bot's record of each session it serves, one atomic JSON file per channel or thread.

``state/<key>.json`` (key = the channel id, or the thread id for a thread session) holds what
the bot needs to find, resume or clean up the session after a restart: project, thread, pane,
working directory, worktree, and whether the user wants it running. The Claude ``session_id``
is not copied here: the SessionStart hook's record (``bridge.state.session_record``) is its source.
"""

from __future__ import annotations

import os
import time

from bridge import fastjson
from bridge.state import private_files, runtime, session_record


def _path(rt: runtime.Runtime, key: str) -> str:
    if not (key.isascii() and key.isdigit()):
        raise ValueError(f"not a channel id: {key!r}")  # keys become file names
    return os.path.join(rt.state, f"{key}.json")


def load(rt: runtime.Runtime, key: str) -> dict | None:
    return private_files.read_json(_path(rt, key))


def save(rt: runtime.Runtime, key: str, record: dict) -> dict:
    record = {**record, "key": key, "updated_at": time.time()}
    private_files.write_atomic(_path(rt, key), fastjson.dumps(record).encode())
    return record


def update(rt: runtime.Runtime, key: str, **changes: object) -> dict:
    """Merge ``changes`` into the key's record (created if missing). The bot is the only
    writer and serialises per key, so read-modify-write is safe."""
    return save(rt, key, {**(load(rt, key) or {}), **changes})


def remove(rt: runtime.Runtime, key: str) -> None:
    try:
        os.unlink(_path(rt, key))
    except FileNotFoundError:
        pass


def all_records(rt: runtime.Runtime) -> list[dict]:
    """Every session record (panel records and unreadable files skipped)."""
    try:
        names = sorted(os.listdir(rt.state))
    except FileNotFoundError:
        return []
    records = []
    for name in names:
        key = name[: -len(".json")] if name.endswith(".json") else ""
        if key.isdigit() and (record := load(rt, key)) is not None:
            records.append(record)
    return records


def resumable_session(rt: runtime.Runtime, key: str, project_path: str) -> str | None:
    """The Claude session id last recorded for ``key`` if it can be resumed in the project at
    ``project_path``: its transcript exists (``--resume`` on an empty conversation fails) and
    it was recorded for that project (``--resume`` would carry a conversation into another
    folder: the channel mapped again elsewhere must not go on with the old one)."""
    record = session_record.read_record(rt, key)
    if not record:
        return None
    session_id, transcript = record.get("session_id"), record.get("transcript_path")
    if not isinstance(session_id, str) or not isinstance(transcript, str):
        return None
    if not session_record.belongs_to(record, project_path):
        return None
    return session_id if os.path.isfile(transcript) else None


def load_panel(rt: runtime.Runtime, channel_id: str) -> dict:
    """The control panel's record in ``channel_id``: ``{"message_id": …}`` or empty."""
    return private_files.read_json(_panel_path(rt, channel_id)) or {}


def save_panel(rt: runtime.Runtime, channel_id: str, record: dict) -> None:
    private_files.write_atomic(_panel_path(rt, channel_id), fastjson.dumps(record).encode())


def _panel_path(rt: runtime.Runtime, channel_id: str) -> str:
    _path(rt, channel_id)  # the same check: only digits reach the file name
    return os.path.join(rt.state, f"panel-{channel_id}.json")
