"""schemaVersion 1 files (gnsrtk's first format): one bot at the top level.

A v1 file holds ``discord``, ``tmux`` and ``projects`` (and may hold the other per-bot keys)
at the top instead of in ``servers[]``. It is read as its schemaVersion 2 equivalent, the
same way gnsrtk's ``migrate_config.py`` converts it; the file itself is rewritten as v2 only
when the bridge must write it (a new thread), and the original is kept as a backup.

On the hooks' fast path: no imports beyond ``os``.
"""

from __future__ import annotations

import os

# Keys of one bot (a ``servers[]`` entry) that a v1 file holds at its top level.
SERVER_KEYS = ("name", "discord", "tmux", "permissionTools", "generalChannelId", "projects")
BACKUP_SUFFIX = ".v1.bak"


def is_v1(raw: object) -> bool:
    return isinstance(raw, dict) and raw.get("schemaVersion") == 1 and "servers" not in raw


def upgrade(raw: dict) -> dict:
    """The schemaVersion 2 equivalent of a v1 file (key order kept; ``servers`` takes the
    place of the first per-bot key); anything else is returned unchanged."""
    if not is_v1(raw):
        return raw
    server = {key: raw[key] for key in SERVER_KEYS if key in raw}
    upgraded: dict = {}
    for key, value in raw.items():
        if key == "schemaVersion":
            upgraded[key] = 2
        elif key in SERVER_KEYS:
            if "servers" not in upgraded:
                upgraded["servers"] = [server]
        else:
            upgraded[key] = value
    upgraded.setdefault("servers", [server])
    return upgraded


def backup_path(path: str) -> str:
    """Where the original of a v1 file is kept: ``config.json.v1.bak``, or the first free
    ``config.json.v1.bak.<n>`` (an earlier backup is never overwritten)."""
    candidate = path + BACKUP_SUFFIX
    n = 1
    while os.path.lexists(candidate):
        candidate = f"{path}{BACKUP_SUFFIX}.{n}"
        n += 1
    return candidate
