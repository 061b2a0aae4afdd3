"""What a prompt says once it is closed: who decided what (``outcome_line``), appended to the
prompt's text (``closed_content``).

Its own module because the bot and the hooks close prompts the same way, long after the prompt
was built: the building is :mod:`bridge.discord.render.decisions`'s.
"""

from __future__ import annotations

from bridge.discord.render.decisions import (
    CONTENT_LIMIT,
    SCOPE_LABELS,
    _one_line,
    suggestion_label,
)
from bridge.state import decisions
from bridge.state.decisions import Decision, Request


def closed_content(original: str, outcome_line: str) -> str:
    """The prompt's text with what happened appended (buttons are removed separately)."""
    room = CONTENT_LIMIT - len(outcome_line) - 2
    text = original if len(original) <= room else original[: room - 1] + "…"
    return f"{text}\n\n{outcome_line}"


def outcome_line(request: Request, decision: Decision, timeout: float = 900.0) -> str:
    """One line saying who decided what, appended to the prompt when it closes."""
    who = f"<@{decision.by}>" if decision.by else "someone"
    said = _quote(decision.message)
    outcome = decision.outcome
    if outcome == decisions.ALLOWED:
        return f"✅ **Allowed** by {who}"
    if outcome == decisions.ALWAYS_ALLOWED:
        suggestions = request.permission_suggestions
        index = decision.suggestion if decision.suggestion is not None else -1
        what = (
            suggestion_label(suggestions[index], scope_of(decision))
            if 0 <= index < len(suggestions) and isinstance(suggestions[index], dict)
            else "always"
        )
        return f"✅ **{what}** — by {who}"
    if outcome == decisions.DENIED:
        return f"❌ **Denied** by {who}"
    if outcome == decisions.TOLD_INSTEAD:
        return f"💬 **Denied** by {who}, telling Claude: {said}"
    if outcome == decisions.ANSWERED:
        return f"✅ **Answered** by {who}"
    if outcome == decisions.PLAN_APPROVED:
        how = "auto-accept edits" if decision.mode == "acceptEdits" else "review each edit"
        notes = f", with notes: {said}" if decision.message else ""
        return f"✅ **Plan approved** by {who} — {how}{notes}"
    if outcome == decisions.KEEP_PLANNING:
        return f"✏️ {who} asked Claude to **keep planning**: {said}"
    if outcome == decisions.ACCEPTED:
        if request.tool_input.get("mode") == "url":
            return f"✅ **Done** — {who} followed the link"
        from bridge.claude import elicitation as forms

        form = forms.fields(request.tool_input.get("requested_schema"))
        return f"✅ **Sent** by {who}: {forms.summary(form, decision.content or {})}"
    if outcome == decisions.DECLINED:
        return f"❌ **Declined** by {who}"
    if outcome == decisions.CANCELLED:
        return f"✖️ **Cancelled** by {who}"
    if outcome == decisions.TO_TERMINAL:
        return f"🖥️ **Left to the terminal** by {who}: Claude Code shows its own dialog"
    if outcome == decisions.RETRY:
        return f"🔁 **Claude may try again** — {who}; auto mode's check judges the new call"
    if outcome == decisions.NO_RETRY:
        return f"➡️ **Claude goes on without it** — {who}"
    if outcome == decisions.TIMED_OUT:
        waited = duration(timeout)
        return f"⏱ **No answer within {waited}** — {_timeout_result(request, decision)}"
    event = decision.event
    if event == "interrupted":
        return "⏹ **Interrupted** in the terminal — this prompt is closed"
    if event == "session ended":
        return "⏹ **The Claude Code session ended** — this prompt is closed"
    return "🖥️ **Answered in the terminal** — this prompt is closed"


def duration(seconds: float) -> str:
    """ "15 min", "90 s", "2 h": how long a prompt waited, for people."""
    if seconds < 120:
        return f"{round(seconds)} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"


def _timeout_result(request: Request, decision: Decision) -> str:
    if request.kind == "denied":
        return "Claude goes on without it"
    if decision.left_to_terminal:
        return "left to the terminal"
    return "cancelled" if request.kind == "elicitation" else "denied"


def scope_of(decision: Decision) -> str:
    """An "always" decision's destination, one of :data:`SCOPE_LABELS` (session if unknown)."""
    return decision.scope if decision.scope in SCOPE_LABELS else "s"


def _quote(text: object) -> str:
    one = _one_line(text)
    return f"“{one[:300]}{'…' if len(one) > 300 else ''}”" if one else "(nothing)"
