"""Clicks, selects and modal submits on prompt messages: the bot side of a decision.

Buttons and selects are ``DynamicItem``s matched by ``custom_id`` (which carries the request
id), so a prompt posted before a restart still works after it; modal submits are routed by
``custom_id`` in ``on_interaction`` for the same reason. The bot keeps no state of its own:
the request file says what is pending, the decision file (created exclusively) records
the one decision, and the waiting hook does the rest.

Walk: a click → the ``custom_id`` read (a ``BridgeItem``'s template, or
:func:`bridge.discord.custom_ids.parse_prompt` for a modal) → who clicked (the item's
``interaction_check``, or ``allowed`` for a modal or a click no item receives) → whether the
request still waits → what the click does on this request
(:func:`bridge.discord.prompt_clicks.parse`: an ``Action``, or None for anything the prompt
could not have sent) → a modal, the scope redrawn, a question's answer kept, or the decision
written (:func:`decision_of`).

This module holds that walk (:class:`PromptAnswerer`, the modal submits, the clicks no item
receives); the prompt's buttons, selects, views and modals as discord.py items are
``components``', what a click and its text decide ``click_decisions``'.
"""

from __future__ import annotations

import asyncio
import logging

import discord

from bridge.bot.client import (
    BotInteraction,
    BridgeClient,
    allowed,
    data_of,
    may_react,
)
from bridge.bot.prompts.click_decisions import (
    TEXT_FIELD,
    decided_by,
    decision_of,
    modal_text,
    question_content,
    submitted_fields,
    typed_text,
    who_of,
)
from bridge.bot.prompts.components import (
    NO_LONGER_PENDING,
    NOT_VALID,
    OUT_OF_DATE,
    PromptButton,
    PromptSelect,
    answered,
    ephemeral,
    modal_from_spec,
    view_from_rows,
)
from bridge.claude.permissions import next_scope
from bridge.config.roles import APPROVE
from bridge.discord import custom_ids, prompt_clicks
from bridge.discord import prompt_actions as actions
from bridge.discord.prompt_clicks import Action
from bridge.discord.render import decisions as views
from bridge.discord.render import outcome, plan_prompt
from bridge.state import decisions, runtime
from bridge.state.decisions import Decision, Request

log = logging.getLogger(__name__)

# A prompt's hook records its message's id once the post returns: a reaction that lands before
# that (seen in e2e, ✅ at once on a prompt just posted) waits for it this long, polling.
REACTION_WAIT, REACTION_POLL = 3.0, 0.05


def register(bot: BridgeClient) -> None:
    """Prompt buttons and selects; the modal submits and clicks no item receives; reactions
    on prompts."""
    bot.add_dynamic_items(PromptButton, PromptSelect)
    bot.listen("interaction", on_interaction)

    async def on_raw_reaction_add(payload: discord.RawReactionActionEvent) -> None:
        if may_react(bot, payload):  # before anything: who reacted, on whose message
            await bot.prompts.on_reaction(bot, payload)

    bot.listen("raw_reaction_add", on_raw_reaction_add)


async def on_interaction(interaction: BotInteraction) -> None:
    await route_modal_submit(interaction) or await answer_orphan_click(interaction)


