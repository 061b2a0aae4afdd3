"""Building Messages API responses: the full message object and its SSE event stream."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

Block = dict[str, Any]


def new_message_id() -> str:
    return f"msg_fake_{uuid.uuid4().hex[:24]}"


def output_tokens(blocks: list[Block]) -> int:
    return max(1, len(json.dumps(blocks)) // 4)


def build_message(
    blocks: list[Block], *, model: str, stop_reason: str, input_tokens: int, message_id: str
) -> dict[str, Any]:
    """The non-streaming response body (also what the stream reassembles to)."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(input_tokens, output_tokens(blocks)),
    }


def _usage(input_tokens: int, out_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": out_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def encode_event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def split_text(value: str, pieces: int) -> list[str]:
    """Split into at most ``pieces`` non-empty parts (at least one part, possibly empty)."""
    if pieces <= 1 or len(value) <= 1:
        return [value]
    size = -(-len(value) // pieces)
    return [value[i : i + size] for i in range(0, len(value), size)]


def _block_start(block: Block) -> Block:
    kind = block["type"]
    if kind == "text":
        return {"type": "text", "text": ""}
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}


def _block_deltas(block: Block, chunks: int) -> Iterator[Block]:
    kind = block["type"]
    if kind == "text":
        for part in split_text(block["text"], chunks):
            yield {"type": "text_delta", "text": part}
    elif kind == "thinking":
        yield {"type": "thinking_delta", "thinking": block["thinking"]}
        yield {"type": "signature_delta", "signature": block.get("signature", "fake-signature")}
    else:
        # Real servers send tool input as several partial JSON pieces; clients must concatenate.
        for part in split_text(json.dumps(block["input"]), 2):
            yield {"type": "input_json_delta", "partial_json": part}


def _indexed(kind: str, index: int, content_block: Block | None = None) -> Block:
    event: Block = {"type": kind, "index": index}
    if content_block is not None:
        event["content_block"] = content_block
    return event


def stream_events(message: dict[str, Any], chunks: int = 1) -> Iterator[tuple[str, Block]]:
    """(event name, data) pairs in the order the real API sends them (``safeguard_results``
    of the message, when it has them, ride on ``message_delta``'s delta, as the CLI reads
    them)."""
    start = {key: value for key, value in message.items() if key != "safeguard_results"}
    start.update(content=[], stop_reason=None)
    start["usage"] = _usage(message["usage"]["input_tokens"], 1)
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        yield "content_block_start", _indexed("content_block_start", index, _block_start(block))
        for delta in _block_deltas(block, chunks):
            yield "content_block_delta", {**_indexed("content_block_delta", index), "delta": delta}
        yield "content_block_stop", _indexed("content_block_stop", index)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    if "safeguard_results" in message:
        delta["safeguard_results"] = message["safeguard_results"]
    usage = {"output_tokens": message["usage"]["output_tokens"]}
    yield "message_delta", {"type": "message_delta", "delta": delta, "usage": usage}
    yield "message_stop", {"type": "message_stop"}


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def safeguard_results(blocks: list[Block], refusal: str | None) -> list[Block]:
    """Auto mode's server-side safety check, answered for every tool call in ``blocks``.

    In auto mode Claude Code 2.1.332 sends a top-level ``safeguards`` field
    (``[{"type": "dangerous_tool_use", "classifier_context": {…}}]``) and reads the verdicts
    from the reply; with none it stops at "Auto mode can't check actions in this session". A
    ``refusal`` flags the calls with that explanation; otherwise they pass.
    """
    verdict: Block = {"type": "evaluated", "outcome": "flagged" if refusal else "not_flagged"}
    if refusal:
        verdict["explanation"] = refusal
    tool_uses = {block["id"]: verdict for block in blocks if block.get("type") == "tool_use"}
    status = {"type": "available", "tool_uses": tool_uses}
    return [{"type": "dangerous_tool_use", "status": status}]
