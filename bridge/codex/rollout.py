"""Reading Codex's rollout transcript (``$CODEX_HOME/sessions/…/rollout-….jsonl``, the hooks'
``transcript_path``): what the status message shows of a turn that Claude Code's transcript
reader cannot (its lines are ``{"type": "response_item", "payload": {"type": "message",
"role": "assistant", "content": [{"type": "output_text", "text": …}]}}``, measured on 0.171.0
and 0.150.1; docs/codex.md).
"""

from __future__ import annotations

from bridge import fastjson
from bridge.claude.transcript import read_tail

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
