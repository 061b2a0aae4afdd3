"""The hook side of a decision: ask on Discord, wait for the answer, tell Claude Code.

Walk: PermissionRequest → :func:`on_permission_request` writes the request file and posts
the prompt (``bridge/discord/render/decisions.py``) → waits on the decision file with
watchfiles ← the bot writes it on a click (``bridge/bot/prompts/interactions.py``) →
:func:`cli_answer` turns the user's choice into the JSON Claude Code reads → the hook prints it.

The terminal dialog stays usable meanwhile (Claude Code shows it in parallel): if it is
answered there first, the prompt's own PostToolUse or the turn's end marks it stale
(:func:`on_session_event`), or the waiting hook sees Claude Code's interrupt record in the
transcript; it then edits the Discord message and exits without a decision. If Discord
cannot be reached, the hook gives no decision at once, so the terminal dialog is the fallback.

The wait itself, and all that ends it, is ``decision_wait``'s (imported only by a hook that
asks: this module is also the PreToolUse hook's, which every tool call runs).
"""

from __future__ import annotations

import os
import time

from bridge.handlers.context import HookContext
from bridge.state import decisions, private_files
from bridge.state.decisions import Decision, Request

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.discord.post import Post
    from bridge.discord.render.tool_call import Files, OnDisk

POST_BUDGET = 3.0  # seconds to get the prompt onto Discord before leaving it to the terminal
EDIT_BUDGET = 5.0
NEVER_ASK = ("AskUserQuestion", "ExitPlanMode")  # these always show their own dialog


# --- PreToolUse and the other session events ------------------------------------------------


def on_pre_tool_use(context: HookContext) -> dict | None:
    """Make ``permissionTools`` always ask. Another call starting closes no prompt; only
    requests whose hook was killed are cleared here (``mark_stale``)."""
    on_session_event(context)
    tool = context.event.get("tool_name")
    if not isinstance(tool, str) or tool in NEVER_ASK:
        return None
    if not context.server.lists_permission_tool(tool):
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": f"discord-bridge: {tool} is in permissionTools",
        }
    }


def on_session_event(context: HookContext) -> None:
    """Close the open prompts this event shows were answered in the terminal."""
    if os.path.isdir(context.runtime.prompts):
        decisions.mark_stale(context.runtime, context.event)


# --- PermissionRequest ----------------------------------------------------------------------


def on_permission_request(context: HookContext) -> dict | None:
    request = new_request(context)
    payload, files = render(request, [context.project.path])
    decision = ask(context, request, payload, files)
    return None if decision is None else cli_answer(request, decision)


def ask(
    context: HookContext, request: Request, payload: dict, files: Files | None = None
) -> Decision | None:
    """Post ``request``'s prompt (with ``files`` attached) and wait for what ends it: a click,
    a reaction, the terminal, the timeout. None when the prompt could not be posted (the
    terminal decides). Shared by every hook that waits for the owner (PermissionRequest,
    Elicitation, PermissionDenied)."""
    import gc

    from bridge.handlers.decision_wait import Cancelled, CancelledBySignals, wait_for_decision

    gc.enable()  # off for the fast path (run_hook); this process may now live for minutes
    rt = context.runtime.ensure()
    decisions.write_request(rt, request)
    # Claude Code stops the hook with SIGTERM (often twice) soon after an Esc or a terminal
    # "No"; under load that can land while the prompt is still being posted, or while it is
    # being closed. Signals are caught for the whole walk: they cancel only the wait.
    with CancelledBySignals() as signals:
        try:
            message = _post(context, payload, files or [])
        except Exception as err:  # Discord unreachable or refusing: the terminal dialog decides
            decisions.close(rt, request.id)
            private_files.append_log(
                rt.hook_log, f"prompt for #{context.channel_id} not posted: {err}"
            )
            return None
        message_id = message.get("id")
        request.message_id = message_id if isinstance(message_id, str) else None
        decisions.write_request(rt, request)
        try:
            signals.arm()
            decision = wait_for_decision(rt, request)
        except (Cancelled, KeyboardInterrupt):  # Claude Code stopped the hook: Esc, or "No"
            interrupted = Decision(outcome=decisions.ANSWERED_ELSEWHERE, event="interrupted")
            decisions.decide(rt, request.id, interrupted)
            decision = decisions.read_decision(rt, request.id) or interrupted
        finally:
            signals.disarm()
        try:
            if decision.outcome in (decisions.ANSWERED_ELSEWHERE, decisions.TIMED_OUT):
                _close_message(context, request, payload["content"], decision)
        finally:
            decisions.close(rt, request.id)
        return decision


