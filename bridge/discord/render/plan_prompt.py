"""Discord messages for Claude Code's plan approval: the plan prompt, its step selects, and
the two modals it opens (approve with notes; notes on the steps picked).

Its own module because a plan prompt is its own kind of prompt, built from the plan's numbered
steps (``bridge/claude/plan_steps.py``), with modals no other prompt has; it uses the
component builders of ``render/decisions.py``, as the permission and question prompts do.
Pure functions, on the PermissionRequest hook's path like those.
"""

from __future__ import annotations

from bridge.claude import plan_steps
from bridge.discord import custom_ids
from bridge.discord import prompt_actions as actions
from bridge.discord.render.decisions import (
    BODY_LIMIT,
    LABEL,
    NOTE_LIMIT,
    PARAGRAPH,
    PRIMARY,
    REVEALED,
    SECONDARY,
    SELECT,
    SUCCESS,
    TEXT_INPUT,
    _button,
    _fit,
    _label,
    _row,
    _shown,
    custom_id,
)
from bridge.discord.render.tool_call import Files
from bridge.discord.render.visible import reveal
from bridge.state.decisions import Request

PLAN_EXCERPT = 1200


def plan_prompt(request: Request) -> tuple[dict, Files]:
    """The plan message, its steps numbered (``bridge/claude/plan_steps.py``), and the whole
    numbered plan as a file when it is too long to show."""
    plan = str(request.tool_input.get("plan") or "").strip()
    shown = plan_steps.numbered(plan) if plan else "(empty plan)"
    head = "📋 **Claude's plan is ready for review**\n"
    if reveal(shown) != shown:
        head += REVEALED + "\n"
    attach = len(shown) > BODY_LIMIT - len(head) - 40
    excerpt = _balance_fences(shown[:PLAN_EXCERPT].rstrip() if attach else shown)
    excerpt = reveal(excerpt)
    body = excerpt + "\n…\n*(full plan attached: plan.md)*" if attach else excerpt
    payload = {"content": _fit(head + body), "components": plan_components(request)}
    return payload, ([("plan.md", shown.encode())] if attach else [])


def plan_components(request: Request) -> list[dict]:
    """The three ways and the one with notes; then the steps to put notes on, 25 a select."""
    rid = request.id
    rows = [
        _row(
            _button("Approve, auto-accept edits", custom_id(rid, actions.PLAN_AUTO), SUCCESS),
            _button("Approve, review each edit", custom_id(rid, actions.PLAN_REVIEW), PRIMARY),
            _button("Approve with notes…", custom_id(rid, actions.PLAN_NOTES), PRIMARY),
            _button("Keep planning…", custom_id(rid, actions.PLAN_KEEP), SECONDARY),
        )
    ]
    found = plan_steps.steps(str(request.tool_input.get("plan") or "").strip())
    per = actions.STEPS_PER_SELECT
    found = found[: per * actions.STEP_SELECTS]
    for page in range((len(found) + per - 1) // per):
        on_page = found[page * per : page * per + per]
        rows.append(_row(_steps_select(rid, page, on_page)))
    return rows


def _steps_select(rid: str, page: int, steps: list[plan_steps.Step]) -> dict:
    first, last = steps[0].number, steps[-1].number
    which = f"step {first}" if first == last else f"steps {first}–{last}"
    return {
        "type": SELECT,
        "custom_id": custom_id(rid, actions.step_select(page), select=True),
        "placeholder": f"Notes on {which}… (sent back to keep planning)",
        "min_values": 1,
        "max_values": min(actions.STEP_NOTES_MOST, len(steps)),
        "options": [
            {
                "label": _label(f"{s.number} · {_shown(s.text)}", 100),
                "value": actions.step_value(s.number),
            }
            for s in steps
        ],
    }


def plan_notes_modal(request: Request) -> dict:
    """Approve with notes: the mode to switch to, and the notes (Discord's modal JSON)."""
    return {
        "custom_id": custom_id(request.id, actions.PLAN_NOTES),
        "title": "Approve the plan with notes",
        "components": [
            {
                "type": LABEL,
                "label": "Edits after approval",
                "component": {
                    "type": SELECT,
                    "custom_id": custom_ids.MODAL_MODE,
                    "min_values": 1,
                    "max_values": 1,
                    "options": [
                        {"label": "Auto-accept edits", "value": "auto", "default": True},
                        {"label": "Review each edit", "value": "review", "default": False},
                    ],
                },
            },
            {
                "type": LABEL,
                "label": "Notes Claude reads with the approval",
                "component": _text_input(custom_ids.MODAL_TEXT, "e.g. keep the old API working"),
            },
        ],
    }


def step_notes_modal(request: Request, numbers: tuple[int, ...]) -> dict:
    """A note on each step picked (at most five), each field showing its step's text."""
    by_number = {s.number: s for s in plan_steps.steps(str(request.tool_input.get("plan") or ""))}
    which = ", ".join(map(str, numbers))
    return {
        "custom_id": custom_id(request.id, actions.step_notes(numbers)),
        "title": _label(f"Notes on step{'s' if len(numbers) > 1 else ''} {which}", 45),
        "components": [
            {
                "type": LABEL,
                "label": f"Step {n}",
                "description": _label(_shown(by_number[n].text) if n in by_number else "", 100),
                "component": _text_input(  # a step left empty gets no note
                    actions.step_value(n), "What should change here?", required=False
                ),
            }
            for n in numbers
        ],
    }


def _text_input(custom: str, placeholder: str, required: bool = True) -> dict:
    return {
        "type": TEXT_INPUT,
        "custom_id": custom,
        "style": PARAGRAPH,
        "placeholder": _label(placeholder, 100),
        "max_length": NOTE_LIMIT,
        "required": required,
    }


def _balance_fences(text: str) -> str:
    """An excerpt cut inside a code block must not turn the rest of the message into code."""
    opened = sum(1 for line in text.splitlines() if line.lstrip().startswith("```")) % 2
    return text + "\n```" if opened else text
