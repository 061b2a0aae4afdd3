"""``audit/audit.jsonl`` (state dir): who did what, one JSON object per line, append-only.

Entries: a decision on a prompt (who, which session, the tool and its command or file, the
outcome with its scope, and where it was made: Discord, the terminal, the timeout), a slash
command or component that passed the one allowed-user check, a message typed into a session
(who, where, its length; its text only when ``audit.messageText`` asks).

Each entry is written as one ``write`` of one line to a file opened ``O_APPEND``: the bot and
the hooks append at once without tearing each other's lines. The line is JSON with every
non-ASCII and control character escaped, so nothing a user or the model wrote (a command, a
file name, a message) can end a line early or start a forged one; every text is cut to a
bound first. The folder is 0700, the file 0600, opened without following a link and only if
it is this user's private regular file. Past :data:`MAX_BYTES` the file is rotated under a
lock (``audit.jsonl.1`` … ``.3``, the oldest dropped). Imports ``os`` and ``time``: the
permission hook writes its terminal and timeout decisions here.
"""

from __future__ import annotations

import os
import stat
import time

from bridge import fastjson
from bridge.state import private_files, runtime

MAX_BYTES = 4 << 20  # a file this large is rotated
KEEP = 3  # rotated files kept
MAX_TEXT = 300  # characters of any text field (a command, a file, a name)
MAX_MESSAGE = 4000  # characters of a message's text, when the config asks for it


def path(rt: runtime.Runtime) -> str:
    return rt.path("audit", "audit.jsonl")


def record(rt: runtime.Runtime, kind: str, **fields: object) -> bool:
    """Append one entry; False (nothing written) when the trail cannot be written."""
    entry: dict[str, object] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "kind": kind,
    }
    for key, value in fields.items():
        if value is not None:
            entry[key] = _bounded(value, MAX_MESSAGE if key == "text" else MAX_TEXT)
    line = (fastjson.dumps(entry) + "\n").encode()
    try:
        runtime.ensure_private_dir(rt.path("audit"))
        size = _append(path(rt), line)
        if size > MAX_BYTES:
            _rotate(path(rt))
    except OSError:
        return False
    return True


def _bounded(value: object, limit: int) -> object:
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, bool | int | float) or value is None:
        return value
    return str(value)[:limit]


def _append(file: str, line: bytes) -> int:
    """One write of ``line`` to a private file of this user; the file's size after it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(file, flags, 0o600)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise OSError(f"{file} is not a private file of this user")
        os.write(fd, line)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def _rotate(file: str) -> None:
    with private_files.Lock(file):
        try:
            if os.lstat(file).st_size <= MAX_BYTES:
                return  # another writer rotated it meanwhile
        except FileNotFoundError:
            return
        for number in range(KEEP - 1, 0, -1):
            try:
                os.rename(f"{file}.{number}", f"{file}.{number + 1}")
            except FileNotFoundError:
                pass
        os.rename(file, f"{file}.1")


def recent(
    rt: runtime.Runtime, limit: int = 20, session: str | None = None, user: str | None = None
) -> list[dict]:
    """The last ``limit`` entries, newest first, of ``session`` (a channel or thread id) and
    ``user`` (a Discord user id) when given; lines that do not parse are skipped."""
    found: list[dict] = []
    for file in (path(rt), f"{path(rt)}.1"):
        try:
            data = private_files.read_private(file, MAX_BYTES * 2, own=True)
        except OSError:
            continue
        for line in reversed(data.splitlines()):
            try:
                entry = fastjson.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            if session is not None and entry.get("session") != session:
                continue
            if user is not None and entry.get("user") != user:
                continue
            found.append(entry)
            if len(found) >= limit:
                return found
    return found


SUBJECTS = ("command", "file_path", "notebook_path", "path", "url", "pattern", "query")
# Where a decision was made, by its outcome when no Discord user made it (state/decisions.py)
ELSEWHERE = {"answered_elsewhere": "terminal", "timeout": "timeout"}


def record_decision(rt: runtime.Runtime, request: object, decision: object) -> bool:
    """A prompt's decision (``decisions.decide`` made it): who, which session, the tool and
    its command or file, the outcome with its scope, and where: Discord, the terminal (an
    interrupt too: its ``event``), the timeout. Duck-typed ``Request`` / ``Decision``
    (``state/decisions.py`` imports this module only once a decision is made)."""
    tool_input = getattr(request, "tool_input", None) or {}
    subject = next(
        (tool_input[key] for key in SUBJECTS if isinstance(tool_input.get(key), str)), None
    )
    by = getattr(decision, "by", None)
    outcome = getattr(decision, "outcome", None)
    via = "discord" if by else ELSEWHERE.get(str(outcome), "bridge")
    return record(
        rt,
        "decision",
        user=by,
        name=getattr(decision, "by_name", None),
        session=getattr(request, "channel_id", None),
        project=getattr(request, "project", None),
        prompt=getattr(request, "kind", None),
        tool=getattr(request, "tool_name", None),
        subject=subject,
        outcome=outcome,
        scope=getattr(decision, "scope", None),
        via=via,
        event=getattr(decision, "event", None),
    )
