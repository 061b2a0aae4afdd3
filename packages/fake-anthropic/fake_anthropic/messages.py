"""Reading Messages API requests: what the model "received" and which requests are side requests."""

from __future__ import annotations

import json
from typing import Any

Request = dict[str, Any]

COMPACTION_MARKER = "CRITICAL: Respond with TEXT ONLY"
# 2.1.332 asks for a recap ("※ recap: …" on screen) in a request shaped like a main one, e.g.
# when the owner opens a session from the agent view; it must not eat a scripted turn.
RECAP_MARKER = "The user stepped away and is coming back. Recap"
CORE_TOOLS = frozenset({"Bash", "Read", "Write"})
# 2.1.332's agent view asks whether a background session is done, working, blocked or failed
# (system prompt: "… decide which of four states it's in"), wanting JSON; "done" makes the
# viewing session send the Notification ``agent_completed``.
STATE_CLASSIFIER_MARKER = "decide which of four states"


def _flatten_tool_result(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    body = content if isinstance(content, str) else _flatten_blocks(content)
    marker = "[tool_result is_error]" if block.get("is_error") else "[tool_result]"
    return f"{marker} {body}"


def _flatten_block(block: Any) -> str:
    if isinstance(block, str):
        return block
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "tool_result":
        return _flatten_tool_result(block)
    return f"[{kind}]"


def _flatten_blocks(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(_flatten_block(block) for block in content or [])


def _is_reminder(block: Any) -> bool:
    # The CLI injects context (CLAUDE.md, dates, mode notes) as extra text blocks in user turns.
    if not isinstance(block, dict) or block.get("type") != "text":
        return False
    return block.get("text", "").lstrip().startswith("<system-reminder>")


def last_user_message(request: Request) -> dict[str, Any] | None:
    """The last ``role: "user"`` message (2.1.330 also sends ``role: "system"`` turns)."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return message
    return None


def last_user_text(request: Request, *, keep_reminders: bool = False) -> str:
    """Flattened text of the last user message.

    Text blocks are joined with newlines, tool results become ``[tool_result] ...`` or
    ``[tool_result is_error] ...``, other blocks ``[type]``. ``<system-reminder>`` blocks the CLI
    adds are dropped unless ``keep_reminders`` is set, so a test can compare with what it typed.
    """
    message = last_user_message(request)
    if message is None:
        return ""
    content = message.get("content", "")
    if isinstance(content, str):
        return content
    blocks = [b for b in content if keep_reminders or not _is_reminder(b)]
    return _flatten_blocks(blocks)


def tool_names(request: Request) -> set[str]:
    return {tool.get("name", "") for tool in request.get("tools") or []}


def side_kind(request: Request) -> str | None:
    """Why a request must not consume a scripted turn, or None for a main request."""
    last = last_user_text(request).lstrip()
    if STATE_CLASSIFIER_MARKER in json.dumps(request.get("system") or ""):
        return "state_classifier"
    if last.startswith(COMPACTION_MARKER):
        return "compaction"
    if last.startswith(RECAP_MARKER):
        return "recap"
    max_tokens = request.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens <= 1:
        return "quota_probe"
    if not tool_names(request) >= CORE_TOOLS:
        return "no_core_tools"
    return None


def estimate_tokens(request: Request) -> int:
    """A stable, roughly realistic token count (4 chars per token)."""
    return max(1, len(json.dumps(request)) // 4)