class PromptAnswerer:
    """Turns one user's clicks, selects and modal text on a prompt message into at most one
    decision (the decision file the waiting hook reads)."""

    def __init__(self, rt: runtime.Runtime) -> None:
        from bridge.bot.prompts.elicitation import FormAnswerer

        self.runtime = rt
        self.forms = FormAnswerer(self)  # an MCP server's request for input

    def view(self, rows: list[dict]) -> discord.ui.View:
        return view_from_rows(rows)

    # --- entry points -----------------------------------------------------------------------

    async def on_button(self, interaction: BotInteraction, rid: str, action: str) -> None:
        await self._on_click(interaction, rid, action, actions.BUTTON)

    async def on_select(
        self, interaction: BotInteraction, rid: str, action: str, values: list[str]
    ) -> None:
        await self._on_click(interaction, rid, action, actions.SELECT, values)

    async def on_modal(self, interaction: BotInteraction, custom_id: str) -> None:
        parts = custom_ids.parse_prompt(custom_id)
        if parts is None:  # not a shape the bot builds: still answered
            await ephemeral(interaction, NOT_VALID)
            return
        rid, action = parts
        request = await self._pending(interaction, rid)
        if request is None:
            return
        submitted = submitted_fields(interaction)
        picked = submitted.get(custom_ids.MODAL_MODE)  # a select's picks: checked as a click's
        values = picked if isinstance(picked, list) else ()
        click = prompt_clicks.parse(request, action, actions.MODAL, values)
        if click is None:
            await ephemeral(interaction, NOT_VALID)
            return
        if request.kind == "elicitation":
            await self.forms.on_modal(interaction, request, click)
            return
        text = typed_text(request, click, submitted)
        if not text:
            await ephemeral(interaction, "Nothing was typed, so nothing was sent.")
            return
        if click.kind == actions.OTHER:
            await self._record_answer(interaction, request, click, click.answer(text))
        else:
            decision = decision_of(click, *who_of(interaction), text)
            await self.decide(interaction, request, decision)

    async def _on_click(
        self,
        interaction: BotInteraction,
        rid: str,
        action: str,
        where: str,
        values: list[str] | None = None,
    ) -> None:
        request = await self._pending(interaction, rid)
        if request is None:
            return
        click = prompt_clicks.parse(request, action, where, values or ())
        if click is None:
            await ephemeral(interaction, NOT_VALID)
        elif request.kind == "elicitation":
            await self.forms.on_click(interaction, request, click)
        elif click.kind in actions.TYPED:  # the text decides: ask for it
            await self._open_modal(interaction, request, click)
        elif click.kind == actions.SCOPE:
            # parse() sets a SCOPE action's scope (one record for every kind: mypy cannot see it)
            scope = next_scope(click.scope)  # type: ignore[arg-type]
            rows = views.permission_components(request, scope)
            await interaction.response.edit_message(view=view_from_rows(rows))
        elif click.kind == actions.ANSWER:
            await self._record_answer(interaction, request, click, click.answer())
        else:
            await self.decide(interaction, request, decision_of(click, *who_of(interaction)))

    async def on_reaction(
        self, client: BridgeClient, payload: discord.RawReactionActionEvent
    ) -> None:
        """A reaction by someone who may act (``client.may_react``) on this bot's message: if
        that message is a prompt still waiting, the emoji is read as a click on it
        (``prompt_actions``: ✅ / ❌ on a permission prompt are Allow / Deny) and decides as
        the click would; anything else changes nothing."""
        request = await self._prompt_of(client, payload)
        if request is None:
            return
        click = prompt_clicks.parse(request, str(payload.emoji), actions.REACTION)
        if click is None:
            log.info("prompt %s: %s decides nothing", request.id, payload.emoji)
            return
        member = payload.member
        name = member.display_name if member else str(payload.user_id)
        decision = decision_of(click, str(payload.user_id), name)
        if not await asyncio.to_thread(decisions.decide, self.runtime, request.id, decision):
            return  # a click, the terminal or the timeout came first
        log.info("prompt %s: %s by %s (reaction)", request.id, decision.outcome, decision.by)
        channel = client.get_partial_messageable(payload.channel_id)
        message = channel.get_partial_message(payload.message_id)
        line = outcome.outcome_line(request, decision, request.timeout)
        try:  # decided either way: the waiting hook has its answer
            shown = await message.fetch()
            await message.edit(content=outcome.closed_content(shown.content, line), view=None)
        except discord.HTTPException:
            log.exception("prompt %s: decided by a reaction, its message not closed", request.id)

    async def _prompt_of(
        self, client: BridgeClient, payload: discord.RawReactionActionEvent
    ) -> Request | None:
        """The waiting request whose prompt is this message, in this server's projects; while
        a prompt of this channel is still being posted (no message id yet), asked again."""
        deadline = asyncio.get_running_loop().time() + REACTION_WAIT
        while True:
            request, posting = self._prompt_here(client, payload)
            if request or not posting or asyncio.get_running_loop().time() > deadline:
                return request
            await asyncio.sleep(REACTION_POLL)

    def _prompt_here(
        self, client: BridgeClient, payload: discord.RawReactionActionEvent
    ) -> tuple[Request | None, bool]:
        """The request whose prompt is this message (if any), and whether a prompt of this
        channel has no message id yet."""
        projects = {project.name for project in client.server.projects}
        channel, posting = str(payload.channel_id), False
        for request in decisions.open_prompts(self.runtime):
            posting = posting or (request.message_id is None and request.channel_id == channel)
            if request.message_id != str(payload.message_id):
                continue
            here = request.channel_id == channel
            return (request if here and request.project in projects else None), False
        return None, posting

    # --- questions --------------------------------------------------------------------------

    async def _record_answer(
        self, interaction: BotInteraction, request: Request, click: Action, answer: str
    ) -> None:
        """Keep question ``click.question``'s answer; the last one decides them all."""
        answers = decisions.read_answers(self.runtime, request.id)
        answers[str(click.question)] = answer
        if len(answers) < views.question_count(request):
            decisions.write_answers(self.runtime, request.id, answers)
            content = question_content(request, answers)
            view = view_from_rows(views.question_components(request, answers))
            await interaction.response.edit_message(content=content, view=view)
            return
        by_text = {views.question_text(request, int(i)): a for i, a in answers.items()}
        decision = Decision(outcome=decisions.ANSWERED, answers=by_text, **decided_by(interaction))
        await self.decide(interaction, request, decision, question_content(request, answers))

    # --- shared steps -----------------------------------------------------------------------

    async def _pending(self, interaction: BotInteraction, rid: str) -> Request | None:
        """The request, if it still waits here; else say why."""
        request = decisions.read_request(self.runtime, rid)
        here = str(interaction.channel_id)
        if request is None or request.channel_id != here:
            await ephemeral(interaction, NO_LONGER_PENDING)
            return None
        if not decisions.is_pending(self.runtime, request):
            await ephemeral(interaction, NO_LONGER_PENDING)
            return None
        return request

    async def decide(
        self, interaction: BotInteraction, request: Request, decision: Decision, body: str = ""
    ) -> None:
        if not await asyncio.to_thread(decisions.decide, self.runtime, request.id, decision):
            await ephemeral(interaction, NO_LONGER_PENDING)  # a double click, or the terminal
            return
        log.info("prompt %s: %s by %s", request.id, decision.outcome, decision.by)
        original = body or (interaction.message.content if interaction.message else "")
        line = outcome.outcome_line(request, decision, request.timeout)
        await interaction.response.edit_message(
            content=outcome.closed_content(original, line), view=None
        )

    async def _open_modal(
        self, interaction: BotInteraction, request: Request, click: Action
    ) -> None:
        if click.kind == actions.APPROVE_NOTES:
            modal = modal_from_spec(plan_prompt.plan_notes_modal(request))
        elif click.kind == actions.STEP_NOTES:
            modal = modal_from_spec(plan_prompt.step_notes_modal(request, click.steps))
        else:
            title, label, placeholder = modal_text(request, click)
            custom = views.custom_id(request.id, click.modal())
            modal = discord.ui.Modal(title=title, custom_id=custom)
            modal.add_item(
                discord.ui.TextInput(
                    label=label,
                    custom_id=TEXT_FIELD,
                    style=discord.TextStyle.paragraph,
                    placeholder=placeholder,
                    max_length=views.NOTE_LIMIT,
                )
            )
        await interaction.response.send_modal(modal)
        modal.stop()  # submits are routed by custom_id (on_interaction), also after a restart


