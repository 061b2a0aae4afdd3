"""Thread lifecycle → sessions: the owner archiving or anyone deleting a thread ends its
session, and its worktree is removed only when nothing would be lost.

Only the owner's archive ends anything. Discord's THREAD_UPDATE does not say who archived;
the guild's audit log does (a user's archive is logged, Discord's inactivity auto-archive is
not), so the bridge reads it. An archive by anyone else — the thread's creator, a moderator,
Discord itself — or by someone the bridge cannot tell (no View Audit Log permission) keeps the
session and its worktree, and the thread gets **Stop session** / **Stop and remove worktree**
/ **Keep** buttons (``db:arch:<action>:<thread id>``), once until they are answered.

A dirty worktree (uncommitted changes, files git ignores, or commits no other branch holds)
is kept and the thread — or, if the thread was deleted, its parent channel — gets a message
listing what removing it would lose, with **Remove anyway** / **Keep** buttons. The buttons are
``DynamicItem``s (``db:wt:<action>:<thread id>``, ``bridge/discord/custom_ids.py``): they still
work after a bot restart.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import discord

from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem
from bridge.discord import custom_ids
from bridge.sessions import worktrees
from bridge.state import session_state

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

WORKTREE_CHECK_SECONDS = 30.0  # how often worktrees removed outside the bridge are noticed
LIST_MAX = 10  # lines of git output shown per kind of loss
AUDIT_THREAD_UPDATE: Final = 111  # audit-log action_type of a thread's archive, lock or rename
AUDIT_LAG_SECONDS = 2.0  # an audit-log entry may be readable a moment after the gateway event
AUDIT_MATCH_SECONDS = 120.0  # an entry this close to the archive time is that archive's


def register(bot: BridgeClient) -> None:
    """Remove anyway / Keep and the archive question's buttons; archived or deleted threads
    (``bot.threads``)."""
    bot.add_dynamic_items(WorktreeButton, ArchiveButton)
    bot.listen("raw_thread_update", bot.threads.on_raw_thread_update)  # archived: it may end
    bot.listen("raw_thread_delete", bot.threads.on_raw_thread_delete)


class ThreadEvents:
    """Reacts to thread archive/delete events for one bot."""

    def __init__(self, client: discord.Client, sessions: SessionManager) -> None:
        self.client = client
        self.sessions = sessions
        self.runtime = sessions.runtime
        self._audit_warned = False

    async def on_raw_thread_update(self, payload: discord.RawThreadUpdateEvent) -> None:
        meta = payload.data.get("thread_metadata") or {}
        if meta.get("archived"):
            archived_at = discord.utils.parse_time(meta.get("archive_timestamp"))
            await self.archived(
                str(payload.thread_id), str(payload.parent_id), payload.guild_id, archived_at
            )

    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        await self.closed(str(payload.thread_id), str(payload.parent_id), deleted=True)

    async def archived(
        self,
        thread_id: str,
        parent_id: str,
        guild_id: int | None,
        archived_at: datetime.datetime | None,
    ) -> None:
        """The owner's archive ends the session (:meth:`closed`); anyone else's, Discord's
        auto-archive or an archive by someone unknown ends nothing: the owner is asked."""
        record = await asyncio.to_thread(session_state.load, self.runtime, thread_id)
        if record is None or record.get("server") != self.sessions.server.name:
            return  # never a session of ours
        actor, entry = await self.archived_by(guild_id, thread_id, archived_at)
        if entry is not None:
            if entry == record.get("archive_entry"):
                actor = None  # an archive already acted on: this one is not logged (auto)
            else:
                async with self.sessions.lock(thread_id):
                    await asyncio.to_thread(
                        session_state.update, self.runtime, thread_id, archive_entry=entry
                    )
        if actor is not None and self.sessions.server.may_act(actor):
            log.info("thread %s archived by its owner %s", thread_id, actor)
            await self.closed(thread_id, parent_id, deleted=False)
        else:
            log.info(
                "thread %s archived by %s: its session is kept",
                thread_id,
                actor or "Discord or someone unknown",
            )
            await self.ask_after_archive(thread_id, actor)

    async def archived_by(
        self, guild_id: int | None, thread_id: str, archived_at: datetime.datetime | None
    ) -> tuple[str | None, str | None]:
        """Who archived the thread at ``archived_at`` and the audit-log entry that says so;
        ``(None, None)`` for Discord's auto-archive (not logged) or when the log cannot be
        read. An archive entry is the newest of its thread made within a moment of it."""
        if guild_id is None or archived_at is None:
            return None, None
        for attempt in range(2):
            try:
                data = await self.client.http.get_audit_logs(
                    guild_id,
                    limit=50,
                    action_type=AUDIT_THREAD_UPDATE,
                )
            except discord.Forbidden:
                if not self._audit_warned:
                    self._audit_warned = True
                    log.warning(
                        "cannot read the audit log (give the bot View Audit Log): every thread "
                        "archive counts as someone else's; the owner is asked in the thread"
                    )
                return None, None
            except discord.HTTPException as err:
                log.warning("could not read the audit log: %s", err)
                return None, None
            for entry in data.get("audit_log_entries") or []:
                if str(entry.get("target_id")) != thread_id or not _archives(entry):
                    continue
                made = discord.utils.snowflake_time(int(entry["id"]))
                if abs((made - archived_at).total_seconds()) <= AUDIT_MATCH_SECONDS:
                    user = entry.get("user_id")
                    return (str(user) if user else None), str(entry["id"])
                break  # the thread's newest archive in the log is an older one
            if attempt == 0:
                await asyncio.sleep(AUDIT_LAG_SECONDS)
        return None, None

    async def ask_after_archive(self, thread_id: str, actor: str | None) -> None:
        """Keep the session and its worktree; post Stop / Remove worktree / Keep in the thread
        (posting un-archives it), once until answered."""
        async with self.sessions.lock(thread_id):
            record = await asyncio.to_thread(session_state.load, self.runtime, thread_id) or {}
            if record.get("archive_question"):
                return  # asked already (an auto-archive again while the question is open)
            running = record.get("wanted") == "running" or bool(
                await self.sessions.live_pane(thread_id)
            )
            worktree = record.get("worktree")
            if not running and not worktree:
                return  # nothing to end, nothing to keep
            try:
                message = await self.client.get_partial_messageable(int(thread_id)).send(
                    describe_archive(actor, running, worktree),
                    view=archive_view(thread_id, running, bool(worktree)),
                )
            except discord.HTTPException as err:
                log.warning("could not ask about archived thread %s: %s", thread_id, err)
                return
            await asyncio.to_thread(
                session_state.update, self.runtime, thread_id, archive_question=str(message.id)
            )

    async def decide_archive(self, thread_id: str, action: str) -> str:
        """Carry out a Stop session / Stop and remove worktree / Keep click; returns the
        message's new text."""
        if action == "keep":
            async with self.sessions.lock(thread_id):
                await asyncio.to_thread(
                    session_state.update, self.runtime, thread_id, archive_question=None
                )
            return "📌 Kept: the session and its worktree stay."
        async with self.sessions.lock(thread_id):
            record = await asyncio.to_thread(session_state.load, self.runtime, thread_id) or {}
            stopped = await self.sessions.stop(thread_id)
            await asyncio.to_thread(
                session_state.update, self.runtime, thread_id, archive_question=None
            )
            outcome = ""
            if action == "remove":
                parent_id = str(record.get("parent_id") or "")
                outcome = await self._clean_worktree(thread_id, parent_id, deleted=False)
        text = "🛑 Session stopped." if stopped else "🛑 No session was running."
        return f"{text} {outcome}".strip()

    async def closed(self, thread_id: str, parent_id: str, deleted: bool) -> None:
        """End the thread's session; remove a clean worktree, ask about a dirty one. All under
        the session's lock: a message right after the archive (it un-archives the thread)
        waits, rather than starting Claude Code in a worktree about to be removed."""
        record = await asyncio.to_thread(session_state.load, self.runtime, thread_id)
        if record is None or record.get("server") != self.sessions.server.name:
            return  # never a session of ours
        async with self.sessions.lock(thread_id):
            progress = getattr(self.client, "progress", None)
            if progress is not None and not deleted:
                progress.end_turn(thread_id, "archived")  # its status says so, not ⏳
            if await self.sessions.stop(thread_id):
                log.info("thread %s closed: its session ended", thread_id)
            if record.get("archive_question"):
                await asyncio.to_thread(
                    session_state.update, self.runtime, thread_id, archive_question=None
                )
            await self._clean_worktree(thread_id, parent_id, deleted)

    async def _clean_worktree(self, thread_id: str, parent_id: str, deleted: bool) -> str:
        """Remove a clean worktree, ask about a dirty one; returns what happened, in words."""
        record = await asyncio.to_thread(session_state.load, self.runtime, thread_id) or {}
        worktree = record.get("worktree")
        if not worktree:
            return ""
        if record.get("worktree_question"):
            return "Its worktree is kept until its question above is answered."
        try:
            loss = await asyncio.to_thread(worktrees.inspect, worktree)
            if not loss.exists or loss.clean:
                if loss.exists:
                    await asyncio.to_thread(worktrees.remove, worktree)
                    log.info("removed clean worktree %s", worktree["path"])
                await asyncio.to_thread(
                    session_state.update, self.runtime, thread_id, worktree=None
                )
                return f"Removed its worktree `{worktree['path']}` (nothing in it was lost)."
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
            return f"Its worktree `{worktree['path']}` was kept: it holds work."
        await asyncio.to_thread(
            session_state.update, self.runtime, thread_id, worktree_question=str(message.id)
        )
        return f"Its worktree `{worktree['path']}` holds work: see below."

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
                await self.archived(key, parent_id, thread.guild.id, thread.archive_timestamp)

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
        *loss_lines(worktree, loss),
    ]
    text = "\n".join(lines)
    return text if len(text) <= 1900 else text[:1897] + "…"


