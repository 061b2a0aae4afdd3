"""Line comments on a diff, gathered into a draft review, sent to Claude as one prompt
(issue 20 §1). Few taps, from a phone:

1. **Diff** on a turn, or ``/diff``, answers with the diff and, on its last message, a select
   of the changed files (25 a page, ◀ ▶ beyond: :meth:`Reviews.file_picker`).
2. Picking a file shows its hunks with the new file's line numbers and **💬 Comment…**.
3. **Comment…** opens a form: the lines (``12`` or ``12-18``) and the comment. It joins the
   session's draft review (``bridge/state/review_drafts.py``), shown as one message in the
   channel and edited as it grows: the comments, **Send review (n)**, **Discard**, and a menu
   that removes one. Lines that are not the file's are refused, the comment kept for the
   form's next opening.
4. **Send review** types one prompt into the session, as a message is typed (the key gate
   decides: with a prompt or dialog open nothing is typed, the owner is told and the draft
   kept): per comment the file, the lines, those lines quoted as they are now, and the
   comment; lines edited again since the comment are said to have changed. A review taller
   than the pane's input box can show (measured: ``bench/long_prompt.py``) goes into a file
   in the session's uploads folder, and a short prompt pointing to it is typed.

Everything a click needs is in its ``custom_id`` or the draft's file, so it all works after a
bot restart. This module holds steps 1 to 3 (the comment joining the draft); the draft's
message and its buttons are ``review_draft``'s, the sending ``review_send``'s, and what every
click checks and answers ``review_clicks``'. Each button and select is a ``BridgeItem`` (owner
and ``allowedUserIds``); the form's submit passes ``allowed`` in :func:`on_interaction`. Git
runs in worker threads, as safely as the snapshots' (``bridge/sessions/review_files.py``).
"""

from __future__ import annotations

import asyncio
import logging
import re

import discord

from bridge.bot.changes.diff import send_view
from bridge.bot.changes.review_clicks import answer, directory_of, form_field, here
from bridge.bot.changes.review_draft import DraftButton, DropSelect, show_draft
from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem, allowed, data_of
from bridge.config.roles import WATCH
from bridge.discord import custom_ids
from bridge.discord.render import review as render
from bridge.discord.render.diff_view import DiffView
from bridge.sessions import changes, review_files
from bridge.sessions.review_lines import BadLines
from bridge.state import review_drafts, runtime
from bridge.state.review_drafts import Comment, Draft

log = logging.getLogger(__name__)

ABBREV = 20  # hex digits of a tree id in a custom_id (as the Diff button's)
LINES_FIELD, TEXT_FIELD = "lines", "text"  # the comment form's inputs
FORM = re.compile(custom_ids.REVIEW_FORM_TEMPLATE)
TITLE_WAIT = 1.5  # seconds to find the file's name for the form's title (3 s to answer)


def register(bot: BridgeClient) -> None:
    """The review's selects and buttons, and its comment form's submit."""
    bot.add_dynamic_items(FileSelect, FilePageButton, CommentButton, DraftButton, DropSelect)
    bot.listen("interaction", on_interaction)


class Reviews:
    """``bot.reviews``: what a diff's answer carries for a review (``bot/changes/diff.py`` reaches
    it)."""

    def file_picker(self, key: str, view: DiffView) -> discord.ui.View | None:
        """The select of the diff's files, or None (no files: nothing to comment on)."""
        if view.trees is None or not view.files:
            return None
        old, new = (tree[:ABBREV] for tree in view.trees)
        return picker_view(key, old, new, view.files, 0)


# --- 1. the file select -----------------------------------------------------------------------


def picker_view(key: str, old: str, new: str, files: list, page: int) -> discord.ui.View:
    page = max(0, min(page, render.pages(len(files)) - 1))
    options = [
        discord.SelectOption(label=label, value=value, description=counts)
        for label, value, counts in render.file_options(files, page)
    ]
    view = discord.ui.View(timeout=None)
    view.add_item(FileSelect(key, old, new, str(page), options, len(files)))
    if render.pages(len(files)) > 1:
        last = render.pages(len(files)) - 1
        back, on = str(max(page - 1, 0)), str(min(page + 1, last))
        view.add_item(FilePageButton(key, old, new, back, "◀ Previous", page == 0))
        view.add_item(FilePageButton(key, old, new, on, "Next ▶", page == last))
    return view


