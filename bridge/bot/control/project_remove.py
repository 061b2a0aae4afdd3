"""``/project remove``: asks first, then unmaps the channel's project and ends all of it.

The question is ephemeral, with **Remove**, **Remove and delete channel** and **Cancel**
(``db:proj:`` ``DynamicItem``s: they work after a bot restart; owner only), and says what goes
with the project: its running sessions, queued prompts, schedules, conversations, drafts and
waits (``bridge/state/leftovers.py``). Removing writes the config file (atomic, the project's
entry and its ``threads[]`` taken out, every other key kept), drops the project from the
running bot, stops its channel's and threads' sessions as ``/stop`` does (Claude exits, the
window closes; an adopted Claude Code is released and keeps running), then drops what the
bridge kept of them, so that nothing of it comes back when the channel is mapped again (to
another folder: its conversation resumed there, its queued prompt typed, its schedules
fired). The directory, its files and any thread worktrees are never touched; the channel is
deleted only with **Remove and delete channel**. The last project of a bot cannot be removed
(a config needs one).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import discord

from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem, owner_only, target_of
from bridge.config import ConfigError, Project
from bridge.config import projects as edits
from bridge.discord import custom_ids
from bridge.sessions import adoption
from bridge.state import leftovers, session_state
from bridge.state.leftovers import Leftovers

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

NOT_A_PROJECT = (
    "This channel is not one of this bot's projects: use /project remove in the project's "
    "channel, or name it (`project:`)."
)
IN_A_THREAD = "This is a thread of **{name}**: use /project remove in the project's channel."
LAST_ONE = (
    "⚠️ **{name}** is this bot's only project, and a config needs one: add another project "
    "first (`/project add`), then remove this one."
)


async def confirm_removal(
    interaction: BotInteraction, sessions: SessionManager, name: str | None = None
) -> None:
    """Answer ``/project remove`` with the question and its buttons (nothing changes yet):
    about the project ``name``, else the channel's own."""
    if name is not None:
        found = next((p for p in sessions.server.projects if p.name == name), None)
        if found is None:
            text = f"No project is named **{discord.utils.escape_markdown(name[:100])}**."
            await interaction.response.send_message(text, ephemeral=True)
            return
        project = found
    else:
        target = target_of(sessions, interaction.channel)
        if target is None or target.thread_id is not None:
            text = NOT_A_PROJECT if target is None else IN_A_THREAD.format(name=target.project.name)
            await interaction.response.send_message(text, ephemeral=True)
            return
        project = target.project
    if len(sessions.server.projects) == 1:
        await interaction.response.send_message(LAST_ONE.format(name=project.name), ephemeral=True)
        return
    await interaction.response.defer(ephemeral=True, thinking=True)
    threads = cached_threads(interaction.client, project)
    keys = await asyncio.to_thread(session_keys, sessions, project, threads)
    running = await asyncio.to_thread(running_keys, sessions, keys)
    adopted = await asyncio.to_thread(adopted_keys, sessions, keys)
    kept = await asyncio.to_thread(leftovers.survey, sessions.runtime, sessions.server.name, keys)
    text = (
        f"Remove project **{project.name}** (`{project.path}`)? It leaves the config and "
        f"{sessions_words(len(running), len(adopted))}.{gone_words(kept)} The directory and "
        f"its files stay as they are; its channel <#{project.channel_id}> stays unless you "
        "pick **Remove and delete channel**."
    )
    view = discord.ui.View(timeout=None)
    view.add_item(RemoveButton("remove", project.channel_id))
    view.add_item(RemoveButton("delete", project.channel_id))
    view.add_item(RemoveButton("cancel", project.channel_id))
    await interaction.followup.send(text[:2000], view=view, ephemeral=True)


def session_keys(
    sessions: SessionManager, project: Project, threads: list[str] | None = None
) -> list[str]:
    """The project's channel and every thread session it has (listed, recorded, or one of
    ``threads``: the channel's threads Discord has shown the bot)."""
    keys = [project.channel_id]
    keys += [t.channel_id for t in project.threads]
    for record in session_state.all_records(sessions.runtime):
        if (
            record.get("server") == sessions.server.name
            and record.get("project") == project.name
            and record.get("thread_id")
        ):
            keys.append(record["key"])
    keys += [key for key in threads or [] if key.isascii() and key.isdigit()]
    return list(dict.fromkeys(keys))


def cached_threads(client: discord.Client, project: Project) -> list[str]:
    """The project channel's threads the bot has seen (a thread whose session never ran can
    still hold a queued prompt or a schedule)."""
    channel = client.get_channel(int(project.channel_id))
    if not isinstance(channel, discord.TextChannel):
        return []
    return [str(thread.id) for thread in channel.threads]


def running_keys(sessions: SessionManager, keys: list[str]) -> list[str]:
    live = {p.channel_id for p in sessions.tmux.panes() if not p.dead}
    return [key for key in keys if key in live]


def adopted_keys(sessions: SessionManager, keys: list[str]) -> list[str]:
    return [key for key in keys if adoption.live_address(sessions.runtime, key) is not None]


def sessions_words(running: int, adopted: int) -> str:
    """What happens to the project's Claude Code processes."""
    words = []
    if running:
        verb = "stops" if running == 1 else "stop"
        words.append(
            f"{_count(running, 'running session')} {verb} (as /stop: Claude Code "
            "exits, its window closes)"
        )
    if adopted:
        verb = "is" if adopted == 1 else "are"
        words.append(
            f"{_count(adopted, 'adopted session')} {verb} released (its Claude Code keeps running)"
        )
    return " and ".join(["its " + words[0], *words[1:]]) if words else "nothing of it is running"