async def route_modal_submit(interaction: BotInteraction) -> bool:
    """Handle a prompt modal's submit (allowed users only); False if the interaction is not
    one of ours."""
    if interaction.type is not discord.InteractionType.modal_submit:
        return False
    custom = str(data_of(interaction).get("custom_id", ""))
    if not custom.startswith(custom_ids.PROMPT_BUTTON):
        return False
    if await allowed(interaction, APPROVE):
        await answered(interaction, interaction.client.prompts.on_modal(interaction, custom))
    return True


async def answer_orphan_click(interaction: BotInteraction) -> bool:
    """A click on a prompt button the message no longer has (a double click, a stale
    client) never reaches a DynamicItem: discord.py only dispatches components it finds
    in the message. Answer it here (allowed users only), so every interaction is
    acknowledged."""
    if interaction.type is not discord.InteractionType.component:
        return False
    custom = str(data_of(interaction).get("custom_id", ""))
    prompt_ids = (custom_ids.PROMPT_BUTTON, custom_ids.PROMPT_SELECT)
    if not custom.startswith(prompt_ids) or _shows(interaction.message, custom):
        return False
    if not await allowed(interaction, APPROVE):
        return True
    values = [str(v) for v in data_of(interaction).get("values", [])]
    await ephemeral(interaction, _orphan_reply(interaction.client.runtime, custom, values))
    return True


def _orphan_reply(rt: runtime.Runtime, custom: str, values: list[str]) -> str:
    """Why a click on a button the message does not show decides nothing: the prompt is
    closed (a double click), the client shows an older version of its buttons (the scope
    control changed them), or the custom_id was never one this prompt offered (crafted)."""
    select = custom.startswith(custom_ids.PROMPT_SELECT)
    parts = custom_ids.parse_prompt(custom, select=select)
    if parts is None:
        return NOT_VALID
    request = decisions.read_request(rt, parts[0])
    if request is None or not decisions.is_pending(rt, request):
        return NO_LONGER_PENDING
    where = actions.SELECT if select else actions.BUTTON
    offered = prompt_clicks.parse(request, parts[1], where, values) is not None
    return OUT_OF_DATE if offered else NOT_VALID


def _shows(message: discord.Message | None, custom: str) -> bool:
    for row in message.components if message else []:
        for child in getattr(row, "children", []):
            if getattr(child, "custom_id", None) == custom:
                return True
    return False
