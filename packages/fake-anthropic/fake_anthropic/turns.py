"""Scripted turns: what the fake API answers to one main request.

A turn is plain data so tests can build, print and compare them. Dynamic turns (``echo``) carry a
callable that builds the content blocks from the request when the request arrives.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .messages import last_user_text

Block = dict[str, Any]
Request = dict[str, Any]


@dataclass
class Turn:
    """One scripted answer.

    ``blocks`` are Anthropic content blocks; ``build`` (if set) replaces them per request.
    ``status`` != 200 turns answer with an Anthropic error body instead of a message.
    ``delay`` waits before answering (to test spinners / interrupts); ``chunks`` splits each text
    block into that many ``text_delta`` events. ``expect`` is a substring the last user text must
    contain; a mismatch is recorded in ``FakeAnthropic.failures`` and shown in the answer text.
    """

    blocks: list[Block] = field(default_factory=list)
    stop_reason: str = "end_turn"
    delay: float = 0.0
    chunks: int = 1
    chunk_delay: float = 0.0  # seconds between streamed events: a slow, long stream
    status: int = 200
    error_type: str = "api_error"
    error_message: str = ""
    expect: str | None = None
    build: Callable[[Request], list[Block]] | None = None

    def content(self, request: Request) -> list[Block]:
        """The content blocks to send for ``request``."""
        return self.build(request) if self.build else list(self.blocks)


def new_tool_id() -> str:
    return f"toolu_fake_{uuid.uuid4().hex[:20]}"


def text(
    message: str,
    *,
    delay: float = 0.0,
    chunks: int = 1,
    chunk_delay: float = 0.0,
    expect: str | None = None,
) -> Turn:
    """An assistant message with one text block (stop_reason end_turn)."""
    block = {"type": "text", "text": message}
    return Turn(blocks=[block], delay=delay, chunks=chunks, chunk_delay=chunk_delay, expect=expect)


def tool_uses(
    calls: Sequence[tuple[str, dict[str, Any]]],
    *,
    text_before: str | None = None,
    delay: float = 0.0,
    expect: str | None = None,
) -> Turn:
    """Optional text block followed by one tool_use block per (name, input) pair."""
    blocks: list[Block] = [{"type": "text", "text": text_before}] if text_before else []
    for name, tool_input in calls:
        blocks.append({"type": "tool_use", "id": new_tool_id(), "name": name, "input": tool_input})
    return Turn(blocks=blocks, stop_reason="tool_use", delay=delay, expect=expect)


def tool_use(
    name: str,
    tool_input: dict[str, Any],
    *,
    text_before: str | None = None,
    delay: float = 0.0,
    expect: str | None = None,
) -> Turn:
    """Optional text block followed by a single tool_use block (stop_reason tool_use)."""
    return tool_uses([(name, tool_input)], text_before=text_before, delay=delay, expect=expect)


def thinking(thought: str, answer: str, *, delay: float = 0.0) -> Turn:
    """A thinking block (with a fake signature) followed by a text answer."""
    blocks = [
        {"type": "thinking", "thinking": thought, "signature": "fake-signature"},
        {"type": "text", "text": answer},
    ]
    return Turn(blocks=blocks, delay=delay)


def echo(prefix: str = "Model saw: ", *, delay: float = 0.0, expect: str | None = None) -> Turn:
    """Answer with ``prefix`` + the flattened last user message of the request."""

    def build(request: Request) -> list[Block]:
        return [{"type": "text", "text": prefix + last_user_text(request)}]

    return Turn(build=build, delay=delay, expect=expect)


def error(
    status: int = 529,
    message: str = "overloaded",
    *,
    error_type: str = "api_error",
    delay: float = 0.0,
) -> Turn:
    """An HTTP error answer with an Anthropic error body."""
    return Turn(status=status, error_message=message, error_type=error_type, delay=delay)
