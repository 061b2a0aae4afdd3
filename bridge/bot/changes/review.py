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
bot restart. Each button and select is a ``BridgeItem`` (owner and ``allowedUserIds``); the
form's submit passes ``allowed`` in :func:`on_interaction`. Git runs in worker threads, as
safely as the snapshots' (``bridge/sessions/review_files.py``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from typing import TYPE_CHECKING

import discord

from bridge.bot.changes.diff import NO_MENTIONS, bridge_paths, send_view, session_dir
from bridge.bot.client import UNMAPPED, BotInteraction, BridgeClient, BridgeItem, allowed, data_of
from bridge.bot.prompt_text import defuse_prefix
from bridge.config.roles import WATCH
from bridge.discord import custom_ids
from bridge.discord.render import review as render
from bridge.discord.render.diff_view import DiffView
from bridge.discord.render.tables import display_width
from bridge.sessions import changes, review_files
from bridge.sessions.pane_input import NoInputBox
from bridge.sessions.review_lines import BadLines
from bridge.sessions.typed_text import sanitize_prompt
from bridge.state import private_files, review_drafts, runtime
from bridge.state.review_drafts import Comment, Draft

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

ABBREV = 20  # hex digits of a tree id in a custom_id (as the Diff button's)
LINES_FIELD, TEXT_FIELD = "lines", "text"  # the comment form's inputs
FORM = re.compile(custom_ids.REVIEW_FORM_TEMPLATE)
TITLE_WAIT = 1.5  # seconds to find the file's name for the form's title (3 s to answer)
# Rows the input box needs besides the text: its two rules and the footer's two lines, plus
# one (measured on a 200×50 pane with 2.1.332: 45 rows of text were typed and sent, 46 pushed
# the box's top rule off the screen, where the bridge can no longer read the box), and room
# for what Claude Code may show above the footer.
BOX_ROWS = 10
BOX_INDENT = 4  # columns the box takes before its text (``❯ `` and the indent of wrapped lines)
ELSEWHERE = "This belongs to another channel's session: nothing was changed."
NO_DRAFT = "There is no draft review here (it was sent or discarded): nothing was sent."
NOTHING_LEFT = "There is no draft review here (it was sent or discarded): nothing to change."


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
            options=options or [discord.SelectOption(label="-", value="0")], row=0,
        )  # fmt: skip
        super().__init__(select)
        self.key, self.old, self.new = key, old, new

    async def clicked(self, interaction: BotInteraction) -> None:
        values = data_of(interaction).get("values") or []
        index = str(values[0]) if values else ""
        if not index.isdigit():  # not a value the select offers: a crafted client's
            await _private(interaction, "That file is not in this diff: nothing was shown.")
            return
        if not await _here(interaction, self.key):
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        directory = _directory(interaction, self.key)
        limit = max(1, interaction.client.cfg.attach_after)
        try:
            found = await asyncio.to_thread(
                review_files.diff_file, directory, self.old, self.new, int(index)
            )
            numbered, reason = await asyncio.to_thread(review_files.file_hunks, found)
        except changes.GitError as err:
            await _private(interaction, f"⚠️ {err}")
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
            label=label, style=discord.ButtonStyle.secondary, disabled=disabled, row=1,
            custom_id=custom_ids.review_files("page", key, old, new, int(page)),
        )  # fmt: skip
        super().__init__(button)
        self.key, self.old, self.new, self.page = key, old, new, int(page)

    async def clicked(self, interaction: BotInteraction) -> None:
        if not await _here(interaction, self.key):
            return
        await interaction.response.defer()  # git first; the message keeps its text
        directory = _directory(interaction, self.key)
        try:
            files = await asyncio.to_thread(
                review_files.changed_files, directory, self.old, self.new
            )
        except changes.GitError as err:
            await _private(interaction, f"⚠️ {err}")
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
            label="Comment…", emoji="💬", style=discord.ButtonStyle.primary,
            custom_id=custom_ids.review_files("note", key, old, new, int(index)),
        )  # fmt: skip
        super().__init__(button)
        self.key, self.old, self.new, self.index = key, old, new, int(index)

    async def clicked(self, interaction: BotInteraction) -> None:
        if not await _here(interaction, self.key):
            return
        directory = _directory(interaction, self.key)
        path = ""
        try:  # the file's name for the title; the form opens without it rather than late
            found = await asyncio.wait_for(
                asyncio.to_thread(review_files.diff_file, directory, self.old, self.new,
                                  self.index), TITLE_WAIT,
            )  # fmt: skip
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
    form.add_item(discord.ui.TextInput(
        label="Lines (one, or a range)", custom_id=LINES_FIELD, placeholder="e.g. 12 or 12-18",
        max_length=25, default=(unsent or {}).get("lines"),
    ))  # fmt: skip
    form.add_item(discord.ui.TextInput(
        label="Comment", custom_id=TEXT_FIELD, style=discord.TextStyle.paragraph,
        placeholder="What should Claude change here?", max_length=4000,
        default=(unsent or {}).get("text"),
    ))  # fmt: skip
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
        await add_comment(interaction, found["key"], found["old"], found["new"],
                          int(found["index"]))  # fmt: skip
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
    if not await _here(interaction, key):
        return
    typed, text = _field(interaction, LINES_FIELD), _field(interaction, TEXT_FIELD).strip()
    if not text:
        await interaction.response.send_message("No comment was typed: nothing was added.",
                                                ephemeral=True)  # fmt: skip
        return
    await interaction.response.defer(ephemeral=True, thinking=True)
    client, rt = interaction.client, interaction.client.runtime
    directory = _directory(interaction, key)
    try:
        found = await asyncio.to_thread(review_files.diff_file, directory, old, new, index)
    except changes.GitError as err:
        await _private(interaction, f"⚠️ {err}\nNot added. Your comment was:\n"
                                    f"> {render.preview(text, 1500)}")  # fmt: skip
        return
    try:
        where = await asyncio.to_thread(review_files.locate, found, typed)
    except BadLines as err:
        async with client.sessions.lock(key):
            await _keep_unsent(rt, key, found.change.path, typed, text)
        retry = comment_view(key, old, new, index)
        await _private(interaction, f"⚠️ {err}\nYour comment is kept: **Comment…** opens the "
                       f"form again with it.\n> {render.preview(text, 300)}", retry)  # fmt: skip
        return
    except changes.GitError as err:
        await _private(interaction, f"⚠️ {err}\nNot added. Your comment was:\n"
                                    f"> {render.preview(text, 1500)}")  # fmt: skip
        return
    async with client.sessions.lock(key):
        draft = await asyncio.to_thread(review_drafts.load, rt, key) or Draft(key)
        if len(draft.comments) >= review_drafts.MAX_COMMENTS:
            await _private(interaction, f"⚠️ A draft review holds at most "
                           f"{review_drafts.MAX_COMMENTS} comments: send it first. Not added; "
                           f"your comment was:\n> {render.preview(text, 1500)}")  # fmt: skip
            return
        cid = review_drafts.new_comment_id(draft.comments)
        comment = Comment(cid, where.path, where.start, where.end, text, where.tree,
                          where.quoted, str(interaction.user.id))  # fmt: skip
        draft.comments.append(comment)
        draft.unsent = None
        await asyncio.to_thread(review_drafts.save, rt, draft)
        message = await show_draft(client, draft)
    log.info("review comment on %s %d-%d added to the draft of %s (%d)", where.path,
             where.start, where.end, key, len(draft.comments))  # fmt: skip
    count = f"{len(draft.comments)} comment{'s' if len(draft.comments) != 1 else ''}"
    named = "draft review"
    if message is not None:  # a link to it (the message may be far up the channel by now)
        guild = interaction.guild_id or "@me"
        named = f"[{named}](https://discord.com/channels/{guild}/{key}/{message.id})"
    await _private(interaction, f"💬 Added to the {named} ({count}): **Send review** there "
                                "when ready.")  # fmt: skip


