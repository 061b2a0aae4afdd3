"""The draft review's message in the session's channel: its comments, edited as they grow,
**Send review (n)**, **Discard**, and the menu that removes a comment. Its own module: what the
draft shows and its buttons, apart from how a comment joins it (``review``) and how it is sent
(``review_send``).
"""

from __future__ import annotations

import asyncio
import logging

import discord

from bridge.bot.changes.diff import NO_MENTIONS
from bridge.bot.changes.review_clicks import answer, here
from bridge.bot.changes.review_send import close_draft, send_review
from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem, data_of
from bridge.discord import custom_ids
from bridge.discord.render import review as render
from bridge.state import review_drafts
from bridge.state.review_drafts import Draft

log = logging.getLogger(__name__)

NOTHING_LEFT = "There is no draft review here (it was sent or discarded): nothing to change."


def draft_view(draft: Draft) -> discord.ui.View:
    """**Send review (n)**, **Discard**, and a menu that removes a comment (the last 25)."""
    view = discord.ui.View(timeout=None)
    count = len(draft.comments)
    view.add_item(DraftButton("send", draft.key, f"Send review ({count})"))
    view.add_item(DraftButton("discard", draft.key, "Discard"))
    shown = list(enumerate(draft.comments, 1))[-render.PAGE :]
    options = [
        discord.SelectOption(
            label=render.tail(f"{number}. {render.comment_label(comment)}", render.LABEL_LIMIT),
            value=comment.id,
            description=render.tail(" ".join(comment.text.split()), render.LABEL_LIMIT),
        )
        for number, comment in shown
    ]
    view.add_item(DropSelect(draft.key, options))
    return view


async def show_draft(client: BridgeClient, draft: Draft) -> discord.Message | None:
    """Edit the draft's message (posted in the session's channel, once): the comments and
    the buttons. Posted again when it was deleted."""
    channel = client.get_partial_messageable(int(draft.key))
    content = render.draft_content(draft.comments, len(draft.files()))
    view = draft_view(draft)
    if draft.message_id is not None:
        try:
            return await channel.get_partial_message(int(draft.message_id)).edit(
                content=content, view=view, allowed_mentions=NO_MENTIONS
            )
        except discord.NotFound:
            pass  # deleted: post it again
        except discord.HTTPException as err:
            log.warning("could not edit the draft review of %s: %s", draft.key, err)
            return None
    try:
        posted = await channel.send(content, view=view, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException as err:
        log.warning("could not post the draft review of %s: %s", draft.key, err)
        return None
    draft.message_id = str(posted.id)
    await asyncio.to_thread(review_drafts.save, client.runtime, draft)
    return posted


class DraftButton(BridgeItem[discord.ui.Button], template=custom_ids.REVIEW_DRAFT_TEMPLATE):
    """**Send review (n)** / **Discard** on the draft review's message."""

    def __init__(self, action: str, key: str, label: str = "") -> None:
        style = discord.ButtonStyle.success if action == "send" else discord.ButtonStyle.danger
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label or action,
            style=style,
            row=0,
            custom_id=custom_ids.review_draft(action, key),
        )
        super().__init__(button)
        self.action, self.key = action, key

    async def clicked(self, interaction: BotInteraction) -> None:
        if not await here(interaction, self.key):
            return
        await interaction.response.defer()  # a review being typed holds the session's lock
        if self.action == "send":
            await send_review(interaction, self.key)
        else:
            await discard(interaction, self.key)


class DropSelect(BridgeItem[discord.ui.Select], template=custom_ids.REVIEW_DROP_TEMPLATE):
    """Remove a comment… on the draft review's message."""

    def __init__(self, key: str, options: list[discord.SelectOption] | None = None) -> None:
        select: discord.ui.Select[discord.ui.View] = discord.ui.Select(
            custom_id=custom_ids.review_draft("drop", key),
            placeholder="Remove a comment…",
            options=options or [discord.SelectOption(label="-", value="-")],
            row=1,
        )
        super().__init__(select)
        self.key = key

    async def clicked(self, interaction: BotInteraction) -> None:
        if not await here(interaction, self.key):
            return
        dropped = {str(v) for v in data_of(interaction).get("values") or []}
        await interaction.response.defer()
        client = interaction.client
        async with client.sessions.lock(self.key):
            draft = await asyncio.to_thread(review_drafts.load, client.runtime, self.key)
            if draft is None or not draft.comments:
                await answer(interaction, NOTHING_LEFT)
                return
            draft.comments = [c for c in draft.comments if c.id not in dropped]
            if draft.comments:
                await asyncio.to_thread(review_drafts.save, client.runtime, draft)
                await show_draft(client, draft)
                return
            await asyncio.to_thread(review_drafts.delete, client.runtime, self.key)
        await close_draft(
            client, self.key, draft.message_id, "🗑️ Every comment was removed: no draft review left."
        )


async def discard(interaction: BotInteraction, key: str) -> None:
    client = interaction.client
    async with client.sessions.lock(key):
        draft = await asyncio.to_thread(review_drafts.load, client.runtime, key)
        await asyncio.to_thread(review_drafts.delete, client.runtime, key)
    if draft is None or not draft.comments:
        await answer(interaction, NOTHING_LEFT)
        return
    log.info("draft review of %s discarded (%d comments)", key, len(draft.comments))
    text = render.discarded_content(len(draft.comments), interaction.user.display_name)
    await close_draft(client, key, draft.message_id, text)
