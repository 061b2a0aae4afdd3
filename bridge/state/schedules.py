"""Scheduled prompts, one private JSON file each: ``schedules/<id>.json`` in the state dir.

Durable (they must survive a reboot: a prompt missed while the machine was off runs once at
the next start), written atomically and read without following a link
(``bridge.state.private_files``), in a 0700 folder. One file per entry, so that two bots of
one process (two configured servers) never rewrite each other's::

    {"id": "3f9a01c2", "server": "home", "key": "<channel or thread id>",
     "prompt": "…", "rule": {"kind": "daily", "time": "09:00"}  (bridge/schedule_times.py),
     "start": false,            start the session if it is stopped (else skip with a note)
     "paused": false, "next_run": <epoch>, "created_at": <epoch>, "created_by": "<user id>",
     "last_run": <epoch> | null, "last_result": "typed" | "skipped: …" | null}

A file that does not read as such an entry (hand-edited, another version's) is left alone and
not run: :func:`load` says None.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import asdict, dataclass, field

from bridge import fastjson
from bridge.state import private_files, runtime

SUBDIR = "schedules"
MAX_PROMPT = 4000  # characters: one Discord message's worth of prompt, with room
KINDS = ("once", "daily", "weekdays", "hours", "cron")


@dataclass
class Schedule:
    id: str
    server: str
    key: str
    prompt: str
    rule: dict
    next_run: float | None
    start: bool = False
    paused: bool = False
    created_at: float = field(default_factory=time.time)
    created_by: str = ""
    last_run: float | None = None
    last_result: str | None = None

    @property
    def once(self) -> bool:
        return self.rule.get("kind") == "once"


def new_id() -> str:
    return secrets.token_hex(4)


def is_valid_id(value: str) -> bool:
    return len(value) == 8 and all(c in "0123456789abcdef" for c in value)


def directory(rt: runtime.Runtime) -> str:
    return runtime.ensure_private_dir(rt.path(SUBDIR))


def _path(rt: runtime.Runtime, schedule_id: str) -> str:
    if not is_valid_id(schedule_id):
        raise ValueError(f"not a schedule id: {schedule_id!r}")  # ids become file names
    return os.path.join(directory(rt), schedule_id + ".json")


def save(rt: runtime.Runtime, entry: Schedule) -> None:
    private_files.write_atomic(_path(rt, entry.id), fastjson.dumps(asdict(entry)).encode())


def load(rt: runtime.Runtime, schedule_id: str) -> Schedule | None:
    if not is_valid_id(schedule_id):
        return None
    return from_record(private_files.read_json(_path(rt, schedule_id), 64 << 10))


def remove(rt: runtime.Runtime, schedule_id: str) -> bool:
    """Delete an entry; True if it was there."""
    try:
        os.unlink(_path(rt, schedule_id))
    except FileNotFoundError:
        return False
    return True


def all_entries(rt: runtime.Runtime, server: str | None = None) -> list[Schedule]:
    """Every readable entry (of ``server``), soonest first (paused and finished ones last)."""
    try:
        names = os.listdir(directory(rt))
    except FileNotFoundError:
        return []
    entries = []
    for name in names:
        schedule_id = name[: -len(".json")] if name.endswith(".json") else ""
        entry = load(rt, schedule_id)
        if entry is not None and (server is None or entry.server == server):
            entries.append(entry)
    return sorted(entries, key=lambda e: (e.paused, e.next_run is None, e.next_run or 0.0, e.id))


def from_record(record: dict | None) -> Schedule | None:
    """An entry from its file's JSON, or None when it is not one (nothing guessed)."""
    if not isinstance(record, dict):
        return None
    try:
        entry = Schedule(**{k: record[k] for k in Schedule.__dataclass_fields__ if k in record})
    except TypeError:  # a required field missing
        return None
    texts = (entry.id, entry.server, entry.key, entry.prompt, entry.created_by)
    if not all(isinstance(t, str) for t in texts) or not is_valid_id(entry.id):
        return None
    if not (entry.key.isascii() and entry.key.isdigit()) or not 0 < len(entry.prompt) <= MAX_PROMPT:
        return None
    if not isinstance(entry.rule, dict) or entry.rule.get("kind") not in KINDS:
        return None
    if entry.next_run is not None and not _number(entry.next_run):
        return None
    if not isinstance(entry.start, bool) or not isinstance(entry.paused, bool):
        return None
    return entry


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