async def _keep_unsent(rt: runtime.Runtime, key: str, path: str, lines: str, text: str) -> None:
    def keep() -> None:
        draft = review_drafts.load(rt, key) or Draft(key)
        draft.unsent = {"path": path, "lines": lines[:25], "text": text[:4000]}
        review_drafts.save(rt, draft)

    await asyncio.to_thread(keep)


# --- the draft message ------------------------------------------------------------------------


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


async def _close_draft(client: BridgeClient, key: str, message_id: str | None, text: str) -> None:
    """The draft's message says what became of it, and loses its buttons."""
    if message_id is None:
        return
    message = client.get_partial_messageable(int(key)).get_partial_message(int(message_id))
    try:
        await message.edit(content=text, view=None, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException as err:
        log.warning("could not close the draft review of %s: %s", key, err)


class DraftButton(BridgeItem[discord.ui.Button], template=custom_ids.REVIEW_DRAFT_TEMPLATE):
    """**Send review (n)** / **Discard** on the draft review's message."""

    def __init__(self, action: str, key: str, label: str = "") -> None:
        style = discord.ButtonStyle.success if action == "send" else discord.ButtonStyle.danger
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label or action, style=style, row=0,
            custom_id=custom_ids.review_draft(action, key),
        )  # fmt: skip
        super().__init__(button)
        self.action, self.key = action, key

    async def clicked(self, interaction: BotInteraction) -> None:
        if not await _here(interaction, self.key):
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
            custom_id=custom_ids.review_draft("drop", key), placeholder="Remove a comment…",
            options=options or [discord.SelectOption(label="-", value="-")], row=1,
        )  # fmt: skip
        super().__init__(select)
        self.key = key

    async def clicked(self, interaction: BotInteraction) -> None:
        if not await _here(interaction, self.key):
            return
        dropped = {str(v) for v in data_of(interaction).get("values") or []}
        await interaction.response.defer()
        client = interaction.client
        async with client.sessions.lock(self.key):
            draft = await asyncio.to_thread(review_drafts.load, client.runtime, self.key)
            if draft is None or not draft.comments:
                await _private(interaction, NOTHING_LEFT)
                return
            draft.comments = [c for c in draft.comments if c.id not in dropped]
            if draft.comments:
                await asyncio.to_thread(review_drafts.save, client.runtime, draft)
                await show_draft(client, draft)
                return
            await asyncio.to_thread(review_drafts.delete, client.runtime, self.key)
        await _close_draft(client, self.key, draft.message_id,
                           "🗑️ Every comment was removed: no draft review left.")  # fmt: skip


