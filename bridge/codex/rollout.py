"""Reading Codex's rollout transcript (``$CODEX_HOME/sessions/…/rollout-….jsonl``, the hooks'
``transcript_path``): what the status message shows of a turn that Claude Code's transcript
reader cannot (its lines are ``{"type": "response_item", "payload": {"type": "message",
"role": "assistant", "content": [{"type": "output_text", "text": …}]}}``, measured on 0.171.0
and 0.150.1; docs/codex.md).
"""

from __future__ import annotations

import os

from bridge import fastjson
from bridge.claude.transcript import epoch, read_tail

TAIL_LIMIT = 4 << 20  # bytes read from its end: each turn adds its settings (~10 kB)


def last_assistant_text(transcript_path: object) -> str:
    """The text of the newest assistant message of the latest turn (after its user message:
    a turn that has said nothing yet shows no text of the one before), or ""."""
    if not isinstance(transcript_path, str) or not transcript_path:
        return ""
    data, cut = read_tail(transcript_path, TAIL_LIMIT)
    lines = data.splitlines()[1:] if cut else data.splitlines()  # a cut first line
    text = ""
    for line in lines:
        if b'"message"' not in line:
            continue
        payload = _message(line)
        if payload is None:
            continue
        if payload.get("role") == "user":
            text = ""
        elif payload.get("role") == "assistant":
            text = _text(payload.get("content"))
    return text


def _message(line: bytes) -> dict | None:
    try:
        record = fastjson.loads(line)
    except (ValueError, RecursionError):
        return None  # the last line may still be being written
    if not isinstance(record, dict) or record.get("type") != "response_item":
        return None
    payload = record.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return None
    return payload


def _text(content: object) -> str:
    texts = [
        block["text"]
        for block in (content if isinstance(content, list) else ())
        if isinstance(block, dict)
        and block.get("type") == "output_text"
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts)


def is_rollout(path: object) -> bool:
    """A path named as Codex names its transcripts (``rollout-<time>-<session id>.jsonl``)."""
    name = os.path.basename(path) if isinstance(path, str) else ""
    return name.startswith("rollout-") and name.endswith(".jsonl")


def last_usage(transcript_path: object) -> dict | None:
    """What a reply's footer says of the latest turn, as ``claude.transcript.last_usage``
    gives it for Claude Code: the model (its ``turn_context``), the turn's last assistant
    text, the tokens its last request sent and the context window (its last ``token_count``:
    ``last_token_usage.input_tokens``, ``model_context_window``), that record's time. Codex
    reports no cost: none is said. None before a ``token_count`` of the latest turn."""
    if not is_rollout(transcript_path):
        return None
    data, cut = read_tail(str(transcript_path), TAIL_LIMIT)
    found: dict = {"model": None, "text": "", "tokens": None}
    for line in data.splitlines()[1:] if cut else data.splitlines():
        _fold_usage(found, line)
    if found["tokens"] is None:
        return None
    return {
        "model": found["model"],
        "text": found["text"],
        "context_tokens": found["tokens"],
        "context_window": found["window"],
        "at": found["at"],
    }


def _fold_usage(found: dict, line: bytes) -> None:
    if b'"turn_context"' in line or b'"token_count"' in line:
        try:
            record = fastjson.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
            return
        payload = record["payload"]
        if record.get("type") == "turn_context" and isinstance(payload.get("model"), str):
            found["model"] = payload["model"]
        elif payload.get("type") == "token_count":
            _token_count(found, payload.get("info"), epoch(record.get("timestamp")))
        return
    payload = _message(line) if b'"message"' in line else None
    if payload is not None and payload.get("role") == "user":
        found.update(text="", tokens=None)  # a new turn: its figures are to come
    elif payload is not None and payload.get("role") == "assistant":
        found["text"] = _text(payload.get("content"))


def _token_count(found: dict, value: object, at: float | None) -> None:
    info = value if isinstance(value, dict) else {}
    last = info.get("last_token_usage")
    tokens = last.get("input_tokens") if isinstance(last, dict) else None
    window = info.get("model_context_window")
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
        found["tokens"], found["at"] = tokens, at
        ok = isinstance(window, int) and not isinstance(window, bool) and window > 0
        found["window"] = window if ok else None
