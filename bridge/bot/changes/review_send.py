"""**Send review**: the draft typed into the session as one prompt (through the key gate, as a
message is typed), or, when it is taller than the pane's input box can show (measured:
``bench/long_prompt.py``), written to a file in the session's uploads folder with a short
prompt pointing to it; and the draft's message closed, saying what became of it. Its own module:
the one part of a review that types into a pane.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import TYPE_CHECKING

import discord

from bridge.bot.changes.diff import NO_MENTIONS, bridge_paths, session_dir
from bridge.bot.changes.review_clicks import answer
from bridge.bot.client import UNMAPPED, BotInteraction, BridgeClient
from bridge.bot.prompt_text import defuse_prefix
from bridge.discord.render import review as render
from bridge.discord.render.tables import display_width
from bridge.sessions import changes, review_files
from bridge.sessions.pane_input import NoInputBox
from bridge.sessions.typed_text import sanitize_prompt
from bridge.state import private_files, review_drafts, runtime
from bridge.state.review_drafts import Draft

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

# Rows the input box needs besides the text: its two rules and the footer's two lines, plus
# one (measured on a 200×50 pane with 2.1.332: 45 rows of text were typed and sent, 46 pushed
# the box's top rule off the screen, where the bridge can no longer read the box), and room
# for what Claude Code may show above the footer.
BOX_ROWS = 10
BOX_INDENT = 4  # columns the box takes before its text (``❯ `` and the indent of wrapped lines)
NO_DRAFT = "There is no draft review here (it was sent or discarded): nothing was sent."


async def close_draft(client: BridgeClient, key: str, message_id: str | None, text: str) -> None:
    """The draft's message says what became of it, and loses its buttons."""
    if message_id is None:
        return
    message = client.get_partial_messageable(int(key)).get_partial_message(int(message_id))
    try:
        await message.edit(content=text, view=None, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException as err:
        log.warning("could not close the draft review of %s: %s", key, err)


async def send_review(interaction: BotInteraction, key: str) -> None:
    """Type the draft into the session as one prompt; the draft is kept unless it was typed."""
    client = interaction.client
    sessions, rt = client.sessions, client.runtime
    target = sessions.target_for_key(key)
    if target is None:
        await answer(interaction, UNMAPPED)
        return
    async with sessions.lock(key):
        draft = await asyncio.to_thread(review_drafts.load, rt, key)
        if draft is None or not draft.comments:
            await answer(interaction, NO_DRAFT)
            return
        private = bridge_paths(rt, client.cfg.path)
        try:
            items = await asyncio.to_thread(
                review_files.follow_comments,
                session_dir(sessions, target),
                draft.comments,
                rt.path("turns"),
                private,
            )
        except changes.GitError as err:
            said = f"⚠️ The files could not be read as they are now ({err}): nothing was sent"
            await answer(interaction, said + ", the draft review is kept.")
            return
        review = defuse_prefix(sanitize_prompt(render.review_prompt(items)))
        try:
            pane_id = await sessions.ensure_running(target)
            prompt, written = await asyncio.to_thread(
                _fit, sessions, rt, key, pane_id, review, draft
            )
            timings = await sessions.type_prompt(key, pane_id, prompt)
        except NoInputBox as err:
            kept = "Your draft review is kept: press **Send review** again once that is answered."
            await answer(interaction, f"⚠️ The review was not sent. {err}\n{kept}")
            return
        except Exception as err:
            log.exception("sending the review of %s failed", key)
            await answer(
                interaction,
                f"⚠️ Not sent to Claude Code ({_short(err)}): your draft review is kept.",
            )
            return
        await asyncio.to_thread(review_drafts.delete, rt, key)
    where = f", in {written}" if written else ""
    log.info(
        "typed the review of %s into %s (%d comments, %d chars%s) (%s)",
        key,
        target.label,
        len(draft.comments),
        len(prompt),
        where,
        timings,
    )
    await asyncio.to_thread(sessions.touch, key)
    by = interaction.user.display_name
    name = os.path.basename(written) if written else None
    text = render.sent_content(draft.comments, len(draft.files()), by, name)
    await close_draft(client, key, draft.message_id, text)


def _fit(
    sessions: SessionManager, rt: runtime.Runtime, key: str, pane_id: str, review: str, draft: Draft
) -> tuple[str, str | None]:
    """The prompt to type: the review itself when the input box can show it whole, else a
    pointer to the review written into the session's uploads folder (which Claude may read).
    Returns the prompt and the file written (None when typed whole)."""
    width, height = sessions.tmux.pane_size(pane_id)
    if typed_rows(review, width) <= height - BOX_ROWS:
        return review, None
    folder = rt.channel_dir("uploads", key)
    path = os.path.join(folder, time.strftime("review-%Y%m%d-%H%M%S.md"))
    private_files.write_atomic(path, (review + "\n").encode())
    return render.pointer_prompt(path, len(draft.comments), len(draft.files())), path


def typed_rows(text: str, width: int) -> int:
    """Rows ``text`` takes in Claude Code's input box on a pane ``width`` columns wide."""
    usable = max(10, width - BOX_INDENT)
    return sum(max(1, -(-display_width(line) // usable)) for line in text.split("\n"))


def _short(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]
