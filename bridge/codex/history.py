"""A project's past Codex conversations, from Codex's own rollouts (``/history``, ``/resume``).

Codex keeps one JSONL rollout per conversation in
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`` (measured on 0.171.0
and 0.150.1): its first line is ``session_meta``, whose ``payload.cwd`` is where it ran (the
rollouts of every project share the folder); typed prompts are ``response_item`` messages of
role ``user`` (Codex's own context blocks among them start with ``<``), answers those of
role ``assistant`` and ``task_complete``'s ``last_agent_message``. The same
:class:`Conversation` as Claude Code's history, so ``/history`` lists either. Only the start
and the end of a file are read, links and anything but regular files never followed, and
only a name in Codex's shape (``launch.is_session_id``) is ever looked up.
"""

from __future__ import annotations

import os
import re
import stat

from bridge.claude.history import HEAD_BYTES, TAIL_BYTES, Conversation, _read, _record
from bridge.claude.transcript import epoch
from bridge.codex import launch
from bridge.codex.hooks_file import codex_home

ROLLOUT = re.compile(r"rollout-[0-9T-]+-(?P<id>[0-9a-fA-F-]{36})\.jsonl")
SCANNED = 2000  # newest rollouts whose first line is read (the folder holds every project's)
LISTED = 500  # newest conversations of a project summarised
META_BYTES = 1 << 20  # the longest session_meta line read (0.171.0's: ~22 KB, instructions)


def sessions_dir(home: str | None = None) -> str:
    return os.path.join(home or codex_home(), "sessions")


def conversations(cwd: str, home: str | None = None) -> list[Conversation]:
    """The conversations Codex ran in ``cwd``, newest first."""
    found = []
    for mtime, path, size in _rollouts(sessions_dir(home))[:SCANNED]:
        if _ran_in(path, cwd):
            conversation = summarize(path, mtime, size)
            if conversation is not None:
                found.append(conversation)
            if len(found) >= LISTED:
                break
    return found


def find(cwd: str, session_id: str, home: str | None = None) -> Conversation | None:
    """One conversation of ``cwd`` by id (an id from Discord is checked here: only a rollout
    that ran in that project is ever named)."""
    if not launch.is_session_id(session_id):
        return None
    for mtime, path, size in _rollouts(sessions_dir(home)):
        if path.endswith(f"-{session_id}.jsonl") and _ran_in(path, cwd):
            return summarize(path, mtime, size)
    return None


def summarize(path: str, mtime: float, size: int) -> Conversation | None:
    match = ROLLOUT.fullmatch(os.path.basename(path))
    if match is None or not launch.is_session_id(match["id"]):
        return None
    partial = size > HEAD_BYTES + TAIL_BYTES
    body = _read(path, 0, HEAD_BYTES if partial else size)
    if body is None:
        return None
    if partial:  # whole lines of its start and of its end
        tail = _read(path, size - TAIL_BYTES, TAIL_BYTES) or b""
        body = body[: body.rfind(b"\n") + 1] + tail[tail.find(b"\n") + 1 :]
    started, prompts, first, reply = None, 0, "", ""
    for line in body.splitlines():
        record = _record(line)
        if record is None:
            continue
        if started is None:
            started = epoch(record.get("timestamp"))
        payload = record.get("payload")
        payload = payload if isinstance(payload, dict) else {}
        text = typed_prompt(record.get("type"), payload)
        if text:
            prompts += 1
            first = first or text
        reply = answer_text(record.get("type"), payload) or reply
    if not prompts:
        return None  # nothing was asked: not a conversation to resume
    session_id = match["id"].lower()
    return Conversation(session_id, path, started, mtime, first, reply, prompts, partial, size)


def answer_text(kind: object, payload: dict) -> str:
    """The text of an answer of the model: an assistant message (written as it completes,
    before the Stop hook runs), or a turn's ``task_complete``."""
    if kind == "event_msg" and payload.get("type") == "task_complete":
        last = payload.get("last_agent_message")
        return last if isinstance(last, str) else ""
    if kind != "response_item" or payload.get("type") != "message":
        return ""
    if payload.get("role") != "assistant":
        return ""
    return _texts(payload.get("content"), "output_text")


def typed_prompt(kind: object, payload: dict) -> str:
    """The text a person typed, from a rollout line: a user message that is not one of
    Codex's own context blocks (``<environment_context>`` and the like)."""
    if kind != "response_item" or payload.get("type") != "message" or payload.get("role") != "user":
        return ""
    text = _texts(payload.get("content"), "input_text")
    return "" if text.startswith("<") else text


def _texts(content: object, kind: str) -> str:
    """The ``kind`` blocks' text of a message's content, joined."""
    blocks = content if isinstance(content, list) else []
    texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == kind]
    return "\n".join(t for t in texts if isinstance(t, str)).strip()


def session_cwd(path: str) -> str | None:
    """The directory a rollout's conversation ran in: its first line's ``session_meta``."""
    head = _read(path, 0, 64 << 10) or b""
    if b"\n" not in head and len(head) == 64 << 10:
        head = _read(path, 0, META_BYTES) or b""
    record = _record(head.split(b"\n", 1)[0])
    if record is None or record.get("type") != "session_meta":
        return None
    payload = record.get("payload")
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None


def _ran_in(path: str, cwd: str) -> bool:
    ran = session_cwd(path)
    return ran is not None and _real(ran) == _real(cwd)


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _rollouts(folder: str) -> list[tuple[float, str, int]]:
    """(mtime, path, size) of every rollout under ``folder``'s ``YYYY/MM/DD``, newest first;
    links are not followed."""
    files = []
    for year in _subdirs(folder):
        for month in _subdirs(year):
            for day in _subdirs(month):
                try:
                    entries = list(os.scandir(day))
                except OSError:
                    continue
                for entry in entries:
                    if ROLLOUT.fullmatch(entry.name) is None:
                        continue
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISREG(info.st_mode):
                        files.append((info.st_mtime, entry.path, info.st_size))
    files.sort(reverse=True)
    return files


def _subdirs(folder: str) -> list[str]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    return [e.path for e in entries if e.name.isdigit() and e.is_dir(follow_symlinks=False)]