def loss_lines(worktree: dict, loss: worktrees.Loss) -> list[str]:
    """What removing the worktree would lose, kind by kind, as Markdown lines."""
    lines = []
    if loss.uncommitted:
        lines.append(f"**{len(loss.uncommitted)} uncommitted change(s):**")
        lines += [f"- `{code(line)}`" for line in loss.uncommitted[:LIST_MAX]]
        lines += [f"- … and {len(loss.uncommitted) - LIST_MAX} more"] * (
            len(loss.uncommitted) > LIST_MAX
        )
    if loss.unmerged:
        lines.append(
            f"**{len(loss.unmerged)} commit(s) on `{worktree['branch']}` in no other branch:**"
        )
        lines += [f"- `{code(line)}`" for line in loss.unmerged[:LIST_MAX]]
        lines += [f"- … and {len(loss.unmerged) - LIST_MAX} more"] * (len(loss.unmerged) > LIST_MAX)
    if loss.ignored:
        lines.append(f"**{len(loss.ignored)} file(s) git ignores** (.env, databases, builds):")
        lines += [f"- `{code(line)}`" for line in loss.ignored[:LIST_MAX]]
        lines += [f"- … and {len(loss.ignored) - LIST_MAX} more"] * (len(loss.ignored) > LIST_MAX)
    return lines