class FileSelect(BridgeItem[discord.ui.Select], template=custom_ids.REVIEW_PICK_TEMPLATE):
    """💬 Comment on a line: pick a file (under a diff)."""

    needs = WATCH

    def __init__(
        self,
        key: str,
        old: str,
        new: str,
        page: str,
        options: list[discord.SelectOption] | None = None,
        count: int = 0,
    ) -> None:
        shown = f" (page {int(page) + 1} of {render.pages(count)})" if count > render.PAGE else ""
        select: discord.ui.Select[discord.ui.View] = discord.ui.Select(
            custom_id=custom_ids.review_files("pick", key, old, new, int(page)),
            placeholder=f"💬 Comment on a file…{shown}",
            options=options or [discord.SelectOption(label="-", value="0")],
            row=0,
        )
        super().__init__(select)
        self.key, self.old, self.new = key, old, new

    async def clicked(self, interaction: BotInteraction) -> None:
        values = data_of(interaction).get("values") or []
        index = str(values[0]) if values else ""
        if not index.isdigit():  # not a value the select offers: a crafted client's
            await answer(interaction, "That file is not in this diff: nothing was shown.")
            return
        if not await here(interaction, self.key):
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        directory = directory_of(interaction, self.key)
        limit = max(1, interaction.client.cfg.attach_after)
        try:
            found = await asyncio.to_thread(
                review_files.diff_file, directory, self.old, self.new, int(index)
            )
            numbered, reason = await asyncio.to_thread(review_files.file_hunks, found)
        except changes.GitError as err:
            await answer(interaction, f"⚠️ {err}")
            return
        change = found.change
        counts = "binary" if change.binary else f"+{change.added} −{change.removed}"
        view = render.file_view(change.path, counts, numbered, limit, reason)
        button = None if reason else comment_view(self.key, self.old, self.new, int(index))
        await send_view(interaction, view, button)


class FilePageButton(BridgeItem[discord.ui.Button], template=custom_ids.REVIEW_PAGE_TEMPLATE):
    """◀ Previous / Next ▶ under a diff of more than 25 files: the select shows that page."""

    needs = WATCH

    def __init__(
        self, key: str, old: str, new: str, page: str, label: str = "Page", disabled: bool = False
    ) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label,
            style=discord.ButtonStyle.secondary,
            disabled=disabled,
            row=1,
            custom_id=custom_ids.review_files("page", key, old, new, int(page)),
        )
        super().__init__(button)
        self.key, self.old, self.new, self.page = key, old, new, int(page)

    async def clicked(self, interaction: BotInteraction) -> None:
        if not await here(interaction, self.key):
            return
        await interaction.response.defer()  # git first; the message keeps its text
        directory = directory_of(interaction, self.key)
        try:
            files = await asyncio.to_thread(
                review_files.changed_files, directory, self.old, self.new
            )
        except changes.GitError as err:
            await answer(interaction, f"⚠️ {err}")
            return
        view = picker_view(self.key, self.old, self.new, files, self.page)
        await interaction.edit_original_response(view=view)


# --- 2. a file's lines, 3. the comment form ---------------------------------------------------


def comment_view(key: str, old: str, new: str, index: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(CommentButton(key, old, new, str(index)))
    return view


class CommentButton(BridgeItem[discord.ui.Button], template=custom_ids.REVIEW_NOTE_TEMPLATE):
    """💬 Comment… under a file's lines: the form that takes the lines and the comment."""

    def __init__(self, key: str, old: str, new: str, index: str) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label="Comment…",
            emoji="💬",
            style=discord.ButtonStyle.primary,
            custom_id=custom_ids.review_files("note", key, old, new, int(index)),
        )
        super().__init__(button)
        self.key, self.old, self.new, self.index = key, old, new, int(index)

    async def clicked(self, interaction: BotInteraction) -> None:
        if not await here(interaction, self.key):
            return
        directory = directory_of(interaction, self.key)
        path = ""
        try:  # the file's name for the title; the form opens without it rather than late
            found = await asyncio.wait_for(
                asyncio.to_thread(
                    review_files.diff_file, directory, self.old, self.new, self.index
                ),
                TITLE_WAIT,
            )
            path = found.change.path
        except (changes.GitError, TimeoutError):
            pass
        rt = interaction.client.runtime
        draft = await asyncio.to_thread(review_drafts.load, rt, self.key)
        unsent = draft.unsent if draft and draft.unsent and draft.unsent["path"] == path else None
        form = comment_form(self.key, self.old, self.new, self.index, path, unsent)
        await interaction.response.send_modal(form)
        form.stop()  # its submit is routed by custom_id (on_interaction), also after a restart


