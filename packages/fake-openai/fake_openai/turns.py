"""Scripted turns: what the fake API answers to one ``POST /v1/responses``.

A turn is plain data, like fake_anthropic's: output items (an assistant ``message``, a
``function_call`` of ``exec_command``, an edit through it) streamed as the Responses API streams
them, or an error. Codex runs the tool calls of a turn and sends
their output in its next request, which takes the next scripted turn.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .inputs import last_user_text

Item = dict[str, Any]
Request = dict[str, Any]


@dataclass
class Turn:
    """One scripted answer.

    ``items`` are Responses API output items; ``build`` (if set) makes them per request.
    ``status`` != 200 answers with ``error_body`` (JSON) and ``headers`` instead of a stream;
    ``failed`` (an error object) streams ``response.failed`` instead of ``response.completed``.
    ``delay`` waits before answering (a turn still running, for an interrupt); ``chunks``
    splits each message's text into that many ``response.output_text.delta`` events.
    ``expect`` is a substring the typed prompt must contain; a mismatch is recorded in
    ``FakeOpenAI.failures`` and shown as the answer.
    """

    items: list[Item] = field(default_factory=list)
    build: Callable[[Request], list[Item]] | None = None
    delay: float = 0.0
    chunks: int = 1
    status: int = 200
    error_body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    failed: dict[str, Any] | None = None
    expect: str | None = None

    def output(self, request: Request) -> list[Item]:
        return self.build(request) if self.build else [dict(item) for item in self.items]


def new_id(prefix: str) -> str:
    return f"{prefix}_fake_{uuid.uuid4().hex[:20]}"


def message_item(text_value: str) -> Item:
    """An assistant message output item."""
    return {
        "type": "message",
        "id": new_id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text_value, "annotations": []}],
    }


def text(message: str, *, delay: float = 0.0, chunks: int = 1, expect: str | None = None) -> Turn:
    """An assistant message: the turn's answer (Codex ends the turn; ``Stop`` fires with it
    as ``last_assistant_message``)."""
    return Turn(items=[message_item(message)], delay=delay, chunks=chunks, expect=expect)


def echo(prefix: str = "Model saw: ", *, delay: float = 0.0) -> Turn:
    """Answer with ``prefix`` + the typed prompt of the request."""
    return Turn(build=lambda request: [message_item(prefix + last_user_text(request))], delay=delay)


def exec_command(
    cmd: str,
    *,
    escalate: str | None = None,
    text_before: str | None = None,
    delay: float = 0.0,
    expect: str | None = None,
    call_id: str | None = None,
) -> Turn:
    """A call of Codex's shell tool ``exec_command`` running ``cmd``. ``escalate`` (the
    justification Codex shows) asks to run it outside the sandbox: with the default approval
    policy (``on-request``) that is the approval a ``PermissionRequest`` hook answers."""
    arguments: dict[str, Any] = {"cmd": cmd}
    if escalate is not None:
        arguments.update(sandbox_permissions="require_escalated", justification=escalate)
    call = {
        "type": "function_call",
        "id": new_id("fc"),
        "call_id": call_id or new_id("call"),
        "name": "exec_command",
        "arguments": json.dumps(arguments),
    }
    items = [message_item(text_before)] if text_before else []
    return Turn(items=[*items, call], delay=delay, expect=expect)


def apply_patch(patch: str, *, delay: float = 0.0, call_id: str | None = None) -> Turn:
    """An edit: ``patch`` ("*** Begin Patch" … "*** End Patch"; ``add_file`` builds one) run
    as ``apply_patch`` in ``exec_command``, the way Codex 0.171.0 offers edits to a model of a
    custom provider (no ``apply_patch`` tool of its own): Codex applies it itself, and asks
    (``PermissionRequest`` with ``tool_name: "apply_patch"``) for a file outside the sandbox's
    writable roots."""
    command = f"apply_patch <<'EOF'\n{patch.rstrip()}\nEOF\n"
    return exec_command(command, delay=delay, call_id=call_id)


def add_file(path: str, content: str) -> str:
    """An ``apply_patch`` patch adding the file ``path`` (relative to the project)."""
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


def error(status: int = 500, message: str = "server error", *, code: str = "server_error") -> Turn:
    """An HTTP error answer with an OpenAI error body."""
    body = {"error": {"type": code, "code": code, "message": message}}
    return Turn(status=status, error_body=body)


def usage_limit(resets_at: int | None = None, *, plan_type: str = "plus") -> Turn:
    """ChatGPT's usage limit as Codex reads it: HTTP 429 whose error ``type`` is
    ``usage_limit_reached`` (with ``plan_type`` and ``resets_at``, Unix seconds). Codex does
    not retry it and shows "You've hit your usage limit" (docs/codex.md); any other 429 is
    retried and ends as "exceeded retry limit"."""
    resets = int(time.time()) + 3600 if resets_at is None else resets_at
    body = {
        "error": {
            "type": "usage_limit_reached",
            "message": "The usage limit has been reached",
            "plan_type": plan_type,
            "resets_at": resets,
        }
    }
    return Turn(status=429, error_body=body)


def failed(code: str, message: str) -> Turn:
    """A stream that ends in ``response.failed`` with ``{code, message}`` (Codex reads
    ``context_length_exceeded``, ``insufficient_quota``, ``usage_not_included``; any other code
    is retried, ``rate_limit_exceeded`` after the "try again in Ns" of its message)."""
    return Turn(failed={"code": code, "message": message})
