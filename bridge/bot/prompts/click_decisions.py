"""What a click decides: :func:`decision_of`, the one table from what a user did on Discord (a
click, a modal, a reaction) to the decision the waiting hook reads, who did it, and what a
modal asks and what its fields say. Its own module: pure reading of a click and its text, no
Discord call, apart from the answerer that writes the decision (``interactions``).
"""

from __future__ import annotations

from bridge.bot.client import BotInteraction, data_of
from bridge.claude import plan_steps
from bridge.discord import custom_ids
from bridge.discord import prompt_actions as actions
from bridge.discord.prompt_clicks import Action
from bridge.discord.render import decisions as views
from bridge.discord.render import outcome
from bridge.state import decisions
from bridge.state.decisions import Decision, Request

TEXT_FIELD = custom_ids.MODAL_TEXT


def decision_of(click: Action, by: str, by_name: str, text: str = "") -> Decision:
    """What a click (and the text its modal took) decides, for the kinds that decide at once:
    the one table from what a user did on Discord (a click, a modal, a reaction) to what the
    waiting hook reads. ``by``, ``by_name``: who did it."""
    who = {"by": by, "by_name": by_name}
    if click.kind == actions.ALLOW:
        return Decision(outcome=decisions.ALLOWED, **who)
    if click.kind == actions.DENY:
        message = f"Denied from Discord by {by_name}."
        return Decision(outcome=decisions.DENIED, message=message, **who)
    if click.kind == actions.ALWAYS:
        suggestion, scope = click.suggestion, click.scope
        return Decision(outcome=decisions.ALWAYS_ALLOWED, suggestion=suggestion, scope=scope, **who)
    if click.kind == actions.APPROVE:
        return Decision(outcome=decisions.PLAN_APPROVED, mode=click.mode, **who)
    if click.kind == actions.APPROVE_NOTES:
        return Decision(outcome=decisions.PLAN_APPROVED, mode=click.mode, message=text, **who)
    if click.kind == actions.TELL:
        return Decision(outcome=decisions.TOLD_INSTEAD, message=text, **who)
    if click.kind in (actions.KEEP_PLANNING, actions.STEP_NOTES):
        return Decision(outcome=decisions.KEEP_PLANNING, message=text, **who)
    if click.kind == actions.RETRY:
        return Decision(outcome=decisions.RETRY, **who)
    if click.kind == actions.GO_ON:
        return Decision(outcome=decisions.NO_RETRY, **who)
    raise ValueError(f"a {click.kind} click decides nothing by itself")


def decided_by(interaction: BotInteraction) -> dict[str, str]:
    return {"by": str(interaction.user.id), "by_name": interaction.user.display_name}


def who_of(interaction: BotInteraction) -> tuple[str, str]:
    return str(interaction.user.id), interaction.user.display_name


def modal_text(request: Request, click: Action) -> tuple[str, str, str]:
    if click.kind == actions.TELL:
        who = views.speaker(request)
        return (
            f"Tell {who} what to do instead",
            f"Instead, {who} should…",
            "e.g. run the tests first",
        )
    if click.kind == actions.KEEP_PLANNING:
        return ("Keep planning", "What should change in the plan?", "e.g. add tests first")
    # parse() sets an OTHER action's question (one record for every kind: mypy cannot see it)
    header = views.question_header(request, click.question)  # type: ignore[arg-type]
    # Discord refuses a title or label over 45 characters; a header's length is not enforced
    spec = views.modal(
        "", f"Other answer: {header}", header or "Your answer", "Type your own answer"
    )
    return spec["title"], spec["label"], spec["placeholder"]


def question_content(request: Request, answers: dict) -> str:
    base = views.question_prompt(request)["content"]
    summary = views.answers_summary(request, answers)
    return outcome.closed_content(base, summary) if summary else base  # within 2,000


def submitted_fields(interaction: BotInteraction) -> dict[str, str | list[str]]:
    """A modal's submitted fields: custom_id → the text typed, or the values picked."""
    found: dict[str, str | list[str]] = {}
    for row in data_of(interaction).get("components", []):
        children = row.get("components") or ([row["component"]] if "component" in row else [])
        for child in children:
            custom = child.get("custom_id")
            if not isinstance(custom, str):
                continue
            if "values" in child:
                found[custom] = [str(v) for v in child.get("values") or []]
            else:
                found[custom] = str(child.get("value") or "")
    return found


def typed_text(request: Request, click: Action, submitted: dict[str, str | list[str]]) -> str:
    """What the modal's text says: its one field, or for notes on steps each step's note,
    quoted with its step (``plan_steps.feedback``; a step left empty is left out)."""
    if click.kind != actions.STEP_NOTES:
        text = submitted.get(TEXT_FIELD)
        return text.strip() if isinstance(text, str) else ""
    notes = []
    for number in click.steps:
        note = submitted.get(actions.step_value(number))
        if isinstance(note, str) and note.strip():
            notes.append((number, note))
    plan = str(request.tool_input.get("plan") or "")
    return plan_steps.feedback(plan, notes) if notes else ""
