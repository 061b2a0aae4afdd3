"""What the SessionStart hook records about a session, for the bot to read back.

``sessions/<channel>.json`` holds the Claude ``session_id``, transcript path, cwd, pane and
``project_path`` (the directory of the project it served) of the session serving that channel
or thread, so the bot can resume the conversation after a crash and tell which Claude session
is which, and never resume it in another project (:func:`belongs_to`).
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


def remove_record(rt: runtime.Runtime, channel_id: str) -> None:
    """Forget the channel's conversation: nothing resumes it (its project was removed)."""
    if not (channel_id.isascii() and channel_id.isdigit()):
        raise ValueError(f"not a channel id: {channel_id!r}")  # ids become file names
    try:
        os.unlink(record_path(rt, channel_id))
    except FileNotFoundError:
        pass


def belongs_to(record: dict, project_path: str) -> bool:
    """The conversation ``record`` was recorded for the project at ``project_path``: its
    ``project_path`` is that directory; a record without one (written before it was kept, or
    by an adoption) by its ``cwd``: that directory or one inside it. Real paths compared."""
    recorded = record.get("project_path")
    if isinstance(recorded, str) and recorded:
        return _real(recorded) == _real(project_path)
    cwd = record.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return False
    root = _real(project_path)
    return os.path.commonpath([_real(cwd), root]) == root


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))
