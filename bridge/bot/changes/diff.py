"""Reviewing what Claude changed: the **Diff** button of a turn and ``/diff [base]``.

The button (on a turn's closed status message, or on its reply) carries the channel or
thread and the two snapshot trees the hooks took (``bridge/handlers/turn_changes.py``), so
it answers after a bot restart too; ``/diff`` snapshots the working tree now and compares it
with ``HEAD`` (a worktree thread: its base commit) or the revision given. Both answer
privately, only to the owner and ``allowedUserIds``; git runs in a worker thread with the
safe settings of ``bridge/sessions/changes.py``, and its output is shown as untrusted text
(``bridge/discord/render/diff_view.py``, no mentions).
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bridge.bot.client import UNMAPPED, BotInteraction, BridgeClient, BridgeItem, target_here
from bridge.config.roles import WATCH
from bridge.discord import custom_ids
from bridge.discord.render.diff_view import DiffView, render
from bridge.sessions import changes, tree_diff
from bridge.state import runtime, session_state

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager
    from bridge.sessions.targets import SessionTarget
    from bridge.state.runtime import Runtime

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
SNAPSHOT_BUDGET = 20.0  # seconds of git for /diff's snapshot (a worker thread of the bot's)
GONE = "This turn's snapshot is no longer in the repository (git removed it), so its diff is gone."


def register(bot: BridgeClient) -> None:
    """The Diff button of a turn, and ``/diff``."""
    bot.add_dynamic_items(DiffButton)
    bot.tree.add_command(diff)


class DiffButton(BridgeItem[discord.ui.Button], template=custom_ids.DIFF_TEMPLATE):
    """📝 Diff on a turn that changed files: that turn's diff, privately."""

    needs = WATCH

    def __init__(self, key: str, old: str, new: str) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label="Diff",
            emoji="📝",
            style=discord.ButtonStyle.secondary,
            custom_id=custom_ids.diff(key, old, new),
        )
        super().__init__(button)
        self.key, self.old, self.new = key, old, new

    async def clicked(self, interaction: BotInteraction) -> None:
        sessions = interaction.client.sessions
        target = sessions.target_for_key(self.key)
        if target is None:
            await interaction.response.send_message(UNMAPPED, ephemeral=True)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        limit = interaction.client.cfg.attach_after
        view = await asyncio.to_thread(
            turn_diff, session_dir(sessions, target), self.old, self.new, limit
        )
        await send_view(interaction, view, interaction.client.reviews.file_picker(self.key, view))


def diff_view(key: str, found: dict) -> discord.ui.View:
    """A view holding the Diff button of a turn's ``changes`` (the Stop hook's record)."""
    view = discord.ui.View(timeout=None)
    abbrev = 20
    view.add_item(DiffButton(key, str(found["old"])[:abbrev], str(found["new"])[:abbrev]))
    return view


@app_commands.command(name="diff", description="What changed here: the uncommitted diff")
@app_commands.describe(base="compare with this revision (default: HEAD, or a worktree's base)")
async def diff(interaction: BotInteraction, base: str | None = None) -> None:
    """``/diff [base]``: the session's uncommitted changes."""
    target = await target_here(interaction)
    if target is None:
        return
    sessions = interaction.client.sessions
    await interaction.response.defer(ephemeral=True, thinking=True)
    record = await asyncio.to_thread(session_state.load, sessions.runtime, target.key) or {}
    worktree = record.get("worktree") or {}
    limit = interaction.client.cfg.attach_after
    private = bridge_paths(sessions.runtime, interaction.client.cfg.path)
    view = await asyncio.to_thread(
        uncommitted_diff,
        session_dir(sessions, target),
        base,
        worktree.get("base"),
        sessions.runtime.path("turns"),
        limit,
        private,
    )
    await send_view(interaction, view, interaction.client.reviews.file_picker(target.key, view))


def bridge_paths(rt: Runtime, config_path: str) -> tuple[str, ...]:
    """The bridge's own folders and config: never read into a snapshot (as the hooks')."""
    return (runtime.bridge_home(), config_path, rt.root, rt.state_root)