def comment_form(
    key: str, old: str, new: str, index: int, path: str, unsent: dict | None
) -> discord.ui.Modal:
    title = render.modal_title(path) if path else "Comment on this file"
    form = discord.ui.Modal(
        title=title, custom_id=custom_ids.review_files("form", key, old, new, index)
    )
    form.add_item(
        discord.ui.TextInput(
            label="Lines (one, or a range)",
            custom_id=LINES_FIELD,
            placeholder="e.g. 12 or 12-18",
            max_length=25,
            default=(unsent or {}).get("lines"),
        )
    )
    form.add_item(
        discord.ui.TextInput(
            label="Comment",
            custom_id=TEXT_FIELD,
            style=discord.TextStyle.paragraph,
            placeholder="What should Claude change here?",
            max_length=4000,
            default=(unsent or {}).get("text"),
        )
    )
    return form


async def on_interaction(interaction: BotInteraction) -> None:
    """A comment form's submit (owner and ``allowedUserIds`` only)."""
    if interaction.type is not discord.InteractionType.modal_submit:
        return
    custom = str(data_of(interaction).get("custom_id", ""))
    if not custom.startswith(custom_ids.REVIEW):
        return
    if not await allowed(interaction):
        return
    found = FORM.fullmatch(custom)
    if found is None:
        await interaction.response.send_message(
            "That is not a comment form of this bridge: nothing was added.", ephemeral=True
        )
        return
    try:
        await add_comment(
            interaction, found["key"], found["old"], found["new"], int(found["index"])
        )
    except Exception:
        log.exception("a review comment failed")
        if not interaction.response.is_done():
            await interaction.response.send_message(
                "Something went wrong: the comment was not added (see the bot's log).",
                ephemeral=True,
            )


async def add_comment(
    interaction: BotInteraction, key: str, old: str, new: str, index: int
) -> None:
    """The form's lines and comment → the session's draft review (its message edited)."""
    if not await here(interaction, key):
        return
    typed, text = form_field(interaction, LINES_FIELD), form_field(interaction, TEXT_FIELD).strip()
    if not text:
        await interaction.response.send_message(
            "No comment was typed: nothing was added.", ephemeral=True
        )
        return
    await interaction.response.defer(ephemeral=True, thinking=True)
    client, rt = interaction.client, interaction.client.runtime
    directory = directory_of(interaction, key)
    try:
        found = await asyncio.to_thread(review_files.diff_file, directory, old, new, index)
    except changes.GitError as err:
        await answer(
            interaction, f"⚠️ {err}\nNot added. Your comment was:\n> {render.preview(text, 1500)}"
        )
        return
    try:
        where = await asyncio.to_thread(review_files.locate, found, typed)
    except BadLines as err:
        async with client.sessions.lock(key):
            await _keep_unsent(rt, key, found.change.path, typed, text)
        retry = comment_view(key, old, new, index)
        await answer(
            interaction,
            f"⚠️ {err}\nYour comment is kept: **Comment…** opens the "
            f"form again with it.\n> {render.preview(text, 300)}",
            retry,
        )
        return
    except changes.GitError as err:
        await answer(
            interaction, f"⚠️ {err}\nNot added. Your comment was:\n> {render.preview(text, 1500)}"
        )
        return
    async with client.sessions.lock(key):
        draft = await asyncio.to_thread(review_drafts.load, rt, key) or Draft(key)
        if len(draft.comments) >= review_drafts.MAX_COMMENTS:
            await answer(
                interaction,
                f"⚠️ A draft review holds at most "
                f"{review_drafts.MAX_COMMENTS} comments: send it first. Not added; "
                f"your comment was:\n> {render.preview(text, 1500)}",
            )
            return
        cid = review_drafts.new_comment_id(draft.comments)
        comment = Comment(
            cid,
            where.path,
            where.start,
            where.end,
            text,
            where.tree,
            where.quoted,
            str(interaction.user.id),
        )
        draft.comments.append(comment)
        draft.unsent = None
        await asyncio.to_thread(review_drafts.save, rt, draft)
        message = await show_draft(client, draft)
    log.info(
        "review comment on %s %d-%d added to the draft of %s (%d)",
        where.path,
        where.start,
        where.end,
        key,
        len(draft.comments),
    )
    count = f"{len(draft.comments)} comment{'s' if len(draft.comments) != 1 else ''}"
    named = "draft review"
    if message is not None:  # a link to it (the message may be far up the channel by now)
        guild = interaction.guild_id or "@me"
        named = f"[{named}](https://discord.com/channels/{guild}/{key}/{message.id})"
    await answer(
        interaction, f"💬 Added to the {named} ({count}): **Send review** there when ready."
    )


async def _keep_unsent(rt: runtime.Runtime, key: str, path: str, lines: str, text: str) -> None:
    def keep() -> None:
        draft = review_drafts.load(rt, key) or Draft(key)
        draft.unsent = {"path": path, "lines": lines[:25], "text": text[:4000]}
        review_drafts.save(rt, draft)

    await asyncio.to_thread(keep)
