"""``away/`` (state dir): what the bridge does for the owner while they are away, per session.

* ``limit-<key>.json``: a session at a Claude.ai usage limit (the StopFailure hook writes it,
  the bot posts "⏸ Usage limit", resumes at the reset and removes it);
* ``budget-<key>.json``: a session stopped at its spend budget (the PreToolUse hook writes it,
  the bot asks **Continue (+$N)** / **Stop** and removes it);
* ``raise-<session>.json`` / ``raise-day-<YYYY-MM-DD>.json``: dollars **Continue** added to
  a session's budget, or to a day's;
* ``warned-<key>.json``: which 80 % warnings were posted.

``<key>`` is the channel or thread id. Durable and atomic like the outbox: a bot restart or a
reboot keeps a wait, a stop and a raise. Imported by hooks: ``os`` and small bridge modules.
"""

from __future__ import annotations

import os

from bridge import fastjson
from bridge.state import private_files, runtime

_MAX_BYTES = 1 << 14


def path(rt: runtime.Runtime, kind: str, name: str) -> str:
    """``away/<kind>-<name>.json``; ``name`` must be a plain name (ids, dates)."""
    if not name or not all(c.isalnum() or c in "-_" for c in name) or name.startswith("-"):
        raise ValueError(f"not a plain name: {name!r}")  # names become file names
    return rt.path("away", f"{kind}-{name}.json")


def load(rt: runtime.Runtime, kind: str, name: str) -> dict | None:
    return private_files.read_json(path(rt, kind, name), _MAX_BYTES)


def save(rt: runtime.Runtime, kind: str, name: str, record: dict) -> None:
    runtime.ensure_private_dir(rt.path("away"))
    private_files.write_atomic(path(rt, kind, name), fastjson.dumps(record).encode())


def update(rt: runtime.Runtime, kind: str, name: str, **changes: object) -> dict:
    record = {**(load(rt, kind, name) or {}), **changes}
    save(rt, kind, name, record)
    return record


def remove(rt: runtime.Runtime, kind: str, name: str) -> None:
    try:
        os.unlink(path(rt, kind, name))
    except FileNotFoundError:
        pass


def exists(rt: runtime.Runtime, kind: str, name: str) -> bool:
    return os.path.isfile(path(rt, kind, name))


def holds(rt: runtime.Runtime, name: str) -> bool:
    """Session ``name`` waits at a usage limit or was stopped at its spend budget: its
    queued prompts wait too (typed now, each would meet the same limit and end the wait)."""
    return bool(held_by(rt, name))


def held_by(rt: runtime.Runtime, name: str) -> str:
    """What holds session ``name``'s queued prompts: ``"limit"`` (a usage limit waited on),
    ``"budget"`` (its budget question not answered yet), ``"stopped"`` (the owner chose
    **Stop**: until their next prompt), or ``""``."""
    limit = load(rt, "limit", name)
    if limit and limit.get("state") == "waiting":
        return "limit"
    if not exists(rt, "budget", name):
        return ""
    budget = load(rt, "budget", name) or {}
    return "stopped" if budget.get("state") == "stopped" else "budget"


def all_of(rt: runtime.Runtime, kind: str) -> dict[str, dict]:
    """Every readable ``<kind>-*.json``, by name."""
    try:
        names = os.listdir(rt.path("away"))
    except OSError:
        return {}
    prefix = kind + "-"
    found = {}
    for file in sorted(names):
        if file.startswith(prefix) and file.endswith(".json"):
            name = file[len(prefix) : -len(".json")]
            try:
                record = load(rt, kind, name)
            except ValueError:
                continue
            if record is not None:
                found[name] = record
    return found


def raised(rt: runtime.Runtime, kind: str, name: str) -> float:
    """Dollars **Continue** added (``kind`` ``raise``: a session id; ``raise-day``: a date)."""
    try:
        value = (load(rt, kind, name) or {}).get("usd")
    except ValueError:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return 0.0
    return float(value)


def add_raise(rt: runtime.Runtime, kind: str, name: str, usd: float) -> float:
    """Add ``usd`` to a raise; returns the new total."""
    total = raised(rt, kind, name) + usd
    save(rt, kind, name, {"usd": total})
    return total
