"""A project's past conversations, from Claude Code's own transcripts (``/history``).

The CLI keeps one JSONL transcript per conversation in ``~/.claude/projects/<dir>/<id>.jsonl``
(``$CLAUDE_CONFIG_DIR`` instead of ``~/.claude`` when set), ``<dir>`` being the working
directory with every character but ASCII letters and digits made ``-`` (measured with 2.1.332:
``/tmp/a_b/project-a`` → ``-tmp-a-b-project-a``). What a list needs of each: when (its first
and last record), its first prompt, its last reply, how long (prompts and bytes). Only the
first :data:`HEAD_BYTES` and the last :data:`TAIL_BYTES` of a file are read, so a long
conversation costs no more than a short one; the prompt count is then a lower bound (``+``).
Links and anything but regular files are never followed or read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from bridge import fastjson
from bridge.claude.transcript import epoch

HEAD_BYTES = 256 << 10
TAIL_BYTES = 256 << 10
MAX_LISTED = 500  # newest transcripts summarised per project (older ones are not listed)


@dataclass(frozen=True)
class Conversation:
    session_id: str
    path: str
    started: float | None  # epoch seconds of its first record
    updated: float  # the file's last change
    first_prompt: str
    last_reply: str
    prompts: int  # human prompts seen (all of them unless ``partial``)
    partial: bool  # the middle of a long file was not read
    size: int  # bytes


def config_dir(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    env = os.environ if env is None else env
    if env.get("CLAUDE_CONFIG_DIR"):
        return env["CLAUDE_CONFIG_DIR"]
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")


def project_dir(cwd: str, claude_dir: str | None = None) -> str:
    """Where the CLI keeps the transcripts of sessions started in ``cwd``."""
    encoded = "".join(c if c.isascii() and c.isalnum() else "-" for c in os.path.abspath(cwd))
    return os.path.join(claude_dir or config_dir(), "projects", encoded)


def conversations(cwd: str, claude_dir: str | None = None) -> list[Conversation]:
    """The conversations started in ``cwd``, newest first."""
    folder = project_dir(cwd, claude_dir)
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".jsonl")]
    except OSError:
        return []
    files = []
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and is_session_name(entry.name[: -len(".jsonl")]):
            files.append((info.st_mtime, entry.path, info.st_size))
    files.sort(reverse=True)
    found = []
    for mtime, path, size in files[:MAX_LISTED]:
        conversation = summarize(path, mtime, size)
        if conversation is not None:
            found.append(conversation)
    return found


def find(cwd: str, session_id: str, claude_dir: str | None = None) -> Conversation | None:
    """One conversation of ``cwd`` by id (an id from Discord is checked here: only a
    transcript in that project's folder is ever named)."""
    if not is_session_name(session_id):
        return None
    path = os.path.join(project_dir(cwd, claude_dir), f"{session_id}.jsonl")
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return summarize(path, info.st_mtime, info.st_size)


def is_session_name(value: str) -> bool:
    return 8 <= len(value) <= 40 and all(c in "0123456789abcdef-" for c in value)


def summarize(path: str, mtime: float, size: int) -> Conversation | None:
    partial = size > HEAD_BYTES + TAIL_BYTES
    body = _read(path, 0, HEAD_BYTES if partial else size)
    if body is None:
        return None
    if partial:  # whole lines of its start and of its end
        tail = _read(path, size - TAIL_BYTES, TAIL_BYTES) or b""
        body = body[: body.rfind(b"\n") + 1] + tail[tail.find(b"\n") + 1 :]
    started, prompts, first, reply_id = None, 0, "", None
    reply: list[str] = []
    for line in body.splitlines():
        record = _record(line)
        if record is None:
            continue
        if started is None:
            started = epoch(record.get("timestamp"))
        text = human_prompt(record)
        if text:
            prompts += 1
            first = first or text
        texts, message_id = assistant_text(record)
        if texts:  # the newest assistant message's texts (its blocks share message.id)
            reply = reply + texts if message_id == reply_id else texts
            reply_id = message_id
    if not prompts:
        return None  # nothing was asked: not a conversation to resume
    name = os.path.basename(path)[: -len(".jsonl")]
    return Conversation(name, path, started, mtime, first, "\n".join(reply), prompts, partial, size)


def assistant_text(record: dict) -> tuple[list[str], object]:
    """The text blocks of a main-thread assistant record, and its message id."""
    if record.get("type") != "assistant" or record.get("isSidechain"):
        return [], None
    message = record.get("message")
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return [t for t in texts if isinstance(t, str) and t], message.get("id")


def human_prompt(record: dict) -> str:
    """The text of a prompt a person typed (not a tool result, not the CLI's own meta
    lines), or ``""``."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isSidechain"):
        return ""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = "\n".join(t for t in texts if isinstance(t, str))
    if not isinstance(content, str) or content.startswith(("<command-", "<local-command")):
        return ""
    return content.strip()


def _record(line: bytes) -> dict | None:
    try:
        record = fastjson.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _read(path: str, offset: int, limit: int) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.pread(fd, limit, offset)
    except OSError:
        return None
    finally:
        os.close(fd)