def new_request(
    context: HookContext, kind: str | None = None, timeout: float | None = None, **fields: object
) -> Request:
    """The request for the event's dialog (``kind``: another hook's prompt, waiting
    ``timeout`` seconds, with its own ``fields``). What Claude Code sent is kept only where
    it has the expected type (a field of another type is left empty, never a crash)."""
    from bridge.handlers.decision_wait import transcript_size

    event = context.event
    tool = _text(event.get("tool_name"))
    if kind is None:
        kind = {"AskUserQuestion": "question", "ExitPlanMode": "plan"}.get(tool or "", "permission")
    tool_input, suggestions = event.get("tool_input"), event.get("permission_suggestions")
    now = time.time()
    transcript = _text(event.get("transcript_path"))
    timeout = context.cfg.prompt_timeout if timeout is None else timeout
    return Request(
        id=decisions.new_id(),
        kind=kind,
        session_id=_text(event.get("session_id")),
        agent_id=_text(event.get("agent_id")),  # a background subagent's dialog (None: main)
        channel_id=context.channel_id,
        cli=context.agent,
        project=context.project.name,
        tool_name=tool,
        permission_suggestions=suggestions if isinstance(suggestions, list) else [],
        transcript_path=transcript,
        transcript_offset=transcript_size(transcript),
        created=now,
        deadline=now + timeout,
        timeout=timeout,
        on_timeout=context.cfg.prompt_timeout_outcome,
        pid=os.getpid(),
        **{"tool_input": tool_input if isinstance(tool_input, dict) else {}, **fields},
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def render(request: Request, roots: list[str] | None = None) -> tuple[dict, Files]:
    """The prompt's message and the files it attaches. A file an Edit or a Write changes is
    read (to number the diff's lines, as the terminal does) only inside ``roots``."""
    from bridge.discord.render import decisions as views
    from bridge.discord.render import plan_prompt

    if request.kind == "question":
        return views.question_prompt(request), []
    if request.kind == "plan":
        return plan_prompt.plan_prompt(request)
    path = request.tool_input.get("file_path")
    if request.tool_name in ("Edit", "MultiEdit", "Write") and isinstance(path, str):
        return views.permission_prompt(request, on_disk(path, roots or []))
    return views.permission_prompt(request)


FILE_READ_MOST = 1024 * 1024  # bigger files are diffed by their strings only


def on_disk(path: str, roots: list[str]) -> OnDisk:
    """The file as it is now, read only when it lies inside one of ``roots`` (the project:
    a file outside it is the model's to name, and its text must not go to Discord unasked),
    is a regular text file of at most 1 MB, and opens without following a symlink or
    blocking (a FIFO)."""
    import stat

    from bridge.discord.render.tool_call import UNREAD, OnDisk

    if not os.path.isabs(path):
        return UNREAD
    real = os.path.realpath(path)
    inside = [os.path.realpath(root) for root in roots if root]
    if not any(real.startswith(root.rstrip(os.sep) + os.sep) for root in inside):
        return UNREAD
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        return OnDisk(absent=True)
    except OSError:
        return UNREAD
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > FILE_READ_MOST:
            return UNREAD
        data = os.read(fd, FILE_READ_MOST + 1)
    finally:
        os.close(fd)
    try:
        return OnDisk(data.decode("utf-8"))
    except UnicodeDecodeError:
        return UNREAD


def _post(context: HookContext, payload: dict, files: Files) -> dict:
    from bridge.discord.post import Post, allowed, message_payload  # only a prompt needs them
    from bridge.handlers.notify import mention_for

    mention = mention_for(context)  # a decision is needed: ping the owner's phone
    body = {**message_payload(""), **payload, "allowed_mentions": allowed(mention)}
    if mention:
        body["content"] = f"{mention} {payload['content']}"
    post = Post(body, files)
    message = _hand_to_bot(context, post)
    if message is not None:
        return message
    with context.rest() as rest:  # no bot, or it did not post in time: the same nonce, so
        rest.budget = min(rest.budget, POST_BUDGET)  # a post the bot made returns as is
        return rest.create_message(context.channel_id, post)


def _hand_to_bot(context: HookContext, post: Post) -> dict | None:
    """The prompt's message, posted by the running bot; None when there is no bot or it did
    not post within the hand-off wait (the entry is then taken back, so it never shows up
    later when the terminal already decided)."""
    from bridge.discord import handoff
    from bridge.discord.delivery import NotTaken, hand_off
    from bridge.discord.outbox import Outbox

    rt, channel = context.runtime, context.channel_id
    outbox = Outbox(rt.outbox)
    try:
        paths = hand_off(rt, outbox, context.server.name, channel, [post], receipt=True)
    except NotTaken as err:
        with outbox.locked(channel, until=time.monotonic() + 0.5) as locked:
            for path in err.paths if locked else []:
                if os.path.lexists(path):
                    outbox.remove(path)
        return None
    if paths is None:
        return None
    return handoff.read_receipt(rt, post.payload["nonce"])


def _close_message(
    context: HookContext, request: Request, content: str, decision: Decision
) -> None:
    """The prompt can no longer be answered: say why and remove its buttons."""
    from bridge.discord.render.outcome import closed_content, outcome_line

    line = outcome_line(request, decision, request.timeout)
    body = {"content": closed_content(content, line), "components": []}
    try:
        with context.rest() as rest:
            rest.budget = min(rest.budget, EDIT_BUDGET)
            rest.edit_message(context.channel_id, str(request.message_id), body)
    except Exception as err:
        private_files.append_log(context.runtime.hook_log, f"could not close prompt message: {err}")


# --- the answer Claude Code reads -----------------------------------------------------------


def cli_answer(request: Request, decision: Decision) -> dict | None:
    """The PermissionRequest hook output for the user's choice (None: no decision)."""
    behavior = _decision(request, decision)
    if behavior is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": behavior}}


def _decision(request: Request, decision: Decision) -> dict | None:
    from bridge.claude.permissions import applied_suggestion

    outcome = decision.outcome
    if outcome == decisions.ALLOWED:
        return {"behavior": "allow"}
    if outcome == decisions.ALWAYS_ALLOWED:
        suggestions = request.permission_suggestions
        index = decision.suggestion if decision.suggestion is not None else -1
        if not 0 <= index < len(suggestions) or not isinstance(suggestions[index], dict):
            return None
        entry = applied_suggestion(suggestions[index], decision.scope or "s")
        return {"behavior": "allow", "updatedPermissions": [entry]}
    if outcome in (decisions.DENIED, decisions.TOLD_INSTEAD, decisions.KEEP_PLANNING):
        return {"behavior": "deny", "message": decision.message or "Denied from Discord."}
    if outcome == decisions.ANSWERED:
        updated = {**request.tool_input, "answers": decision.answers or {}}
        return {"behavior": "allow", "updatedInput": updated}
    if outcome == decisions.PLAN_APPROVED:
        mode = {"type": "setMode", "mode": decision.mode, "destination": "session"}
        return {
            "behavior": "allow",
            "updatedInput": _approved(request, decision.message),
            "updatedPermissions": [mode],
        }
    if outcome == decisions.TIMED_OUT and not decision.left_to_terminal:
        from bridge.discord.render.outcome import duration

        waited = duration(request.timeout)
        return {"behavior": "deny", "message": f"No answer from Discord within {waited}."}
    return None  # answered in the terminal, or left to it


def _approved(request: Request, notes: str | None) -> dict:
    """The approval's input: ``{}`` (Claude Code approves the plan it showed), or with notes
    the plan with them appended, which Claude Code takes as the plan "edited by user": the
    model reads it in the approval's own result, before it acts, and the plan file keeps it
    (measured on 2.1.332: bridge/claude/plan_steps.py)."""
    if not notes:
        return {}
    from bridge.claude.plan_steps import with_notes

    return {"plan": with_notes(str(request.tool_input.get("plan") or ""), notes)}
