"""``progress/<channel>.jsonl``: turn events the hooks append and the bot reads.

Appends are one ``write`` each (whole lines even with several hooks at once), never follow a
symlink, and never grow a file nobody reads past :data:`MAX_BYTES`.
"""

from __future__ import annotations

import os

from bridge import fastjson
from bridge.state import private_files, runtime

MAX_BYTES = 4 << 20  # a progress file nobody drains (bot stopped) never grows past this


def path(rt: runtime.Runtime, channel_id: str) -> str:
    return os.path.join(rt.progress, f"{channel_id}.jsonl")


def append(rt: runtime.Runtime, channel_id: str, event: dict) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path(rt, channel_id), flags, 0o600)
    except FileNotFoundError:  # the bot never ran (no runtime dir yet): nobody would read it
        return
    try:
        if os.fstat(fd).st_size > MAX_BYTES:  # the bot has not read it for long: start afresh
            os.ftruncate(fd, 0)
        os.write(fd, (fastjson.dumps(event) + "\n").encode())  # one write: appends stay whole
    finally:
        os.close(fd)


def read_events(path: str, offset: int) -> tuple[list[dict], int]:
    """New whole lines of a progress file from ``offset``; returns them and the new offset."""

    try:
        data = private_files.read_private(path)
    except OSError:
        return [], offset
    if len(data) < offset:  # rotated
        offset = 0
    end = data.rfind(b"\n", offset) + 1
    events = []
    for line in data[offset:end].splitlines():
        try:
            event = fastjson.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("t"), int | float):
            events.append(event)
    return events, max(offset, end)
