"""``tools/<channel>``: when the session's latest tool call started (its PreToolUse hook).

Between a tool call's PreToolUse and the permission dialog Claude Code may show for it, nothing
else tells the bot that a dialog is coming, and a key pressed then answers it: Claude Code
2.1.330 drew the dialog up to 670 ms after PreToolUse and the PermissionRequest hook wrote its
request up to 430 ms after it (``bench/dialog_timing.py``, two busy cores). The PreToolUse
hook touches this file (its mtime is the time); the bot's key gate
(``bridge/sessions/key_gate.py``) lets no key through until that moment is a grace period
behind it.

On the fast path of every tool call: ``os`` only, one ``open`` and one ``futimens``.
"""

from __future__ import annotations

import os
import stat

from bridge.state import runtime

SUBDIR = "tools"


def path(rt: runtime.Runtime, channel_id: str) -> str:
    if not (channel_id.isascii() and channel_id.isdigit()):
        raise ValueError(f"not a channel id: {channel_id!r}")
    return rt.path(SUBDIR, channel_id)


def started(rt: runtime.Runtime, channel_id: str) -> None:
    """A tool call of the channel's session starts now."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path(rt, channel_id), flags, 0o600)
    except OSError:  # no runtime dir yet (the bot never ran: no key is pressed), or a symlink
        return  # planted there: the hook's own work (permissionTools) must still be done
    try:
        os.utime(fd)  # now, also when the file was there already
    finally:
        os.close(fd)


def last_start(rt: runtime.Runtime, channel_id: str) -> float | None:
    """When the session's latest tool call started (``time.time()`` seconds), if known."""
    try:
        info = os.lstat(path(rt, channel_id))
    except OSError:
        return None
    return info.st_mtime if stat.S_ISREG(info.st_mode) else None
