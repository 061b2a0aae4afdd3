"""Clicks on an MCP server's request for input (an elicitation prompt): the bot side of a form.

The form's answers so far live in the request's ``.answers`` file (field name → value; a
missing file: the schema's defaults), so a half-filled form survives a bot restart. A pick in
a field's select, or a page of text inputs submitted in a modal (**Fill in…**), is checked
field by field (``bridge.claude.elicitation``: types, bounds, formats, choices) and kept; the
message is redrawn with the answers. **Send** checks the whole form (required fields too) and
only then writes the decision with the content; what is wrong is said privately and nothing is
decided. **Decline**, **Cancel**, **Done** (a link) and **Answer in the terminal** decide at
once. Who may click, and whether the prompt still waits, is checked before (``interactions``).
"""

from __future__ import annotations

import logging
from typing import Protocol

import discord

from bridge.bot.client import BotInteraction, data_of
from bridge.claude import elicitation as forms
from bridge.discord import prompt_actions as actions
from bridge.discord.prompt_clicks import Action
from bridge.discord.render import elicitation as views
from bridge.state import decisions
from bridge.state.decisions import Decision, Request
from bridge.state.runtime import Runtime

log = logging.getLogger(__name__)

DECIDED_AT_ONCE = {
    actions.DECLINE: decisions.DECLINED,
    actions.CANCEL: decisions.CANCELLED,
    actions.TO_TERMINAL: decisions.TO_TERMINAL,
}
NOT_SENT = "Not sent: fix these first (nothing was decided):"


class Prompts(Protocol):
    """What a form needs of the prompt answerer (``interactions.PromptAnswerer``)."""

    runtime: Runtime

    async def decide(
        self, interaction: BotInteraction, request: Request, decision: Decision, body: str = ""
    ) -> None: ...

    def view(self, rows: list[dict]) -> discord.ui.View: ...


class FormAnswerer:
    """One elicitation prompt's clicks, selects and modal submits."""

    def __init__(self, prompts: Prompts) -> None:
        self.prompts = prompts
        self.runtime = prompts.runtime

    async def on_click(self, interaction: BotInteraction, request: Request, click: Action) -> None:
        if click.kind == actions.FILL:
            await self._open_page(interaction, request, click.page or 0)
        elif click.kind == actions.PICK:
            await self._picked(interaction, request, click)
        elif click.kind == actions.ACCEPT:
            await self._send(interaction, request)
        else:
            decision = Decision(outcome=DECIDED_AT_ONCE[click.kind], **_who(interaction))
            await self.prompts.decide(interaction, request, decision)

    async def on_modal(self, interaction: BotInteraction, request: Request, click: Action) -> None:
        """A page of text inputs: each field read, checked and kept; the problems said."""
        layout = actions.form_layout(request)
        typed = submitted_inputs(interaction)
        answers = self.answers(request)
        problems = []
        for i in layout.pages[click.page or 0]:
            field = layout.fields[i]
            value, problem = forms.from_text(field, typed.get(actions.field_input(i), ""))
            if problem:
                problems.append(problem)
            else:
                answers[field.name] = value
        decisions.write_answers(self.runtime, request.id, answers)
        payload = views.elicitation_prompt(request, answers)
        if not problems:
            await interaction.response.edit_message(
                content=payload["content"], view=self.prompts.view(payload["components"])
            )
            return
        await interaction.response.send_message(_listed("Not kept:", problems), ephemeral=True)
        if interaction.message is not None:  # the answers that were kept, shown
            await interaction.message.edit(
                content=payload["content"], view=self.prompts.view(payload["components"])
            )

    def answers(self, request: Request) -> dict:
        """The answers so far: the request's ``.answers`` file, else the schema's defaults."""
        if decisions.has_answers(self.runtime, request.id):
            return decisions.read_answers(self.runtime, request.id)
        return forms.defaults(forms.fields(request.tool_input.get("requested_schema")))

    async def _open_page(self, interaction: BotInteraction, request: Request, page: int) -> None:
        spec = views.fill_modal(request, page, self.answers(request))
        modal = discord.ui.Modal(title=spec["title"], custom_id=spec["custom_id"])
        for item in spec["inputs"]:
            modal.add_item(
                discord.ui.TextInput(
                    label=item["label"],
                    custom_id=item["custom_id"],
                    style=discord.TextStyle(item["style"]),
                    placeholder=item["placeholder"],
                    default=item["value"] or None,
                    required=item["required"],
                    max_length=views.VALUE_LIMIT,
                )
            )
        await interaction.response.send_modal(modal)
        modal.stop()  # submits are routed by custom_id (on_interaction), also after a restart

    async def _picked(self, interaction: BotInteraction, request: Request, click: Action) -> None:
        layout = actions.form_layout(request)
        field = layout.fields[click.question or 0]
        values = [field.options[j][0] for j in click.picked]
        answers = self.answers(request)
        if field.kind == forms.BOOLEAN:
            answers[field.name] = values[0] == "true"
        elif field.kind == forms.CHOICES:
            answers[field.name] = values
        else:
            answers[field.name] = values[0]
        decisions.write_answers(self.runtime, request.id, answers)
        payload = views.elicitation_prompt(request, answers)
        await interaction.response.edit_message(
            content=payload["content"], view=self.prompts.view(payload["components"])
        )

    async def _send(self, interaction: BotInteraction, request: Request) -> None:
        if request.tool_input.get("mode") == "url":
            decision = Decision(outcome=decisions.ACCEPTED, **_who(interaction))
            await self.prompts.decide(interaction, request, decision)
            return
        form = forms.fields(request.tool_input.get("requested_schema"))
        answers = self.answers(request)
        content = {k: v for k, v in answers.items() if v is not None}
        problems = forms.check(form, content)
        if problems:
            await interaction.response.send_message(_listed(NOT_SENT, problems), ephemeral=True)
            return
        decision = Decision(outcome=decisions.ACCEPTED, content=content, **_who(interaction))
        payload = views.elicitation_prompt(request, answers)
        await self.prompts.decide(interaction, request, decision, payload["content"])


def submitted_inputs(interaction: BotInteraction) -> dict[str, str]:
    """A modal submit's text inputs: custom_id → value."""
    found = {}
    for row in data_of(interaction).get("components", []):
        children = row.get("components") or ([row["component"]] if "component" in row else [])
        for child in children:
            if isinstance(child.get("custom_id"), str):
                found[child["custom_id"]] = str(child.get("value") or "")
    return found


def _listed(head: str, problems: list[str]) -> str:
    text = head + "\n" + "\n".join(f"• {p}" for p in problems[:20])
    return text[:1900]


def _who(interaction: BotInteraction) -> dict[str, str]:
    return {"by": str(interaction.user.id), "by_name": interaction.user.display_name}
