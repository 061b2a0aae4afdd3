"""The buttons of the prompt queue: a queued message's notice, a receipt's, a status list's ✖.

**▶ Send now**, **⏹ Interrupt and send** and **✖ Cancel** on a queued prompt; **⏭ After this
turn** and **⏹ Interrupt and send** on the receipt of a message typed into a running turn. They
are their own module because they are Discord components (restart-safe dynamic items, their
labels and views); a click hands over to the bot's :class:`~bridge.bot.turn.queue.PromptQueue`.
"""

from __future__ import annotations

import discord

from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem
from bridge.discord import custom_ids


def register(bot: BridgeClient) -> None:
    """The buttons of a queued message's notice, of the status message's queue list and of
    the receipt of a message typed mid-turn."""
    bot.add_dynamic_items(QueueButton, SteerButton)


class QueueButton(BridgeItem[discord.ui.Button], template=custom_ids.QUEUE_TEMPLATE):
    """**▶ Send now**, **⏹ Interrupt and send** or **✖ Cancel** on one queued prompt."""

    def __init__(self, action: str, key: str, entry: str, number: int | None = None) -> None:
        label, emoji, style = BUTTONS[action]
        label = label if number is None else str(number)  # ✖ 2 on a status message's list
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label,
            emoji=emoji,
            style=style,
            custom_id=custom_ids.queued(action, key, entry),
        )
        super().__init__(button)
        self.action, self.key, self.entry = action, key, entry

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.client.queue.on_click(interaction, self.action, self.key, self.entry)


class SteerButton(BridgeItem[discord.ui.Button], template=custom_ids.STEER_TEMPLATE):
    """**⏭ After this turn** or **⏹ Interrupt and send** on the receipt of a message typed
    into a running turn."""

    def __init__(self, action: str, key: str, message: str) -> None:
        label, emoji, style = STEER_BUTTONS[action]
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label,
            emoji=emoji,
            style=style,
            custom_id=custom_ids.steered(action, key, message),
        )
        super().__init__(button)
        self.action, self.key, self.message = action, key, message

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.client.queue.on_steer_click(
            interaction, self.action, self.key, self.message
        )


STEER_BUTTONS = {
    "later": ("After this turn", "⏭", discord.ButtonStyle.secondary),
    "stop": ("Interrupt and send", "⏹", discord.ButtonStyle.danger),
}


def receipt_view(key: str, message_id: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for action in STEER_BUTTONS:
        view.add_item(SteerButton(action, key, message_id))
    return view


BUTTONS = {
    "now": ("Send now", "▶", discord.ButtonStyle.secondary),
    "int": ("Interrupt and send", "⏹", discord.ButtonStyle.danger),
    "cancel": ("Cancel", "✖", discord.ButtonStyle.secondary),
}


def notice_view(key: str, entry_id: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for action in BUTTONS:
        view.add_item(QueueButton(action, key, entry_id))
    return view


def cancel_button(key: str, entry_id: str, number: int) -> QueueButton:
    """✖ <number>: cancel the queued prompt listed under that number on a status message."""
    return QueueButton("cancel", key, entry_id, number)
