"""Reading Claude Code's session transcript (a JSONL file the CLI appends to).

Two things the bridge reads there: the newest assistant text (the reply, when a Stop event
lacks ``last_assistant_message``; the streamed text, for CLIs without MessageDisplay), and
whether the turn was interrupted (Esc, or "No" in a terminal dialog) after a given offset.
And whether a prompt the bot typed arrived (the catch-up after a bot killed mid-typing).
"""

from __future__ import annotations

import os

from bridge import fastjson

INTERRUPTED = "[Request interrupted by user"  # the text of the CLI's interrupt record
_INTERRUPTED_BYTES = INTERRUPTED.encode()
READ_LIMIT = 1 << 20  # bytes read past an offset when looking for an interrupt
TAIL_LIMIT = 32 << 20  # bytes read from a transcript's end when looking for the reply
USAGE_TAIL = 1 << 20  # bytes read from its end when looking for the last API usage
USAGE_FIRST_LOOK = 64 << 10  # bytes read first: the last answer's record is near the end
PROMPT_TAIL = 4 << 20  # bytes read from its end when looking for a prompt just typed
PROMPT_CLOCK_SLACK = 1.0  # seconds: the CLI's millisecond stamps against our clock


def reply_text(event: dict) -> str:
    """``last_assistant_message``; the transcript only when the event lacks that key (an
    empty message is an answer: the transcript could still hold an older one)."""
    return reply_and_note(event)[0]


def reply_and_note(event: dict) -> tuple[str, str]:
    """:func:`reply_text`, and a note for the channel when the transcript was too large to
    read whole (only its last :data:`TAIL_LIMIT` bytes are), empty otherwise."""
    text = event.get("last_assistant_message")
    if text is not None:
        return (text if isinstance(text, str) else ""), ""
    text, cut = _last_assistant_text(event.get("transcript_path"))
    if not cut:
        return text, ""
    limit = f"{TAIL_LIMIT >> 20} MiB"
    if not text:
        return "", f"⚠️ The reply could not be read: the transcript's last {limit} hold none."
    return text, f"⚠️ The transcript is over {limit}: the start of this reply may be missing."


def last_assistant_text(transcript_path: object) -> str:
    """Texts of the newest main-thread assistant message (blocks share ``message.id``), from
    the last :data:`TAIL_LIMIT` bytes of the transcript (a regular file, or nothing)."""
    return _last_assistant_text(transcript_path)[0]


def _last_assistant_text(transcript_path: object) -> tuple[str, bool]:
    """The text, and whether it may be cut: the file's start was not read and the message
    may have begun there."""
    if not isinstance(transcript_path, str) or not transcript_path:
        return "", False
    data, cut = read_tail(transcript_path, TAIL_LIMIT)
    lines = data.splitlines()
    if cut and lines:
        lines = lines[1:]  # starts mid-line
    current_id, first_id = None, None
    texts: list[str] = []
    for line in lines:
        try:
            record = fastjson.loads(line)
        except (ValueError, RecursionError):
            continue  # the last line may still be being written
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        if record.get("isSidechain"):
            continue
        message = record.get("message")
        message = message if isinstance(message, dict) else {}
        if first_id is None:
            first_id = message.get("id", "")
        if message.get("id") != current_id:
            current_id, texts = message.get("id"), []
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "text":
                block_text = block.get("text", "")
                texts.append(block_text if isinstance(block_text, str) else "")
    return "\n".join(texts), cut and (not texts or current_id == first_id)


def read_tail(path: str, limit: int) -> tuple[bytes, bool]:
    """The last ``limit`` bytes of a regular file (never a device or FIFO), and whether
    anything before them was left out."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return b"", False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b"", False
        start = max(0, st.st_size - limit)
        os.lseek(fd, start, os.SEEK_SET)
        chunks, total = [], 0
        while total < limit:  # the file may grow while we read: never past the limit
            block = os.read(fd, min(1 << 20, limit - total))
            if not block:
                break
            chunks.append(block)
            total += len(block)
        return b"".join(chunks), start > 0
    except OSError:
        return b"", False
    finally:
        os.close(fd)


def last_usage(transcript_path: object, tail: int = USAGE_TAIL) -> dict | None:
    """Model, text, context tokens and time (epoch seconds) of the newest main-thread
    assistant record with ``usage``, from the transcript's last ``tail`` bytes; None if none.

    Context tokens are what the request sent (input + cache creation + cache reads), as the
    CLI counts them for its statusLine's ``used_percentage``.
    """
    if not isinstance(transcript_path, str) or not transcript_path:
        return None
    for window in sorted({min(USAGE_FIRST_LOOK, tail), tail}):
        data, cut = read_tail(transcript_path, window)
        lines = data.splitlines()
        found = _last_usage_in(lines[1:] if cut else lines)  # a cut first line is no record
        if found is not None or not cut:
            return found
    return None


def _last_usage_in(lines: list[bytes]) -> dict | None:
    for line in reversed(lines):
        if b'"assistant"' not in line or b'"usage"' not in line:
            continue
        try:
            record = fastjson.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        message = record.get("message")
        if record.get("isSidechain") or not isinstance(message, dict):
            continue
        usage = message.get("usage")
        if not isinstance(usage, dict):
            continue
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        tokens = [usage.get(key) for key in keys]
        if not any(isinstance(n, int) and not isinstance(n, bool) for n in tokens):
            continue
        model = message.get("model")
        content = message.get("content")
        texts = [
            block["text"]
            for block in (content if isinstance(content, list) else ())
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return {
            "model": model if isinstance(model, str) else None,
            "text": "\n".join(texts),
            "context_tokens": sum(n for n in tokens if isinstance(n, int) and n > 0),
            "at": epoch(record.get("timestamp")),
        }
    return None


def epoch(stamp: object) -> float | None:
    """``2026-11-21T23:58:04.591Z`` as epoch seconds (None if it is not such a time)."""
    if not isinstance(stamp, str):
        return None
    try:  # the C module alone: ``datetime`` defines everything in Python first (~6 M
        from _datetime import datetime  # instructions, a fifth of the Stop hook's own work)
    except ImportError:  # an interpreter without it
        from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def size(path: object) -> int:
    """The transcript's current length (0 if there is none yet): an offset to read from."""
    try:
        return os.path.getsize(path) if isinstance(path, str) else 0
    except OSError:
        return 0


