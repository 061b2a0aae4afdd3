"""``/queue <text>``: a prompt that waits for Claude's running turn to end (``bot/turn/queue.py``).

The text is cleaned and defused as a message's is (``bot/turn/relay.py``); the answer is the queued
notice itself, in the channel, with its buttons. Nothing running: it is typed at once.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bridge.bot.client import BotInteraction, BridgeClient, target_here
from bridge.bot.prompt_text import defuse_prefix
from bridge.bot.turn.queue_buttons import notice_view
from bridge.sessions.typed_text import sanitize_prompt


@app_commands.command(name="queue", description="Send a prompt once Claude's current turn ends")
@app_commands.describe(text="the prompt; it waits for the running turn, then is typed")
async def queue(interaction: BotInteraction, text: str) -> None:
    target = await target_here(interaction)
    if target is None:
        return
    prompt = defuse_prefix(sanitize_prompt(text))
    if not prompt.strip():
        await interaction.response.send_message("Nothing to queue.", ephemeral=True)
        return
    bot = interaction.client
    await bot.sessions.register_thread(target)
    entry = await bot.queue.add(target.key, prompt, "command", None, str(interaction.user.id))
    view = notice_view(target.key, entry["id"])
    await interaction.response.send_message(bot.queue.notice_text(target.key), view=view)
    try:
        notice: discord.Message | None = await interaction.original_response()
    except discord.HTTPException:
        notice = None
    await bot.queue.noticed(target.key, entry, notice)


def register(bot: BridgeClient) -> None:
    bot.tree.add_command(queue)
