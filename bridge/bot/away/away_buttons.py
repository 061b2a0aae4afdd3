"""The buttons of the away messages: a usage limit's resume / cancel, a budget's continue / stop.

**Resume at reset**, **Resume now** and **Cancel** on a usage-limit message; **Continue (+$N)**
and **Stop** on a reached budget (the owner's only). They are restart-safe dynamic items, their
own module because they are Discord components; a click hands over to the bot's
:class:`~bridge.bot.away.watch.AwayWatch`.
"""

from __future__ import annotations

from typing import Any

import discord

from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem, owner_only
from bridge.discord import custom_ids

OWNER_BUDGET = "Only this bridge's owner can raise or keep a spend budget."


def register(bot: BridgeClient) -> None:
    """The buttons of the limit and budget messages (the watcher is ``bot.away``)."""
    bot.add_dynamic_items(LimitButton, BudgetButton)


class LimitButton(BridgeItem[discord.ui.Button], template=custom_ids.LIMIT_TEMPLATE):
    """**Resume at reset** / **Resume now** / **Cancel** on a usage-limit message."""

    def __init__(self, action: str, key: str) -> None:
        label, style = LIMIT_BUTTONS[action]
        super().__init__(
            discord.ui.Button(label=label, style=style, custom_id=custom_ids.limit(action, key))
        )
        self.action, self.key = action, key

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.client.away.on_limit_click(interaction, self.key, self.action)


class BudgetButton(BridgeItem[discord.ui.Button], template=custom_ids.BUDGET_TEMPLATE):
    """**Continue (+$N)** / **Stop** on a reached budget: the owner's money, the owner's call."""

    def __init__(self, action: str, key: str, label: str = "") -> None:
        style = discord.ButtonStyle.success if action == "more" else discord.ButtonStyle.danger
        label = label or ("Continue" if action == "more" else "Stop")
        super().__init__(
            discord.ui.Button(label=label, style=style, custom_id=custom_ids.budget(action, key))
        )
        self.action, self.key = action, key

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        """The owner only (``allowedUserIds`` drive sessions, but do not spend the owner's
        money past the budget)."""
        return await owner_only(interaction, OWNER_BUDGET)

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.client.away.on_budget_click(interaction, self.key, self.action)


LIMIT_BUTTONS = {
    "auto": ("Resume at reset", discord.ButtonStyle.primary),
    "now": ("Resume now", discord.ButtonStyle.success),
    "cancel": ("Cancel", discord.ButtonStyle.secondary),
}


def limit_view(key: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for action in ("auto", "now", "cancel"):
        view.add_item(LimitButton(action, key))
    return view


def budget_view(key: str, more: float) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(BudgetButton("more", key, f"Continue (+${more:.2f})"))
    view.add_item(BudgetButton("stop", key))
    return view
