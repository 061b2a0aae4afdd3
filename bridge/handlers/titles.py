"""A thread's conversation is named after its thread, so it can be found again by name.

The UserPromptSubmit hook answers ``sessionTitle`` (measured on 2.1.332 and
2.1.197): Claude Code then shows the name on its input box's rule, gives it to the statusLine,
writes it into the transcript, lists the conversation by it in ``claude --resume`` and resumes
it with ``claude --resume '<name>'``. Claude Code passes the title it has back in
``session_title``, so the name is set once, not at every prompt; a branch of the conversation
(``/branch``: "<name> (Branch)") keeps its own. A channel's session is not named: ``/new``
starts another conversation there, and they would all share one name.
"""

from __future__ import annotations

from bridge.handlers.context import HookContext

TITLE_LIMIT = 100


def session_title(context: HookContext) -> dict | None:
    """The UserPromptSubmit answer that names a thread's conversation, or None."""
    if context.thread_id is None:
        return None
    name = thread_name(context)
    current = context.event.get("session_title")
    if not name or (isinstance(current, str) and current.startswith(name)):
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "sessionTitle": name}}


def thread_name(context: HookContext) -> str:
    """The thread's name as the bridge knows it: its ``threads[]`` entry, else what the bot
    recorded for it; as one plain line."""
    name: object = next(
        (e.name for e in context.project.threads if e.channel_id == context.thread_id), None
    )
    if not isinstance(name, str) or not name.strip():
        from bridge.state import session_state

        record = session_state.load(context.runtime, str(context.thread_id)) or {}
        name = record.get("thread_name")
    if not isinstance(name, str):
        return ""
    text = " ".join("".join(c if c.isprintable() else " " for c in name).split())
    return text[:TITLE_LIMIT]
