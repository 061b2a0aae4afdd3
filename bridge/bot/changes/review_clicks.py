"""What every click of a review shares: the check that it comes from the session's own channel
(where the draft's message goes) while that session is still this bot's, the session's
directory, a form's fields, and the ephemeral answer. Its own module so the comment form
(``review``), the draft's message (``review_draft``) and the sending (``review_send``) answer
alike without importing each other.
"""

from __future__ import annotations

import logging

import discord

from bridge.bot.changes.diff import NO_MENTIONS, session_dir
from bridge.bot.client import UNMAPPED, BotInteraction, data_of

log = logging.getLogger(__name__)

ELSEWHERE = "This belongs to another channel's session: nothing was changed."


async def here(interaction: BotInteraction, key: str) -> bool:
    """The click is in the session's own channel (the draft's message goes there), and that
    session is still this bot's; else say why (the interaction is answered)."""
    if str(interaction.channel_id) != key:
        await interaction.response.send_message(ELSEWHERE, ephemeral=True)
        return False
    if interaction.client.sessions.target_for_key(key) is None:
        await interaction.response.send_message(UNMAPPED, ephemeral=True)
        return False
    return True


def directory_of(interaction: BotInteraction, key: str) -> str:
    sessions = interaction.client.sessions
    target = sessions.target_for_key(key)
    return session_dir(sessions, target) if target is not None else ""


def form_field(interaction: BotInteraction, custom_id: str) -> str:
    for row in data_of(interaction).get("components", []):
        children = row.get("components") or ([row["component"]] if "component" in row else [])
        for child in children:
            if child.get("custom_id") == custom_id:
                return str(child.get("value") or "")
    return ""


async def answer(
    interaction: BotInteraction, text: str, view: discord.ui.View | None = None
) -> None:
    """An ephemeral answer, after the interaction was deferred (or not)."""
    extra: dict = {"ephemeral": True, "allowed_mentions": NO_MENTIONS}
    if view is not None:
        extra["view"] = view
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text[:2000], **extra)
        else:
            await interaction.response.send_message(text[:2000], **extra)
    except discord.HTTPException as err:
        log.warning("could not answer a review interaction: %s", err)
