"""``tools/<channel>.<tool_use_id>``: the session's tool calls that started and have not ended.

Between a tool call's PreToolUse and the permission dialog Claude Code may show for it, nothing
else tells the bot that a dialog is coming, and a key pressed then answers it: Claude Code
drew the dialog up to 1.15 s after PreToolUse and the PermissionRequest hook wrote its request
up to 1.08 s after it (``bench/dialog_timing.py``, two cores at load 11). The PreToolUse hook
creates one empty file per call (its mtime is when the call started), PostToolUse and
PostToolUseFailure remove it; the bot's key gate (``bridge/sessions/key_gate.py``) lets no
key through while a call that is still running started less than a grace period ago. A burst
of quick calls (each ended by its PostToolUse) holds nothing back; a call Claude Code
interrupted never reports its end, so the gate removes records older than the grace.

On the fast path of every tool call: ``os`` only, one ``open`` or one ``unlink``.
"""

from __future__ import annotations

import os
import stat
import time

from bridge.state import runtime

SUBDIR = "tools"
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
UNKNOWN_CALL = "call"  # an event without a usable tool_use_id


def _path(rt: runtime.Runtime, channel_id: str, call_id: object) -> str:
    if not (channel_id.isascii() and channel_id.isdigit()):
        raise ValueError(f"not a channel id: {channel_id!r}")
    usable = isinstance(call_id, str) and 0 < len(call_id) <= 128 and set(call_id) <= _ID_CHARS
    return rt.path(SUBDIR, f"{channel_id}.{call_id if usable else UNKNOWN_CALL}")


def started(rt: runtime.Runtime, channel_id: str, call_id: object) -> None:
    """Tool call ``call_id`` (the event's ``tool_use_id``) of the channel's session starts."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(_path(rt, channel_id, call_id), flags, 0o600)
    except OSError:  # no runtime dir yet (the bot never ran: no key is pressed), or a symlink
        return  # planted there: the hook's own work (permissionTools) must still be done
    try:
        os.utime(fd)  # now, also when the file was there already
    finally:
        os.close(fd)


def finished(rt: runtime.Runtime, channel_id: str, call_id: object) -> None:
    """Tool call ``call_id`` ended (PostToolUse, PostToolUseFailure): it asks nothing more."""
    try:
        os.unlink(_path(rt, channel_id, call_id))
    except OSError:
        pass


def latest_start(rt: runtime.Runtime, channel_id: str, within: float) -> float | None:
    """When the latest of the session's running tool calls that started within the last
    ``within`` seconds started (``time.time()``), or None. Older records go: bot side only."""
    prefix = f"{channel_id}."
    directory = rt.path(SUBDIR)
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix)]
    except OSError:
        return None
    now, latest = time.time(), None
    for name in names:
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue  # ended meanwhile
        if not stat.S_ISREG(info.st_mode):
            continue
        if 0 <= now - info.st_mtime < within:
            latest = max(latest or 0.0, info.st_mtime)
        elif now - info.st_mtime >= within:
            try:
                os.unlink(path)  # interrupted (no PostToolUse comes), or running long past it
            except OSError:
                pass
    return latest
