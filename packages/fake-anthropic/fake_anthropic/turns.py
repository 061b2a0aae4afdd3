"""Scripted turns: what the fake API answers to one main request.

A turn is plain data so tests can build, print and compare them. Dynamic turns (``echo``) carry a
callable that builds the content blocks from the request when the request arrives.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from . import limits
from .messages import last_user_text

Block = dict[str, Any]
Request = dict[str, Any]


@dataclass
class Turn:
    """One scripted answer.

    ``blocks`` are Anthropic content blocks; ``build`` (if set) replaces them per request.
    ``status`` != 200 turns answer with an Anthropic error body instead of a message.
    ``headers`` are sent with the answer (the real API's rate-limit headers, for instance).
    ``auto_mode_refusal`` (a reason) makes auto mode's server-side safety check flag this
    turn's tool calls; without it they pass the check (see ``sse.safeguard_results``);
    ``auto_mode_unchecked`` sends no verdict at all, as a gateway that drops the field does.
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
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers
    auto_mode_refusal: str | None = None
    auto_mode_unchecked: bool = False

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
    headers: dict[str, str] | None = None,
) -> Turn:
    """An assistant message with one text block (stop_reason end_turn)."""
    block = {"type": "text", "text": message}
    return Turn(
        blocks=[block],
        delay=delay,
        chunks=chunks,
        chunk_delay=chunk_delay,
        expect=expect,
        headers=dict(headers or {}),
    )


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


def usage_limit(resets_at: int, window: str = "five_hour", *, delay: float = 0.0) -> Turn:
    """A claude.ai usage-limit refusal as the real API sends it: 429 ``rate_limit_error`` with
    the ``anthropic-ratelimit-unified-*`` headers for ``window`` (``five_hour`` or
    ``seven_day``) resetting at ``resets_at`` (Unix seconds). Claude Code shows it as a usage
    limit only to a subscriber login (``claude_env(oauth_token=...)``); see ``limits``."""
    return Turn(
        status=429,
        error_type="rate_limit_error",
        error_message=limits.LIMIT_MESSAGE,
        headers=limits.limit_headers(resets_at, window),
        delay=delay,
    )


def near_usage_limit(
    message: str, utilization: float, resets_at: int, window: str = "five_hour"
) -> Turn:
    """A normal text answer that also reports the subscriber's usage of ``window`` (past 0.75
    the CLI warns "You've used 86% of your 5-hour limit"; the statusLine gets the figure)."""
    return text(message, headers=limits.usage_headers(utilization, resets_at, window))


def refused_by_auto_mode(turn: Turn, reason: str) -> Turn:
    """``turn`` with its tool calls flagged by auto mode's safety check (the CLI then does not
    run them, tells the model "Permission for this action was denied by the Claude Code auto
    mode classifier. Reason: <reason>…" and fires PermissionDenied)."""
    return replace(turn, auto_mode_refusal=reason)


def unchecked_by_auto_mode(turn: Turn) -> Turn:
    """``turn`` without auto mode's verdicts, as through a gateway that does not pass the
    check on: Claude Code 2.1.332 then stops at "Auto mode can't check actions in this
    session" (Enter stays, Shift+Tab leaves for accept-edits mode) and sends the Notification
    ``agent_needs_input``."""
    return replace(turn, auto_mode_unchecked=True)