def gone_words(found: Leftovers) -> str:
    """The question's sentence on what else goes for good, or nothing when there is none."""
    parts = leftover_parts(found)
    if not parts:
        return ""
    text = f" Also gone for good: {_listed(parts)}"
    if found.conversations:
        text += " (mapping this channel again starts a new conversation)"
    return text + "."


def leftover_parts(found: Leftovers) -> list[str]:
    parts = []
    if found.queued_count:
        parts.append(_count(found.queued_count, "queued prompt") + " (never typed)")
    if found.schedules:
        parts.append(_count(len(found.schedules), "schedule"))
    if found.conversations:
        parts.append(_count(len(found.conversations), "conversation"))
    if found.drafts:
        parts.append(_count(found.drafts, "draft review"))
    if found.held:
        parts.append(_count(found.held, "message held", "messages held") + " behind a screen")
    if found.waits:
        parts.append(_count(len(found.waits), "usage-limit or budget wait"))
    return parts


def _count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else many or one + 's'}"


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


CANCELLED = "Cancelled: nothing changed."
LABELS = {"remove": "Remove", "delete": "Remove and delete channel", "cancel": "Cancel"}


class RemoveButton(BridgeItem[discord.ui.Button], template=custom_ids.PROJECT_TEMPLATE):
    def __init__(self, action: str, key: str) -> None:
        style = discord.ButtonStyle.secondary if action == "cancel" else discord.ButtonStyle.danger
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=LABELS[action],
            style=style,
            custom_id=custom_ids.project(action, key),
        )
        super().__init__(button)
        self.action = action
        self.key = key

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction)  # as /project itself

    async def clicked(self, interaction: BotInteraction) -> None:
        client = interaction.client
        if self.action == "cancel":
            await interaction.response.edit_message(content=CANCELLED, view=None)
            return
        project = client.server.project_for_channel(self.key)
        if project is None:
            await interaction.response.edit_message(
                content="That project is no longer mapped.", view=None
            )
            return
        await interaction.response.defer()
        threads = cached_threads(client, project)
        answer = await remove(client, project, threads)
        await interaction.edit_original_response(content=answer, view=None)
        if self.action == "delete" and answer.startswith("✅"):
            await _delete_channel(interaction, int(self.key))


async def remove(client: BridgeClient, project: Project, threads: list[str] | None = None) -> str:
    """Unmap ``project`` (file, then the running bot), stop its sessions and drop what the
    bridge kept of them; the answer."""
    sessions = client.sessions
    cfg, server = sessions.cfg, sessions.server
    if len(server.projects) == 1:
        return LAST_ONE.format(name=project.name)
    keys = await asyncio.to_thread(session_keys, sessions, project, threads)
    try:
        await asyncio.to_thread(
            edits.remove_project, cfg.path, server.index, project.channel_id, server.token
        )
    except (OSError, ConfigError) as err:
        log.warning("could not remove project %s from %s: %s", project.name, cfg.path, err)
        return f"⚠️ Not removed: the config file could not be written: {short_error(err)}"
    edits.unmap_live(server, project)  # from here on, messages in the channel type nothing
    stopped = 0
    for key in keys:
        async with sessions.lock(key):
            stopped += await sessions.stop(key)
    dropped, failed = await forget(sessions, keys)
    sessions.on_change()
    log.info("removed project %s (%s); stopped %d session(s)", project.name, project.path, stopped)
    client.schedules.changed()  # the runner forgets them now, the panel too
    closed = f"✖ Not typed: project **{project.name}** was removed."
    for key, entries in dropped.queued.items():
        await client.queue.dropped(key, entries, closed)
    ran = "nothing was running"
    if stopped:
        ran = f"stopped {_count(stopped, 'session')}"
    parts = leftover_parts(dropped)
    went = f"; dropped {_listed(parts)}" if parts else ""
    kept = f" ⚠️ Not all of its state could be dropped: {failed}" if failed else ""
    return (
        f"✅ Removed project **{project.name}**: {ran}{went}. `{project.path}` and its files "
        f"are untouched.{kept}"
    )


async def forget(sessions: SessionManager, keys: list[str]) -> tuple[Leftovers, str]:
    """Drop what the bridge kept of sessions ``keys``, each under its lock (a message, the
    queue or the scheduler meanwhile finds the channel unmapped); what went, and an error."""
    dropped = Leftovers()
    for key in keys:
        async with sessions.lock(key):
            try:
                found = await asyncio.to_thread(
                    leftovers.drop, sessions.runtime, sessions.server.name, [key]
                )
            except (OSError, ValueError) as err:
                log.warning("could not drop the state of %s: %s", key, err)
                return dropped, short_error(err)
        dropped.merge(found)
    return dropped, ""


async def _delete_channel(interaction: BotInteraction, channel_id: int) -> None:
    channel = interaction.client.get_channel(channel_id)
    try:
        if channel is None:
            channel = await interaction.client.fetch_channel(channel_id)
        # a project's channel is a guild's: never a DM or group DM, which have no delete()
        await channel.delete(reason="discord-bridge: /project remove")  # type: ignore[union-attr]
    except discord.NotFound:
        return  # deleted already
    except discord.Forbidden:
        await _followup(interaction, "⚠️ The channel stays: the bot lacks **Manage Channels**.")
    except discord.HTTPException as err:
        await _followup(interaction, f"⚠️ The channel stays: {err.text or err}"[:500])


async def _followup(interaction: BotInteraction, text: str) -> None:
    try:
        await interaction.followup.send(text, ephemeral=True)
    except discord.HTTPException as err:
        log.warning("could not answer /project remove: %s", err)


def short_error(err: BaseException) -> str:
    """An error in one line for a Discord answer (a ConfigError lists its problems)."""
    lines = str(err).strip().splitlines()
    return " ".join(line.strip() for line in lines)[:300] or type(err).__name__
