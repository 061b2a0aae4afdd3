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
(:func:`bridge.discord.prompt_actions.parse`: an ``Action``, or None for anything the prompt
could not have sent) → a modal, the scope redrawn, a question's answer kept, or the decision
written (:func:`decision_of`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

import discord

from bridge.bot.client import (
    BotInteraction,
    BridgeClient,
    BridgeItem,
    allowed,
    data_of,
    may_react,
)
from bridge.claude import plan_steps
from bridge.claude.permissions import next_scope
from bridge.config.roles import APPROVE
from bridge.discord import custom_ids
from bridge.discord import prompt_actions as actions
from bridge.discord.prompt_actions import Action
from bridge.discord.render import decisions as views
from bridge.discord.render import outcome
from bridge.state import decisions, runtime
from bridge.state.decisions import Decision, Request

log = logging.getLogger(__name__)

BUTTON_TEMPLATE = custom_ids.PROMPT_BUTTON_TEMPLATE
SELECT_TEMPLATE = custom_ids.PROMPT_SELECT_TEMPLATE

NO_LONGER_PENDING = "This prompt is no longer pending: it was answered, timed out or closed."
NOT_VALID = "That is not valid for this prompt: nothing was decided."
OUT_OF_DATE = "That button is out of date: use the prompt's current buttons."
FAILED = "Something went wrong with that click: nothing was decided (see the bot's log)."
TEXT_FIELD = custom_ids.MODAL_TEXT
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


class PromptButton(BridgeItem[discord.ui.Button], template=BUTTON_TEMPLATE):
    needs = APPROVE
    wraps_component = True  # drawn from the prompt's JSON (render/decisions.py)

    def __init__(self, button: discord.ui.Button, rid: str, action: str) -> None:
        super().__init__(button)
        self.rid, self.action = rid, action

    async def clicked(self, interaction: BotInteraction) -> None:
        prompts = interaction.client.prompts
        await _answered(interaction, prompts.on_button(interaction, self.rid, self.action))


class PromptSelect(BridgeItem[discord.ui.Select], template=SELECT_TEMPLATE):
    needs = APPROVE
    wraps_component = True

    def __init__(self, select: discord.ui.Select, rid: str, action: str) -> None:
        super().__init__(select)
        self.rid, self.action = rid, action

    async def clicked(self, interaction: BotInteraction) -> None:
        values = [str(v) for v in data_of(interaction).get("values", [])]
        prompts = interaction.client.prompts
        await _answered(interaction, prompts.on_select(interaction, self.rid, self.action, values))


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
            await _ephemeral(interaction, NOT_VALID)
            return
        rid, action = parts
        request = await self._pending(interaction, rid)
        if request is None:
            return
        submitted = _submitted(interaction)
        picked = submitted.get(custom_ids.MODAL_MODE)  # a select's picks: checked as a click's
        values = picked if isinstance(picked, list) else ()
        click = actions.parse(request, action, actions.MODAL, values)
        if click is None:
            await _ephemeral(interaction, NOT_VALID)
            return
        if request.kind == "elicitation":
            await self.forms.on_modal(interaction, request, click)
            return
        text = _typed(request, click, submitted)
        if not text:
            await _ephemeral(interaction, "Nothing was typed, so nothing was sent.")
            return
        if click.kind == actions.OTHER:
            await self._record_answer(interaction, request, click, click.answer(text))
        else:
            decision = decision_of(click, *_who_of(interaction), text)
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
        click = actions.parse(request, action, where, values or ())
        if click is None:
            await _ephemeral(interaction, NOT_VALID)
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
            await self.decide(interaction, request, decision_of(click, *_who_of(interaction)))

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
        click = actions.parse(request, str(payload.emoji), actions.REACTION)
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
            content = _question_content(request, answers)
            view = view_from_rows(views.question_components(request, answers))
            await interaction.response.edit_message(content=content, view=view)
            return
        by_text = {views.question_text(request, int(i)): a for i, a in answers.items()}
        decision = Decision(outcome=decisions.ANSWERED, answers=by_text, **_who(interaction))
        await self.decide(interaction, request, decision, _question_content(request, answers))

    # --- shared steps -----------------------------------------------------------------------

    async def _pending(self, interaction: BotInteraction, rid: str) -> Request | None:
        """The request, if it still waits here; else say why."""
        request = decisions.read_request(self.runtime, rid)
        here = str(interaction.channel_id)
        if request is None or request.channel_id != here:
            await _ephemeral(interaction, NO_LONGER_PENDING)
            return None
        if not decisions.is_pending(self.runtime, request):
            await _ephemeral(interaction, NO_LONGER_PENDING)
            return None
        return request

    async def decide(
        self, interaction: BotInteraction, request: Request, decision: Decision, body: str = ""
    ) -> None:
        if not await asyncio.to_thread(decisions.decide, self.runtime, request.id, decision):
            await _ephemeral(interaction, NO_LONGER_PENDING)  # a double click, or the terminal
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
            modal = modal_from_spec(views.plan_notes_modal(request))
        elif click.kind == actions.STEP_NOTES:
            modal = modal_from_spec(views.step_notes_modal(request, click.steps))
        else:
            title, label, placeholder = _modal_text(request, click)
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


def modal_from_spec(spec: dict) -> discord.ui.Modal:
    """A discord.py modal from the JSON ``render/decisions.py`` describes it with (labelled
    text inputs and selects)."""
    modal = discord.ui.Modal(title=spec["title"], custom_id=spec["custom_id"])
    for label in spec["components"]:
        inner = label["component"]
        item: discord.ui.Item[discord.ui.Modal]
        if inner["type"] == views.SELECT:
            item = discord.ui.Select(
                custom_id=inner["custom_id"],
                min_values=inner["min_values"],
                max_values=inner["max_values"],
                options=[
                    discord.SelectOption(label=o["label"], value=o["value"], default=o["default"])
                    for o in inner["options"]
                ],
            )
        else:
            item = discord.ui.TextInput(
                custom_id=inner["custom_id"],
                style=discord.TextStyle.paragraph,
                placeholder=inner["placeholder"],
                max_length=inner["max_length"],
                required=inner.get("required", True),
            )
        described = label.get("description") or None
        modal.add_item(discord.ui.Label(text=label["label"], description=described, component=item))
    return modal


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


def _who(interaction: BotInteraction) -> dict[str, str]:
    return {"by": str(interaction.user.id), "by_name": interaction.user.display_name}


def _who_of(interaction: BotInteraction) -> tuple[str, str]:
    return str(interaction.user.id), interaction.user.display_name


def _modal_text(request: Request, click: Action) -> tuple[str, str, str]:
    if click.kind == actions.TELL:
        return (
            "Tell Claude what to do instead",
            "Instead, Claude should…",
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


def _question_content(request: Request, answers: dict) -> str:
    base = views.question_prompt(request)["content"]
    summary = views.answers_summary(request, answers)
    return outcome.closed_content(base, summary) if summary else base  # within 2,000


def _submitted(interaction: BotInteraction) -> dict[str, str | list[str]]:
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


def _typed(request: Request, click: Action, submitted: dict[str, str | list[str]]) -> str:
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


async def _ephemeral(interaction: BotInteraction, text: str) -> None:
    await interaction.response.send_message(text, ephemeral=True)


async def _answered(interaction: BotInteraction, handling: Coroutine[Any, Any, None]) -> None:
    """Run a prompt interaction's handler; whatever it raises, the user still gets an answer
    (an unanswered interaction shows "This interaction failed" and teaches nothing)."""
    try:
        await handling
    except Exception:
        log.exception("prompt interaction %s failed", data_of(interaction).get("custom_id"))
        if not interaction.response.is_done():
            await _ephemeral(interaction, FAILED)


def view_from_rows(rows: list[dict]) -> discord.ui.View:
    """discord.py components from the Discord JSON that ``bridge/discord/render/decisions.py``
    builds, wrapped as dynamic items so the view needs no registration and survives restarts."""
    view = discord.ui.View(timeout=None)
    for row_index, row in enumerate(rows):
        for component in row["components"]:
            view.add_item(_dynamic_item(component, row_index))
    return view


def _dynamic_item(component: dict, row: int) -> discord.ui.Item:
    if component.get("url"):  # a link button: it opens the link, it sends the bot nothing
        return discord.ui.Button(
            style=discord.ButtonStyle.link, label=component["label"], url=component["url"], row=row
        )
    custom = component["custom_id"]
    select = component["type"] == views.SELECT
    parts = custom_ids.parse_prompt(custom, select=select)
    if parts is None:  # rendered by us: always a prompt's
        raise ValueError(f"not a prompt's component: {custom!r}")
    if select:
        menu: discord.ui.Select[discord.ui.View] = discord.ui.Select(
            custom_id=custom,
            placeholder=component.get("placeholder"),
            min_values=component.get("min_values", 1),
            max_values=component.get("max_values", 1),
            options=[
                discord.SelectOption(
                    label=o["label"],
                    value=o["value"],
                    description=o.get("description"),
                    default=bool(o.get("default")),
                )
                for o in component["options"]
            ],
            row=row,
        )
        return PromptSelect(menu, *parts)
    button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
        style=discord.ButtonStyle(component["style"]),
        label=component["label"],
        custom_id=custom,
        row=row,
    )
    return PromptButton(button, *parts)


async def route_modal_submit(interaction: BotInteraction) -> bool:
    """Handle a prompt modal's submit (allowed users only); False if the interaction is not
    one of ours."""
    if interaction.type is not discord.InteractionType.modal_submit:
        return False
    custom = str(data_of(interaction).get("custom_id", ""))
    if not custom.startswith(custom_ids.PROMPT_BUTTON):
        return False
    if await allowed(interaction, APPROVE):
        await _answered(interaction, interaction.client.prompts.on_modal(interaction, custom))
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
    await _ephemeral(interaction, _orphan_reply(interaction.client.runtime, custom, values))
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
    offered = actions.parse(request, parts[1], where, values) is not None
    return OUT_OF_DATE if offered else NOT_VALID


def _shows(message: discord.Message | None, custom: str) -> bool:
    for row in message.components if message else []:
        for child in getattr(row, "children", []):
            if getattr(child, "custom_id", None) == custom:
                return True
    return False
