"""Thread lifecycle → sessions: archiving or deleting a thread ends its session, and its
worktree is removed only when nothing would be lost.

A dirty worktree (uncommitted changes, files git ignores, or commits no other branch holds)
is kept and the thread — or, if the thread was deleted, its parent channel — gets a message
listing what removing it would lose, with **Remove anyway** / **Keep** buttons. The buttons are
``DynamicItem``s (``db:wt:<action>:<thread id>``, ``bridge/discord/custom_ids.py``): they still
work after a bot restart.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import discord

from bridge.bot.client import BotInteraction, allowed
from bridge.discord import custom_ids
from bridge.sessions import worktrees
from bridge.state import session_state

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

WORKTREE_CHECK_SECONDS = 30.0  # how often worktrees removed outside the bridge are noticed
LIST_MAX = 10  # lines of git output shown per kind of loss


class ThreadEvents:
    """Reacts to thread archive/delete events for one bot."""

    def __init__(self, client: discord.Client, sessions: SessionManager) -> None:
        self.client = client
        self.sessions = sessions
        self.runtime = sessions.runtime

    async def on_raw_thread_update(self, payload: discord.RawThreadUpdateEvent) -> None:
        meta = payload.data.get("thread_metadata") or {}
        if meta.get("archived"):
            await self.closed(str(payload.thread_id), str(payload.parent_id), deleted=False)

    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        await self.closed(str(payload.thread_id), str(payload.parent_id), deleted=True)

    async def closed(self, thread_id: str, parent_id: str, deleted: bool) -> None:
        """End the thread's session; remove a clean worktree, ask about a dirty one. All under
        the session's lock: a message right after the archive (it un-archives the thread)
        waits, rather than starting Claude Code in a worktree about to be removed."""
        record = await asyncio.to_thread(session_state.load, self.runtime, thread_id)
        if record is None or record.get("server") != self.sessions.server.name:
            return  # never a session of ours
        async with self.sessions.lock(thread_id):
            if await self.sessions.stop(thread_id):
                log.info("thread %s closed: its session ended", thread_id)
            await self._clean_worktree(thread_id, parent_id, deleted)

    async def _clean_worktree(self, thread_id: str, parent_id: str, deleted: bool) -> None:
        record = await asyncio.to_thread(session_state.load, self.runtime, thread_id) or {}
        worktree = record.get("worktree")
        if not worktree or record.get("worktree_question"):
            return  # nothing to clean, or already asked (the thread was archived again)
        try:
            loss = await asyncio.to_thread(worktrees.inspect, worktree)
            if not loss.exists or loss.clean:
                if loss.exists:
                    await asyncio.to_thread(worktrees.remove, worktree)
                    log.info("removed clean worktree %s", worktree["path"])
                await asyncio.to_thread(
                    session_state.update, self.runtime, thread_id, worktree=None
                )
                return
        except worktrees.WorktreeError as err:
            log.warning("worktree %s of thread %s: %s", worktree["path"], thread_id, err)
            loss = worktrees.Loss(True, [f"(git could not inspect it: {err})"], [])
        # Posting un-archives the thread; that is the point: the owner must see this.
        where = parent_id if deleted else thread_id
        try:
            message = await self.client.get_partial_messageable(int(where)).send(
                describe_loss(worktree, loss, deleted), view=worktree_view(thread_id)
            )
        except discord.HTTPException as err:
            log.warning("could not ask about worktree %s: %s", worktree["path"], err)
            return
        await asyncio.to_thread(
            session_state.update, self.runtime, thread_id, worktree_question=str(message.id)
        )

    async def reconcile(self) -> None:
        """At bot start, before sessions are adopted or resumed: threads archived or deleted
        while the bot was away sent their events to nobody, so ask Discord about each thread
        whose session should be running, and close those that are gone or archived."""
        records = await asyncio.to_thread(session_state.all_records, self.runtime)
        for record in records:
            key = record["key"]
            if (
                record.get("server") != self.sessions.server.name
                or not record.get("thread_id")
                or record.get("wanted") != "running"
            ):
                continue
            parent_id = str(record.get("parent_id") or "")
            try:
                thread = await self.client.fetch_channel(int(key))
            except discord.NotFound:
                await self.closed(key, parent_id, deleted=True)
                continue
            except discord.HTTPException as err:
                log.warning("could not check thread %s: %s", key, err)
                continue
            if isinstance(thread, discord.Thread) and thread.archived:
                await self.closed(key, parent_id, deleted=False)

    async def decide(self, thread_id: str, action: str) -> str:
        """Carry out a Remove anyway / Keep click; returns the message's new text."""
        async with self.sessions.lock(thread_id):
            record = await asyncio.to_thread(session_state.load, self.runtime, thread_id) or {}
            worktree = record.get("worktree")
            if not worktree:
                return "Nothing to do: this worktree is already gone."
            if action == "keep":
                await asyncio.to_thread(
                    session_state.update, self.runtime, thread_id, worktree_question=None
                )
                return f"📌 Kept worktree `{worktree['path']}` (branch `{worktree['branch']}`)."
            if await self.sessions.live_pane(thread_id):
                return "A session is running in this worktree again; /stop it first."
            try:
                await asyncio.to_thread(worktrees.remove, worktree, True)
            except worktrees.WorktreeError as err:
                return f"⚠️ Could not remove `{worktree['path']}`: {err}"
            await asyncio.to_thread(
                session_state.update, self.runtime, thread_id, worktree=None, worktree_question=None
            )
        self.sessions.on_change()
        return f"🗑️ Removed worktree `{worktree['path']}` and branch `{worktree['branch']}`."

    async def notify(self, channel_id: str, text: str) -> None:
        """Post a notice from the bridge in a channel or thread (best effort)."""
        try:
            await self.client.get_partial_messageable(int(channel_id)).send(text)
        except discord.HTTPException as err:
            log.warning("could not post in %s: %s", channel_id, err)

    async def watch_worktrees(self) -> None:
        """Notice worktrees removed outside the bridge (the thread is told, its session ends)."""
        while True:
            await asyncio.sleep(WORKTREE_CHECK_SECONDS)
            try:
                await self.sessions.check_worktrees()
            except Exception:
                log.exception("worktree check failed")


