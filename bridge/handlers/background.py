"""Turns nobody typed: a background task reporting back.

Claude Code 2.1.332 delivers the result of a background command or subagent
that finishes while the session is idle as a *prompt*: UserPromptSubmit with the text
``<task-notification>\\n<task-id>…<summary>Background command "x" completed (exit code 0)
</summary>…``, then the model's answer and a second Stop. Nothing else in the hook input tells
it from the owner's words. The UserPromptSubmit hook keeps the summary
(``turns/<channel>.task.json``, with the prompt's id) and the Stop hook of that same prompt
puts it above the reply, so the owner reads why Claude speaks, and from whom; the status
message says so too (``progress``). The owner is not pinged for it: the first reply already
did for this wait (``notify``).
"""

from __future__ import annotations

import os

from bridge import fastjson
from bridge.state import private_files, runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from bridge.handlers.context import HookContext

PREFIX = "<task-notification>"  # the whole prompt of such a turn starts with this
SUMMARY_LIMIT = 200
FALLBACK = "a background task finished"


def is_task_report(prompt: object) -> bool:
    """Whether a UserPromptSubmit's prompt is a background task's report, not a person's."""
    return isinstance(prompt, str) and prompt.startswith(PREFIX)


def summary(prompt: str) -> str:
    """The report's ``<summary>`` as one plain line (what Claude Code shows on its screen)."""
    start = prompt.find("<summary>")
    end = prompt.find("</summary>", start)
    if start < 0 or end < 0:
        return FALLBACK
    text = " ".join(prompt[start + len("<summary>") : end].split())
    text = text.replace("@", "@\u200b").replace("`", "'")  # plain text: no mentions, no code
    if len(text) > SUMMARY_LIMIT:
        text = text[: SUMMARY_LIMIT - 1] + "…"
    return text or FALLBACK


def record_path(rt: runtime.Runtime, channel_id: str) -> str:
    return os.path.join(rt.path("turns"), f"{channel_id}.task.json")


def at_prompt(context: HookContext, about: str) -> None:
    """Remember that this prompt is a task's report, for its Stop."""
    rt = context.runtime.ensure()
    record = {"prompt_id": context.event.get("prompt_id"), "summary": about}
    private_files.write_atomic(record_path(rt, context.channel_id), fastjson.dumps(record).encode())


def reply_heading(context: HookContext) -> str:
    """The line above a reply to a task's report (``-# 🤖 A background task reported back:
    …``), or "" for the owner's turn. The record is used up either way: one prompt, one Stop."""
    path = record_path(context.runtime, context.channel_id)
    record = private_files.read_json(path, 1 << 12)
    if record is None:
        return ""  # the usual case: one failed open()
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    prompt_id = context.event.get("prompt_id")
    if record.get("prompt_id") != prompt_id or not isinstance(record.get("summary"), str):
        return ""
    return f"-# 🤖 A background task reported back: {record['summary']}"