def session_dir(sessions: SessionManager, target: SessionTarget) -> str:
    """Where the session works: its worktree, else its recorded cwd, else the configured path."""
    record = session_state.load(sessions.runtime, target.key) or {}
    worktree = record.get("worktree") or {}
    for path in (worktree.get("path"), record.get("cwd"), target.path):
        if isinstance(path, str) and path:
            return path
    return target.path


def turn_diff(directory: str, old: str, new: str, limit: int) -> DiffView:
    """The diff between two snapshot trees of the repository holding ``directory``."""
    try:
        root, _ = changes.repo_of(directory)
    except changes.NotARepository:
        return DiffView([not_a_repo(directory)])
    except changes.GitError as err:
        return DiffView([f"⚠️ {err}"])
    try:
        old_tree, new_tree = tree_diff.tree_of(root, old), tree_diff.tree_of(root, new)
    except changes.GitError:
        return DiffView([GONE])
    return _compare(root, old_tree, new_tree, "this turn", limit, f"turn-{new[:8]}")


def uncommitted_diff(
    directory: str,
    base: str | None,
    worktree_base: object,
    scratch: str,
    limit: int,
    private: tuple[str, ...] = (),
) -> DiffView:
    """The working tree now against ``base`` (default: a worktree's base commit, or HEAD);
    ``private``: the bridge's own folders, never read."""
    try:
        deadline = time.monotonic() + SNAPSHOT_BUDGET
        root, tree, skipped = changes.snapshot(directory, scratch, deadline, private)
    except changes.NotARepository:
        return DiffView([not_a_repo(directory)])
    except changes.GitError as err:
        return DiffView([f"⚠️ {err}"])
    wanted = base.strip() if base else (worktree_base if isinstance(worktree_base, str) else "")
    what = (
        "since the worktree's base commit" if not base and wanted else "uncommitted, against HEAD"
    )
    try:
        old = tree_diff.tree_of(root, wanted) if wanted else tree_diff.head_tree(root)
    except changes.GitError:
        return DiffView(
            [
                f"⚠️ `{discord.utils.escape_markdown(wanted)[:80]}` is not a revision"
                " of this repository."
            ]
        )
    if base:
        what = f"working tree against `{base.strip()}`"
    view = _compare(root, old, tree, what, limit, "uncommitted")
    if skipped:
        note = f"-# {len(skipped)} large untracked file(s) left out."
        if len(view.messages[-1]) + len(note) < 1999:
            view.messages[-1] += "\n" + note
        else:
            view.messages.append(note)
    return view


def not_a_repo(directory: str) -> str:
    shown = discord.utils.escape_markdown(directory)
    return (
        f"This session's directory ({shown}) is not in a git repository, so the bridge "
        "cannot tell what changed: no change summaries or diffs here."
    )


def _compare(root: str, old: str, new: str, what: str, limit: int, name: str) -> DiffView:
    try:
        files = tree_diff.changed_files(root, old, new)
        if not files:
            return DiffView([f"No changes ({what})."])
        text, cut = tree_diff.diff_text(root, old, new)
    except changes.GitError as err:
        return DiffView([f"⚠️ {err}"])
    title = f"{tree_diff.summary(files)} ({what})"
    view = render(title, files, text, cut, inline_messages=max(1, limit), name=name)
    view.trees, view.files = (old, new), files
    return view


async def send_view(
    interaction: BotInteraction, view: DiffView, last: discord.ui.View | None = None
) -> None:
    """The messages as ephemeral follow-ups (after a defer); the file, and the components
    ``last`` (the review's file select, a **Comment…** button), with the last one."""
    messages = view.messages or ["(empty)"]
    for i, text in enumerate(messages):
        file: discord.File = discord.utils.MISSING  # discord.py's "not given"
        components: discord.ui.View = discord.utils.MISSING
        if i == len(messages) - 1:
            if view.file is not None:
                name, data = view.file
                file = discord.File(io.BytesIO(data), filename=name)
            if last is not None:
                components = last
        try:
            await interaction.followup.send(
                text, ephemeral=True, allowed_mentions=NO_MENTIONS, file=file, view=components
            )
        except discord.HTTPException as err:
            log.warning("could not send a diff: %s", err)
            return
