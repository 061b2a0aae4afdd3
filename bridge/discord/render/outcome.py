"""What a prompt says once it is closed: who decided what (``outcome_line``), appended to the
prompt's text (``closed_content``).

Its own module because the bot and the hooks close prompts the same way, long after the prompt
was built: the building is :mod:`bridge.discord.render.decisions`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from bridge.discord.render.decisions import (
    CONTENT_LIMIT,
    SCOPE_LABELS,
    _one_line,
    speaker,
    suggestion_label,
)
from bridge.state import decisions
from bridge.state.decisions import Decision, Request


def closed_content(original: str, outcome_line: str) -> str:
    """The prompt's text with what happened appended (buttons are removed separately)."""
    room = CONTENT_LIMIT - len(outcome_line) - 2
    text = original if len(original) <= room else original[: room - 1] + "…"
    return f"{text}\n\n{outcome_line}"


class _Closed(NamedTuple):
    """What a closed prompt's line may say: who decided (a mention, or "someone"), their words
    quoted, and the rest of the request and decision for the lines that need more."""

    who: str
    said: str
    request: Request
    decision: Decision
    timeout: float


def outcome_line(request: Request, decision: Decision, timeout: float = 900.0) -> str:
    """One line saying who decided what, appended to the prompt when it closes."""
    reads = _READS.get(decision.outcome)
    if reads is None:  # answered elsewhere: the event that showed it says how
        return _elsewhere(decision.event or "", request)
    who = f"<@{decision.by}>" if decision.by else "someone"
    return reads(_Closed(who, _quote(decision.message), request, decision, timeout))


def _always(c: _Closed) -> str:
    """The suggestion an "always" applied, as its button read ("always" if it is not there)."""
    suggestions = c.request.permission_suggestions
    index = c.decision.suggestion if c.decision.suggestion is not None else -1
    if 0 <= index < len(suggestions) and isinstance(suggestions[index], dict):
        return suggestion_label(suggestions[index], scope_of(c.decision))
    return "always"


def _plan_approved(c: _Closed) -> str:
    how = "auto-accept edits" if c.decision.mode == "acceptEdits" else "review each edit"
    notes = f", with notes: {c.said}" if c.decision.message else ""
    return f"{how}{notes}"


def _accepted(c: _Closed) -> str:
    if c.request.tool_input.get("mode") == "url":
        return f"✅ **Done** — {c.who} followed the link"
    from bridge.claude import elicitation as forms

    form = forms.fields(c.request.tool_input.get("requested_schema"))
    return f"✅ **Sent** by {c.who}: {forms.summary(form, c.decision.content or {})}"


def _timeout_result(c: _Closed) -> str:
    if c.request.kind == "denied":
        return "Claude goes on without it"
    if c.decision.left_to_terminal:
        return "left to the terminal"
    return "cancelled" if c.request.kind == "elicitation" else "denied"


# A decision's outcome → how its line reads.
_READS: dict[str, Callable[[_Closed], str]] = {
    decisions.ALLOWED: lambda c: f"✅ **Allowed** by {c.who}",
    decisions.ALWAYS_ALLOWED: lambda c: f"✅ **{_always(c)}** — by {c.who}",
    decisions.DENIED: lambda c: f"❌ **Denied** by {c.who}",
    decisions.TOLD_INSTEAD: lambda c: (
        f"💬 **Denied** by {c.who}, telling {speaker(c.request)}: {c.said}"
    ),
    decisions.ANSWERED: lambda c: f"✅ **Answered** by {c.who}",
    decisions.PLAN_APPROVED: lambda c: f"✅ **Plan approved** by {c.who} — {_plan_approved(c)}",
    decisions.KEEP_PLANNING: lambda c: f"✏️ {c.who} asked Claude to **keep planning**: {c.said}",
    decisions.ACCEPTED: _accepted,
    decisions.DECLINED: lambda c: f"❌ **Declined** by {c.who}",
    decisions.CANCELLED: lambda c: f"✖️ **Cancelled** by {c.who}",
    decisions.TO_TERMINAL: lambda c: (
        f"🖥️ **Left to the terminal** by {c.who}: {cli_name(c.request)} shows its own dialog"
    ),
    decisions.RETRY: lambda c: (
        f"🔁 **Claude may try again** — {c.who}; auto mode's check judges the new call"
    ),
    decisions.NO_RETRY: lambda c: f"➡️ **Claude goes on without it** — {c.who}",
    decisions.TIMED_OUT: lambda c: (
        f"⏱ **No answer within {duration(c.timeout)}** — {_timeout_result(c)}"
    ),
}

# The session's agent CLI (a request's ``cli``) as a closed prompt names it: bridge.agents'
# labels, which the hooks that close prompts must not import.
CLI_NAMES = {"claude": "Claude Code", "codex": "Codex"}


def cli_name(request: Request) -> str:
    return CLI_NAMES.get(request.cli, "Claude Code")


def _elsewhere(event: str, request: Request) -> str:
    """Any other outcome was answered elsewhere: how its line reads, by the event that
    showed it."""
    if event == "interrupted":
        return "⏹ **Interrupted** in the terminal — this prompt is closed"
    if event == "session ended":
        return f"⏹ **The {cli_name(request)} session ended** — this prompt is closed"
    return _IN_THE_TERMINAL


_IN_THE_TERMINAL = "🖥️ **Answered in the terminal** — this prompt is closed"


def duration(seconds: float) -> str:
    """ "15 min", "90 s", "2 h": how long a prompt waited, for people."""
    if seconds < 120:
        return f"{round(seconds)} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"


def scope_of(decision: Decision) -> str:
    """An "always" decision's destination, one of :data:`SCOPE_LABELS` (session if unknown)."""
    return decision.scope if decision.scope in SCOPE_LABELS else "s"


def _quote(text: object) -> str:
    one = _one_line(text)
    return f"“{one[:300]}{'…' if len(one) > 300 else ''}”" if one else "(nothing)"
