"""⏹ Interrupt on a running turn's status message, with ✖ Cancel for each queued prompt.

The button is a restart-safe dynamic item; a click hands over to the bot's
:class:`~bridge.bot.turn.progress.ProgressReporter`. It is its own module because it is a
Discord component, apart from the status messages' bookkeeping in ``bot/turn/progress.py``.
"""

from __future__ import annotations

import discord

from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem
from bridge.bot.turn.queue import CANCEL_BUTTONS
from bridge.bot.turn.queue_buttons import cancel_button
from bridge.discord import custom_ids


def register(bot: BridgeClient) -> None:
    """⏹ Interrupt (the status messages themselves are ``bot.progress``'s)."""
    bot.add_dynamic_items(InterruptButton)


class InterruptButton(BridgeItem[discord.ui.Button], template=custom_ids.INTERRUPT_TEMPLATE):
    """⏹ Interrupt: Escape into the session's pane (allowed users only; never into a dialog);
    works after a restart."""

    def __init__(self, key: str) -> None:
        custom = custom_ids.interrupt(key)
        style = discord.ButtonStyle.danger
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label="Interrupt", emoji="⏹", style=style, custom_id=custom
        )
        super().__init__(button)
        self.key = key

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.client.progress.interrupt(interaction, self.key)


def interrupt_view(key: str, queued: list[dict] | None = None) -> discord.ui.View:
    """⏹ Interrupt, and ✖ Cancel for each queued prompt (the first few)."""
    view = discord.ui.View(timeout=None)
    view.add_item(InterruptButton(key))
    for number, entry in enumerate((queued or [])[:CANCEL_BUTTONS], 1):
        view.add_item(cancel_button(key, entry["id"], number))
    return view
