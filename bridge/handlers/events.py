"""What each Claude Code hook event of a bridge session does (the hooks/ scripts call these).

Kept in one place so the whole life of a turn reads straight: a prompt arrives
(UserPromptSubmit), tools start and finish (PreToolUse, PostToolUse*), text streams
(MessageDisplay), permission dialogs ask Discord (PermissionRequest, in ``permission.py``), the
turn ends with the reply (Stop) or with an API error (StopFailure). A prompt's own PostToolUse
and the turn's end (or a new prompt) also close the Discord prompts the terminal answered
meanwhile (``state/decisions.mark_stale``). The fast path of each is a few file operations, no
network.
"""

from __future__ import annotations

import os

from bridge.handlers import progress
from bridge.handlers.context import HookContext

# Imported where they are needed, not here: each module is ~0.4 M instructions of every hook
# process (bench/hooks_fast_path.py --instructions), and ``permission`` with
# ``state/decisions`` 2.6 M, needed only while a Discord prompt is open.


def close_answered_prompts(context: HookContext) -> None:
    """``permission.on_session_event``: the open prompts this event shows were answered in
    the terminal. One ``listdir`` when none is open (then ``permission`` is not imported)."""
    try:
        if not os.listdir(context.runtime.prompts):
            return
    except OSError:  # no prompts dir: the bot never ran, nothing was ever asked
        return
    from bridge.handlers import permission

    permission.on_session_event(context)


def turn_start_taken(context: HookContext) -> None:
    """A tool may change files: the snapshot of the turn's start, taken after
    UserPromptSubmit answered, must be complete first (``turn_changes.wait_for_start``). One
    ``lstat`` when it is (``turn_changes`` is not imported then)."""
    marker = os.path.join(context.runtime.path("turns"), f"{context.channel_id}.pending")
    if os.path.lexists(marker):  # turn_changes.pending_path
        from bridge.handlers import turn_changes

        turn_changes.wait_for_start(context)


def on_prompt_or_tool_done(context: HookContext) -> dict | None:
    """UserPromptSubmit, PostToolUse and PostToolUseFailure. A thread's prompt may name its
    conversation after the thread (``titles``)."""
    close_answered_prompts(context)
    event = context.event
    if event.get("hook_event_name") == "UserPromptSubmit":
        from bridge.handlers import background, notify, turn_changes  # tool calls never need them

        task = None
        if background.is_task_report(event.get("prompt")):
            task = background.summary(event["prompt"])  # a task reported back: not the user
            background.at_prompt(context, task)
        else:
            notify.end_wait(context)  # the user is back: the next wait may ping again
            from bridge.handlers import away

            away.on_prompt(context)  # a usage-limit wait of this session is over
        cost = turn_changes.cost_so_far(context)
        progress.record(
            context, "turn", transcript=event.get("transcript_path"), cost0=cost, task=task
        )
        turn_changes.at_prompt(context)  # the working tree as the turn starts (git)
        if task is None and context.thread_id is not None:  # a channel's session is not named
            from bridge.handlers.titles import session_title

            return session_title(context)
    else:
        from bridge.state import tool_calls

        tool_calls.finished(context.runtime, context.channel_id, event.get("tool_use_id"))
        failed = event.get("hook_event_name") == "PostToolUseFailure"
        progress.record(context, "tool_done", failed=failed)
    return None


def on_tool_start(context: HookContext) -> dict | None:
    """PreToolUse: a permission dialog may follow, so the bot presses no key for a moment
    (``state/tool_calls``); show the tool in the status message; ``permissionTools`` always
    ask."""
    from bridge.state import tool_calls

    turn_start_taken(context)
    event = context.event
    tool_calls.started(context.runtime, context.channel_id, event.get("tool_use_id"))
    tool = str(event.get("tool_name") or "tool")
    summary = progress.tool_summary(tool, event.get("tool_input"))
    progress.record(
        context, "tool", name=tool, summary=summary, transcript=event.get("transcript_path")
    )
    if context.project.budget.any:  # past the spend budget: no tool runs, the turn stops
        from bridge.handlers import away

        stopped = away.check_budget(context)
        if stopped is not None:
            return stopped
    if not context.server.lists_permission_tool(tool):
        close_answered_prompts(context)
        return None  # (permission.on_pre_tool_use's answer for a tool not listed)
    from bridge.handlers import permission

    return permission.on_pre_tool_use(context)


def on_message_display(context: HookContext) -> None:
    """MessageDisplay: the assistant text as it streams."""
    event = context.event
    progress.record(
        context,
        "text",
        message_id=event.get("message_id"),
        delta=event.get("delta") or "",
        final=bool(event.get("final")),
    )


def on_turn_end(context: HookContext) -> None:
    """Stop: post the reply, then close the status message (the bot does, after this). What
    the turn changed in git goes on the reply (a short turn) or the status message."""
    from bridge.handlers import notify, turn_changes
    from bridge.handlers.reply import on_stop

    desk = notify.ask_desk(context)  # tmux meanwhile: is the owner at the desk (no ping)?
    close_answered_prompts(context)
    changes = turn_changes.compare_in_background(context)  # git meanwhile: reply text, footer
    found = None
    try:
        posted = on_stop(context, changes, desk)
        found = changes()
        if found and found["on_reply"] and not posted:
            found["on_reply"] = False  # no reply to carry it: the bot posts it
    finally:
        progress.record(context, "done", changes=found)


def on_turn_failed(context: HookContext) -> None:
    """StopFailure: an API error ended the turn instead of Stop; close its status message,
    and say in the channel what Claude Code said and what to do (no reply is coming)."""
    from bridge.claude import api_errors
    from bridge.handlers import notify

    close_answered_prompts(context)
    event = context.event
    error = str(event.get("error") or "unknown")
    details = str(event.get("error_details") or "")
    said = str(event.get("last_assistant_message") or "")
    try:
        if error == "rate_limit":  # the bot posts "⏸ Usage limit" and resumes at the reset
            from bridge.handlers import away

            away.on_usage_limit(context, said)  # first: the queue must see the session held
    finally:  # the turn's end releases the session's queued prompts
        progress.record(context, "failed", error=error, details=details[:300])
    if error != "rate_limit":
        notify.post_turn_failure(context, api_errors.notice(error, said, details))


def on_turn_interrupted(context: HookContext) -> None:
    """Interrupt (Codex's, on Esc: no Stop follows): the turn ended; close its status
    message as interrupted and the prompts it left open."""
    close_answered_prompts(context)
    progress.record(context, "interrupted")


def on_notification(context: HookContext) -> None:
    """Notification: forward Claude Code's notices that Discord does not already show."""
    from bridge.handlers import notify

    notify.on_notification(context)
