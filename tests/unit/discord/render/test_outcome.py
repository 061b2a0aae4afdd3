"""What a closed MCP form, link or auto-mode refusal says (bridge/discord/render/outcome.py),
and a decision of an outcome the bridge does not know. A permission's, a question's and a
plan's lines: test_decisions.py."""

from __future__ import annotations

import pytest

from bridge.discord.render import outcome
from bridge.state.decisions import Decision, Request
from tests.unit.discord.prompt_requests import denied, elicitation

FORM = elicitation()
LINK = elicitation(url="https://example.com/auth")
REFUSAL = denied()


def closed(request: Request, raw: dict, timeout: float = 900.0) -> str:
    decision = Decision.from_dict(raw)
    assert decision is not None, raw
    return outcome.outcome_line(request, decision, timeout)


@pytest.mark.parametrize(
    ("request_", "decision", "line"),
    [
        (
            FORM,
            {"outcome": "accepted", "content": {"name": "x", "color": "green"}, "by": "7"},
            "✅ **Sent** by <@7>: Project name: x · Colour: green",
        ),
        (FORM, {"outcome": "accepted", "by": "7"}, "✅ **Sent** by <@7>: (nothing)"),
        (LINK, {"outcome": "accepted", "by": "7"}, "✅ **Done** — <@7> followed the link"),
        (FORM, {"outcome": "declined", "by": "7"}, "❌ **Declined** by <@7>"),
        (LINK, {"outcome": "cancelled"}, "✖️ **Cancelled** by someone"),
        (
            FORM,
            {"outcome": "to_terminal", "by": "7"},
            "🖥️ **Left to the terminal** by <@7>: Claude Code shows its own dialog",
        ),
        (FORM, {"outcome": "timeout"}, "⏱ **No answer within 15 min** — cancelled"),
        (
            FORM,
            {"outcome": "timeout", "left_to_terminal": True},
            "⏱ **No answer within 15 min** — left to the terminal",
        ),
        (
            REFUSAL,
            {"outcome": "retry", "by": "7"},
            "🔁 **Claude may try again** — <@7>; auto mode's check judges the new call",
        ),
        (REFUSAL, {"outcome": "no_retry", "by": "7"}, "➡️ **Claude goes on without it** — <@7>"),
        (
            REFUSAL,
            {"outcome": "timeout"},
            "⏱ **No answer within 15 min** — Claude goes on without it",
        ),
        # an outcome the bridge does not know reads as the terminal's answer, as before
        (
            FORM,
            {"outcome": "shrug", "by": "7"},
            "🖥️ **Answered in the terminal** — this prompt is closed",
        ),
    ],
)
def test_outcome_lines_of_forms_links_and_refusals(
    request_: Request, decision: dict, line: str
) -> None:
    assert closed(request_, decision) == line


def test_a_timeout_says_how_long_it_waited() -> None:
    assert closed(REFUSAL, {"outcome": "timeout"}, 60) == (
        "⏱ **No answer within 60 s** — Claude goes on without it"
    )
    assert closed(FORM, {"outcome": "timeout"}, 3 * 3600) == (
        "⏱ **No answer within 3 h** — cancelled"
    )


def test_a_codex_sessions_closed_prompt_names_codex() -> None:
    """The lines that name the session's CLI read Codex's for a Codex request (its ``cli``)."""
    from tests.unit.discord.prompt_requests import RID, record

    codex = record({"id": RID, "kind": "permission", "tool_name": "Bash", "cli": "codex"})
    lines = [
        closed(codex, {"outcome": "to_terminal", "by": "7"}),
        closed(codex, {"outcome": "answered_elsewhere", "event": "session ended"}),
        closed(codex, {"outcome": "tell", "message": "use make", "by": "7"}),
    ]
    assert lines == [
        "🖥️ **Left to the terminal** by <@7>: Codex shows its own dialog",
        "⏹ **The Codex session ended** — this prompt is closed",
        "💬 **Denied** by <@7>, telling Codex: “use make”",
    ]