async def discard(interaction: BotInteraction, key: str) -> None:
    client = interaction.client
    async with client.sessions.lock(key):
        draft = await asyncio.to_thread(review_drafts.load, client.runtime, key)
        await asyncio.to_thread(review_drafts.delete, client.runtime, key)
    if draft is None or not draft.comments:
        await _private(interaction, NOTHING_LEFT)
        return
    log.info("draft review of %s discarded (%d comments)", key, len(draft.comments))
    text = render.discarded_content(len(draft.comments), interaction.user.display_name)
    await _close_draft(client, key, draft.message_id, text)


# --- 4. sending -------------------------------------------------------------------------------


async def send_review(interaction: BotInteraction, key: str) -> None:
    """Type the draft into the session as one prompt; the draft is kept unless it was typed."""
    client = interaction.client
    sessions, rt = client.sessions, client.runtime
    target = sessions.target_for_key(key)
    if target is None:
        await _private(interaction, UNMAPPED)
        return
    async with sessions.lock(key):
        draft = await asyncio.to_thread(review_drafts.load, rt, key)
        if draft is None or not draft.comments:
            await _private(interaction, NO_DRAFT)
            return
        private = bridge_paths(rt, client.cfg.path)
        try:
            items = await asyncio.to_thread(review_files.follow_comments,
                                            session_dir(sessions, target), draft.comments,
                                            rt.path("turns"), private)  # fmt: skip
        except changes.GitError as err:
            said = f"⚠️ The files could not be read as they are now ({err}): nothing was sent"
            await _private(interaction, said + ", the draft review is kept.")
            return
        review = defuse_prefix(sanitize_prompt(render.review_prompt(items)))
        try:
            pane_id = await sessions.ensure_running(target)
            prompt, written = await asyncio.to_thread(_fit, sessions, rt, key, pane_id, review,
                                                      draft)  # fmt: skip
            timings = await sessions.type_prompt(key, pane_id, prompt)
        except NoInputBox as err:
            kept = "Your draft review is kept: press **Send review** again once that is answered."
            await _private(interaction, f"⚠️ The review was not sent. {err}\n{kept}")
            return
        except Exception as err:
            log.exception("sending the review of %s failed", key)
            await _private(interaction, f"⚠️ Not sent to Claude Code ({_short(err)}): your "
                                        "draft review is kept.")  # fmt: skip
            return
        await asyncio.to_thread(review_drafts.delete, rt, key)
    where = f", in {written}" if written else ""
    log.info("typed the review of %s into %s (%d comments, %d chars%s) (%s)", key,
             target.label, len(draft.comments), len(prompt), where, timings)  # fmt: skip
    await asyncio.to_thread(sessions.touch, key)
    by = interaction.user.display_name
    name = os.path.basename(written) if written else None
    text = render.sent_content(draft.comments, len(draft.files()), by, name)
    await _close_draft(client, key, draft.message_id, text)


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


# --- helpers ----------------------------------------------------------------------------------


async def _here(interaction: BotInteraction, key: str) -> bool:
    """The click is in the session's own channel (the draft's message goes there), and that
    session is still this bot's; else say why (the interaction is answered)."""
    if str(interaction.channel_id) != key:
        await interaction.response.send_message(ELSEWHERE, ephemeral=True)
        return False
    if interaction.client.sessions.target_for_key(key) is None:
        await interaction.response.send_message(UNMAPPED, ephemeral=True)
        return False
    return True


def _directory(interaction: BotInteraction, key: str) -> str:
    sessions = interaction.client.sessions
    target = sessions.target_for_key(key)
    return session_dir(sessions, target) if target is not None else ""


def _field(interaction: BotInteraction, custom_id: str) -> str:
    for row in data_of(interaction).get("components", []):
        children = row.get("components") or ([row["component"]] if "component" in row else [])
        for child in children:
            if child.get("custom_id") == custom_id:
                return str(child.get("value") or "")
    return ""


async def _private(
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


def _short(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]
