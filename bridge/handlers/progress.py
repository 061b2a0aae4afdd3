"""Live progress of a turn: hooks append small events, the bot folds them into one message.

Hooks never talk to Discord for progress: each appends one JSON line to
``progress/<channel>.jsonl`` (a few microseconds, no network on the hot path of every tool
call, ``bridge.state.progress_log``), and the bot (``bot/turn/progress.py``) folds them into a
``TurnProgress`` (``bridge.discord.render.turn_status``) and edits a single status message at
most once per 1.5 s.

Events (``kind``): ``turn`` (UserPromptSubmit), ``text`` (MessageDisplay delta), ``tool``
(PreToolUse), ``tool_done`` (PostToolUse / PostToolUseFailure), ``done`` (Stop, after the
reply was posted), ``failed`` (StopFailure: an API error ended the turn, no Stop comes).
"""

from __future__ import annotations

import time

from bridge.state import progress_log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from bridge.handlers.context import HookContext

SUMMARY = 80


def record(context: HookContext, kind: str, **fields: object) -> None:
    """Append one event for the session's channel (only if progress is on for it)."""
    if not context.project.progress:
        return
    event = {"kind": kind, "t": time.time(), "server": context.server.name, **fields}
    event["project"] = context.project.name  # the bot's metrics count turns by project
    event["session"] = context.event.get("session_id")
    if context.event.get("prompt_id"):  # the user's prompt this event belongs to
        event["prompt"] = context.event["prompt_id"]
    progress_log.append(context.runtime, context.channel_id, event)


def tool_summary(tool: str, tool_input: object) -> str:
    """What a tool call is about, in one short line ("npm test", "src/app.py")."""
    if not isinstance(tool_input, dict):
        return ""
    for key in ("command", "file_path", "notebook_path", "pattern", "url", "query", "description"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            line = " ".join(value.split())
            return line if len(line) <= SUMMARY else line[: SUMMARY - 1] + "…"
    return ""
