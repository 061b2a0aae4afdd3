"""PermissionDenied: auto mode's safety check refused a tool call; say so, and offer a retry.

Measured on 2.1.332: the check runs on the server; a flagged call does not
run, the model is told it was refused ("…denied by the Claude Code auto mode classifier.
Reason: …") and the turn goes on; the hook fires in between and Claude Code waits for it.
``retry: true`` does not override anything: the model is told it may make the call once more,
and the check judges that call again. So the notice's button says **Let Claude try again**.

With ``prompts.retryWaitSeconds`` > 0 (default 60) the hook waits that long for the owner
(``permission.ask``: a request file and the decision the bot writes on a click), and the turn
waits with it; after it, or on **Go on without it**, Claude goes on as it would have. With 0
the notice is posted alone and nothing waits. Not on the per-tool-call path: Claude Code runs
this hook only for a refused call.
"""

from __future__ import annotations

from bridge.handlers import permission
from bridge.handlers.context import HookContext
from bridge.state import decisions
from bridge.state.decisions import Decision, Request


def on_permission_denied(context: HookContext) -> dict | None:
    wait = context.cfg.retry_wait
    reason = context.event.get("reason")
    request = permission.new_request(
        context, kind="denied", timeout=wait, reason=reason if isinstance(reason, str) else None
    )
    from bridge.discord.render.decisions import denied_prompt

    payload = denied_prompt(request, offer_retry=wait > 0)
    if wait <= 0:
        _notice(context, payload)
        return None
    decision = permission.ask(context, request, payload)
    return None if decision is None else cli_answer(request, decision)


def cli_answer(request: Request, decision: Decision) -> dict | None:
    """``retry: true`` only for the owner's **Let Claude try again**; anything else lets
    Claude Code go on as it does without the hook."""
    if decision.outcome != decisions.RETRY:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": True}}


def _notice(context: HookContext, payload: dict) -> None:
    from bridge.discord.post import Post, message_payload

    context.deliver([Post({**message_payload(payload["content"]), "components": []})], budget=10.0)
