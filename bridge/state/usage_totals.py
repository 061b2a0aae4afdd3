"""``usage/<YYYY-MM-DD>/<session_id>.json`` (state dir): what each session cost on each day.

Claude Code reports a session's running cost (``cost.total_cost_usd``) to the statusLine
command; that command (``bridge/handlers/status_line.py``) adds each increase to the
session's file for the local day it saw it, so "today across all sessions" is the sum of one
day's files. One file per session and day keeps writers apart (the statusLine commands of
different sessions run at once); each write is atomic. Durable: a reboot keeps the totals.
Imported by the statusLine command: ``os`` and ``time`` only.
"""

from __future__ import annotations

import os
import time

from bridge import fastjson
from bridge.state import private_files, runtime

KEEP_DAYS = 62  # day folders older than this are removed when a new day starts


def day(when: float | None = None) -> str:
    """The local date of ``when`` (default now) as ``YYYY-MM-DD``."""
    return time.strftime("%Y-%m-%d", time.localtime(when))


def add(rt: runtime.Runtime, session_id: str, amount: float, when: float | None = None) -> None:
    """Count ``amount`` dollars for ``session_id`` on the day of ``when``."""
    if not amount > 0:
        return
    folder = rt.path("usage", day(when))
    if not os.path.isdir(folder):
        runtime.ensure_private_dir(rt.path("usage"))
        _forget_old_days(rt)
        runtime.ensure_private_dir(folder)
    path = os.path.join(folder, f"{session_id}.json")
    record = private_files.read_json(path, 1 << 12) or {}
    cost = record.get("cost_usd")
    total = (cost if isinstance(cost, int | float) and not isinstance(cost, bool) else 0) + amount
    private_files.write_atomic(path, fastjson.dumps({"cost_usd": total}).encode())


def total(rt: runtime.Runtime, on: str | None = None) -> tuple[float, int]:
    """Dollars spent on day ``on`` (default today) across sessions, and how many sessions."""
    folder = rt.path("usage", on or day())
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith(".")]
    except OSError:
        return 0.0, 0
    spent, sessions = 0.0, 0
    for name in names:
        record = private_files.read_json(os.path.join(folder, name), 1 << 12) or {}
        cost = record.get("cost_usd")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
            spent += cost
            sessions += 1
    return spent, sessions


def _forget_old_days(rt: runtime.Runtime) -> None:
    cutoff = day(time.time() - KEEP_DAYS * 86400)
    try:
        names = os.listdir(rt.path("usage"))
    except OSError:
        return
    for name in names:
        if len(name) == 10 and name < cutoff:
            folder = rt.path("usage", name)
            try:
                for entry in os.listdir(folder):
                    os.unlink(os.path.join(folder, entry))
                os.rmdir(folder)
            except OSError:
                pass