def describe_loss(worktree: dict, loss: worktrees.Loss, deleted: bool) -> str:
    """The message listing what removing the worktree would lose (≤ 2000 characters)."""
    where = "A deleted thread's" if deleted else "This thread's"
    lines = [
        f"🗂️ {where} worktree `{worktree['path']}` was kept: removing it would lose",
    ]
    if loss.uncommitted:
        lines.append(f"**{len(loss.uncommitted)} uncommitted change(s):**")
        lines += [f"- `{_code(line)}`" for line in loss.uncommitted[:LIST_MAX]]
        lines += [f"- … and {len(loss.uncommitted) - LIST_MAX} more"] * (
            len(loss.uncommitted) > LIST_MAX
        )
    if loss.unmerged:
        lines.append(f"**{len(loss.unmerged)} commit(s) on `{worktree['branch']}` in no other "
                     "branch:**")  # fmt: skip
        lines += [f"- `{_code(line)}`" for line in loss.unmerged[:LIST_MAX]]
        lines += [f"- … and {len(loss.unmerged) - LIST_MAX} more"] * (len(loss.unmerged) > LIST_MAX)
    if loss.ignored:
        lines.append(f"**{len(loss.ignored)} file(s) git ignores** (.env, databases, builds):")
        lines += [f"- `{_code(line)}`" for line in loss.ignored[:LIST_MAX]]
        lines += [f"- … and {len(loss.ignored) - LIST_MAX} more"] * (len(loss.ignored) > LIST_MAX)
    text = "\n".join(lines)
    return text if len(text) <= 1900 else text[:1897] + "…"


def _code(line: str) -> str:
    """Git output inside inline code: a backtick would end it early."""
    return line.replace("`", "ˋ")[:150]


class WorktreeButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=custom_ids.WORKTREE_TEMPLATE,
):
    """Remove anyway / Keep on a kept worktree's message; works after a bot restart."""

    def __init__(self, action: str, key: str) -> None:
        label, style = (
            ("Remove anyway", discord.ButtonStyle.danger)
            if action == "remove"
            else ("Keep", discord.ButtonStyle.secondary)
        )
        button = discord.ui.Button(
            label=label, style=style, custom_id=custom_ids.worktree(action, key)
        )
        super().__init__(button)
        self.action = action
        self.key = key

    @classmethod
    async def from_custom_id(
        cls, interaction: BotInteraction, item: discord.ui.Item[Any], match: Any
    ) -> WorktreeButton:
        return cls(match["action"], match["key"])

    async def callback(self, interaction: BotInteraction) -> None:
        if not await allowed(interaction):
            return
        await interaction.response.defer()  # git may take a moment; ack within 3 s
        text = await interaction.client.threads.decide(self.key, self.action)
        await interaction.edit_original_response(content=text, view=None)


def worktree_view(thread_id: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(WorktreeButton("remove", thread_id))
    view.add_item(WorktreeButton("keep", thread_id))
    return view