def interrupted_since(path: object, offset: int) -> bool:
    """Whether the transcript records an interrupt written after ``offset``.

    Only the CLI's own record counts: a whole line whose record is a user message made of
    exactly one text block ``[Request interrupted by user]`` / ``[Request interrupted by user
    for tool use]`` (Esc, or "No" in a terminal dialog). The same words anywhere else — a tool
    result echoing a file, a quoted prompt — are not an interrupt.
    """
    if not isinstance(path, str) or not path:
        return False
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            new = handle.read(READ_LIMIT)
    except OSError:
        return False
    if _INTERRUPTED_BYTES not in new:
        return False  # the usual case: no line to parse
    for line in new.split(b"\n")[:-1]:  # whole lines only: the last may still be written
        if _INTERRUPTED_BYTES in line and is_interrupt_record(line):
            return True
    return False


def conversation_since(path: object, offset: int) -> bool:
    """Whether a user or assistant record was written after ``offset``: once Claude Code has
    recorded a prompt, its turn ends with a Stop or an interrupt record. No file yet: False
    (a new conversation's is written with its first prompt); unreadable: True."""
    if not isinstance(path, str) or not path:
        return True
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            new = handle.read(READ_LIMIT)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    for line in new.split(b"\n")[:-1]:
        try:
            record = fastjson.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and record.get("type") in ("user", "assistant"):
            return True
    return False


def is_interrupt_record(line: bytes) -> bool:
    """Whether one transcript line is the CLI's interrupt record (see :func:`interrupted_since`)."""
    try:
        record = fastjson.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(record, dict) or record.get("type") != "user":
        return False
    if "toolUseResult" in record:
        return False  # a tool's result, whatever its text says
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        if len(content) != 1 or not isinstance(content[0], dict):
            return False
        if content[0].get("type") != "text":
            return False
        content = content[0].get("text")
    return isinstance(content, str) and _is_interrupt_text(content)


def _is_interrupt_text(text: str) -> bool:
    return text.startswith(INTERRUPTED) and text.endswith("]") and "\n" not in text


def prompt_digest(text: str) -> str:
    """What :func:`prompt_since` matches a prompt by: its words, whitespace aside (the box may
    keep a line break or trailing space the transcript does not)."""
    import hashlib

    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()


def prompt_since(path: object, since: float, digest: str) -> bool:
    """Whether the transcript records a user prompt of this :func:`prompt_digest` written at
    ``since`` (epoch seconds) or later: proof that a prompt typed then reached Claude Code
    (it writes the line when the prompt is submitted, and an ``enqueue`` line when one typed
    during a turn joins its own queue: sent later, it is no less delivered). Tool results are
    no prompts."""
    if not isinstance(path, str) or not path:
        return False
    data, _ = read_tail(path, PROMPT_TAIL)
    for line in data.split(b"\n")[:-1]:  # whole lines only: the last may still be written
        if (b'"user"' not in line and b'"enqueue"' not in line) or b"toolUseResult" in line:
            continue
        try:
            record = fastjson.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        text = _typed_text(record)
        if text is None or prompt_digest(text) != digest:
            continue
        at = epoch(record.get("timestamp"))
        if at is not None and at >= since - PROMPT_CLOCK_SLACK:
            return True
    return False


def _typed_text(record: dict) -> str | None:
    """The text of a user prompt record, or of an ``enqueue`` of Claude Code's own queue
    (2.1.332: ``{"type": "queue-operation", "operation": "enqueue", "content": …}``)."""
    if record.get("type") == "user":
        return _prompt_text(record.get("message"))
    if record.get("type") == "queue-operation" and record.get("operation") == "enqueue":
        content = record.get("content")
        return content if isinstance(content, str) else None
    return None


def _prompt_text(message: object) -> str | None:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # text blocks (an image pasted with it is a block too)
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = "\n".join(t for t in texts if isinstance(t, str))
    return content if isinstance(content, str) else None
