"""Reading Claude Code's session transcript (a JSONL file the CLI appends to).

Two things the bridge reads there: the newest assistant text (the reply, when a Stop event
lacks ``last_assistant_message``; the streamed text, for CLIs without MessageDisplay), and
whether the turn was interrupted (Esc, or "No" in a terminal dialog) after a given offset.
"""

from __future__ import annotations

import os

from bridge import fastjson

INTERRUPTED = b"[Request interrupted by user"  # transcript line of an Esc / terminal "No"
READ_LIMIT = 1 << 20  # bytes read past an offset when looking for an interrupt


def reply_text(event: dict) -> str:
    """``last_assistant_message``; the transcript only when the event lacks that key (an
    empty message is an answer: the transcript could still hold an older one)."""
    text = event.get("last_assistant_message")
    if text is not None:
        return text if isinstance(text, str) else ""
    return last_assistant_text(event.get("transcript_path"))


def last_assistant_text(transcript_path: object) -> str:
    """Texts of the newest main-thread assistant message (blocks share ``message.id``)."""
    if not isinstance(transcript_path, str) or not transcript_path:
        return ""
    try:
        with open(transcript_path, "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return ""
    current_id, texts = None, []
    for line in lines:
        try:
            record = fastjson.loads(line)
        except ValueError:
            continue  # the last line may still be being written
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        if record.get("isSidechain"):
            continue
        message = record.get("message") or {}
        if message.get("id") != current_id:
            current_id, texts = message.get("id"), []
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(block.get("text", ""))
    return "\n".join(texts)


def size(path: object) -> int:
    """The transcript's current length (0 if there is none yet): an offset to read from."""
    try:
        return os.path.getsize(path) if isinstance(path, str) else 0
    except OSError:
        return 0


def interrupted_since(path: object, offset: int) -> bool:
    """Whether the transcript records an interrupt written after ``offset``."""
    if not isinstance(path, str) or not path:
        return False
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            new = handle.read(READ_LIMIT)
    except OSError:
        return False
    return INTERRUPTED in new