def describe_archive(actor: str | None, running: bool, worktree: dict | None) -> str:
    """The message after an archive that was not the owner's."""
    who = (
        f"by <@{actor}>"
        if actor
        else "by Discord after inactivity, or by someone the bridge cannot tell"
    )
    kept = ["its Claude Code session keeps running"] if running else []
    if worktree:
        kept.append(f"its worktree `{worktree['path']}` stays")
    return (
        f"🗄️ This thread was archived {who}, not by the bridge's owner, so "
        f"{' and '.join(kept)}. Only the owner's archive ends them; or choose here."
    )


def _archives(entry: Mapping[str, Any]) -> bool:
    """True when an audit-log entry's changes set ``archived`` to true."""
    changes = entry.get("changes") or []
    return any(c.get("key") == "archived" and c.get("new_value") is True for c in changes)


def code(line: str) -> str:
    """Git output inside inline code: a backtick would end it early."""
    return line.replace("`", "ˋ")[:150]


class WorktreeButton(BridgeItem[discord.ui.Button], template=custom_ids.WORKTREE_TEMPLATE):
    """Remove anyway / Keep on a kept worktree's message; works after a bot restart."""

    def __init__(self, action: str, key: str) -> None:
        label, style = (
            ("Remove anyway", discord.ButtonStyle.danger)
            if action == "remove"
            else ("Keep", discord.ButtonStyle.secondary)
        )
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label, style=style, custom_id=custom_ids.worktree(action, key)
        )
        super().__init__(button)
        self.action = action
        self.key = key

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.response.defer()  # git may take a moment; ack within 3 s
        text = await interaction.client.threads.decide(self.key, self.action)
        await interaction.edit_original_response(content=text, view=None)


def worktree_view(thread_id: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(WorktreeButton("remove", thread_id))
    view.add_item(WorktreeButton("keep", thread_id))
    return view


class ArchiveButton(BridgeItem[discord.ui.Button], template=custom_ids.ARCHIVE_TEMPLATE):
    """Stop session / (Stop and) remove worktree / Keep, after an archive that was not the
    owner's; works after a bot restart."""

    def __init__(self, action: str, key: str, label: str = "") -> None:
        defaults = {
            "stop": ("Stop session", discord.ButtonStyle.danger),
            "remove": ("Stop and remove worktree", discord.ButtonStyle.danger),
            "keep": ("Keep", discord.ButtonStyle.secondary),
        }
        default_label, style = defaults[action]
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label or default_label, style=style, custom_id=custom_ids.archive(action, key)
        )
        super().__init__(button)
        self.action = action
        self.key = key

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.response.defer()  # stopping and git may take a moment
        text = await interaction.client.threads.decide_archive(self.key, self.action)
        await interaction.edit_original_response(content=text, view=None)


def archive_view(thread_id: str, running: bool, has_worktree: bool) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    if running:
        view.add_item(ArchiveButton("stop", thread_id))
    if has_worktree:
        label = "" if running else "Remove worktree"
        view.add_item(ArchiveButton("remove", thread_id, label))
    view.add_item(ArchiveButton("keep", thread_id))
    return view
