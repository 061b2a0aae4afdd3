"""A prompt's discord.py items, drawn from the JSON ``bridge/discord/render/decisions.py``
builds: its buttons and selects as ``DynamicItem``s (matched by ``custom_id``, so a prompt
posted before a restart still works after it), its views and modals, and the short answers a
click gets (every handler run so that the user is answered whatever it raises). Its own module:
how a prompt is shown, apart from what a click on it does (``interactions``).
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

import discord

from bridge.bot.client import BotInteraction, BridgeItem, data_of
from bridge.config.roles import APPROVE
from bridge.discord import custom_ids
from bridge.discord.render import decisions as views

log = logging.getLogger(__name__)

BUTTON_TEMPLATE = custom_ids.PROMPT_BUTTON_TEMPLATE
SELECT_TEMPLATE = custom_ids.PROMPT_SELECT_TEMPLATE

NO_LONGER_PENDING = "This prompt is no longer pending: it was answered, timed out or closed."
NOT_VALID = "That is not valid for this prompt: nothing was decided."
OUT_OF_DATE = "That button is out of date: use the prompt's current buttons."
FAILED = "Something went wrong with that click: nothing was decided (see the bot's log)."


class PromptButton(BridgeItem[discord.ui.Button], template=BUTTON_TEMPLATE):
    needs = APPROVE
    wraps_component = True  # drawn from the prompt's JSON (render/decisions.py)

    def __init__(self, button: discord.ui.Button, rid: str, action: str) -> None:
        super().__init__(button)
        self.rid, self.action = rid, action

    async def clicked(self, interaction: BotInteraction) -> None:
        prompts = interaction.client.prompts
        await answered(interaction, prompts.on_button(interaction, self.rid, self.action))


class PromptSelect(BridgeItem[discord.ui.Select], template=SELECT_TEMPLATE):
    needs = APPROVE
    wraps_component = True

    def __init__(self, select: discord.ui.Select, rid: str, action: str) -> None:
        super().__init__(select)
        self.rid, self.action = rid, action

    async def clicked(self, interaction: BotInteraction) -> None:
        values = [str(v) for v in data_of(interaction).get("values", [])]
        prompts = interaction.client.prompts
        await answered(interaction, prompts.on_select(interaction, self.rid, self.action, values))


async def ephemeral(interaction: BotInteraction, text: str) -> None:
    await interaction.response.send_message(text, ephemeral=True)


async def answered(interaction: BotInteraction, handling: Coroutine[Any, Any, None]) -> None:
    """Run a prompt interaction's handler; whatever it raises, the user still gets an answer
    (an unanswered interaction shows "This interaction failed" and teaches nothing)."""
    try:
        await handling
    except Exception:
        log.exception("prompt interaction %s failed", data_of(interaction).get("custom_id"))
        if not interaction.response.is_done():
            await ephemeral(interaction, FAILED)


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


def modal_from_spec(spec: dict) -> discord.ui.Modal:
    """A discord.py modal from the JSON ``render/plan_prompt.py`` describes it with (labelled
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
