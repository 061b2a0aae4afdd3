"""The Responses API's stream as Codex reads it (``stream: true``): ``response.created``, per
output item ``response.output_item.added`` / its text deltas / ``response.output_item.done``,
then ``response.completed`` with the token usage (or ``response.failed`` with an error)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Event = dict[str, Any]
Item = dict[str, Any]


def encode_event(data: Event) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def split_text(value: str, pieces: int) -> list[str]:
    """At most ``pieces`` non-empty parts of ``value`` (one part when it is short)."""
    if pieces <= 1 or len(value) <= 1:
        return [value]
    size = -(-len(value) // pieces)
    return [value[i : i + size] for i in range(0, len(value), size)]


def _started(item: Item) -> Item:
    """An item as ``response.output_item.added`` shows it: before its content arrived."""
    if item["type"] == "message":
        return {**item, "status": "in_progress", "content": []}
    if item["type"] == "function_call":
        return {**item, "status": "in_progress", "arguments": ""}
    return item


def _text_deltas(item: Item, index: int, chunks: int) -> Iterator[Event]:
    if item["type"] != "message":
        return
    for part_index, part in enumerate(item.get("content") or []):
        for piece in split_text(part.get("text", ""), chunks):
            yield {
                "type": "response.output_text.delta",
                "item_id": item.get("id"),
                "output_index": index,
                "content_index": part_index,
                "delta": piece,
            }


def usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def stream_events(
    response_id: str,
    model: str,
    items: list[Item],
    *,
    input_tokens: int,
    chunks: int = 1,
    failure: dict[str, Any] | None = None,
) -> Iterator[Event]:
    """The events of one streamed response, in the order the real API sends them."""
    response: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    yield {"type": "response.created", "response": response}
    for index, item in enumerate(items):
        yield {"type": "response.output_item.added", "output_index": index, "item": _started(item)}
        yield from _text_deltas(item, index, chunks)
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    if failure is not None:
        failed = {**response, "status": "failed", "error": failure}
        yield {"type": "response.failed", "response": failed}
        return
    output_tokens = max(1, len(json.dumps(items)) // 4)
    done = {**response, "status": "completed", "output": items}
    done["usage"] = usage(input_tokens, output_tokens)
    yield {"type": "response.completed", "response": done}
