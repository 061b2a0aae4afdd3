"""``/project add | remove | list``: map a directory to a new (or existing) channel, unmap one,
list them — from Discord, while the bot runs. Owner only (not ``allowedUserIds``: a project
gives Claude Code a directory of this machine).

``add`` checks the directory (``bridge/config/projects.py``), creates a text channel in the
category that holds the project channels (Discord's **Manage Channels** permission; without
it the answer says which permission to add, or to map an existing channel with
``channel:``), writes the config file and maps it in the running bot (relay, sessions,
panel): nothing starts until the first message. ``remove`` (``bot/control/project_remove.py``) asks
first, then unmaps, stops the project's sessions as ``/stop`` does and drops what the bridge
kept of them (queued prompts, schedules, conversations, waits); files are never deleted, the
channel only when asked. Answers are ephemeral.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bridge.bot.client import BotInteraction, BridgeClient, owner_only
from bridge.bot.control.panel import waiting_channels
from bridge.bot.control.project_remove import RemoveButton, confirm_removal, short_error
from bridge.config import ConfigError, Project
from bridge.config import projects as edits
from bridge.sessions import pane_ops
from bridge.state import runtime, session_state

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

NO_MANAGE_CHANNELS = (
    "⚠️ I cannot create a channel: the bot lacks the **Manage Channels** permission{where}. "
    "Either give it (Server Settings → Roles → the bot's role → Manage Channels, or on the "
    "category), or create the channel yourself and map it: "
    "`/project add path:{path} channel:#your-channel`."
)
LIST_LIMIT = 1900  # characters of /project list shown inline; the rest is summarised


def register(bot: BridgeClient) -> None:
    """``/project`` and its confirmation buttons (they keep working after a restart)."""
    bot.tree.add_command(ProjectCommands())
    bot.add_dynamic_items(RemoveButton)


class ProjectCommands(app_commands.Group):
    """``/project add | remove | list``, on ``interaction.client.sessions`` as every command."""

    def __init__(self) -> None:
        super().__init__(name="project", description="Add, remove or list this bridge's projects")
        self._lock = asyncio.Lock()  # one add at a time: check, create, write, map

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        """The tree let the owner and ``allowedUserIds`` through; projects are the owner's.
        (``Interaction[Any]``: discord.py types this hook as generic over the client, as
        ``BridgeItem``'s.)"""
        return await owner_only(interaction)

    # --- /project add ----------------------------------------------------------------

    @app_commands.command(name="add", description="Map a directory of this machine to a channel")
    @app_commands.describe(
        path="absolute path of the project's directory on this machine",
        name="project (and channel) name; default: the directory's name",
        channel="map this existing channel instead of creating one",
    )
    async def add(
        self,
        interaction: BotInteraction,
        path: app_commands.Range[str, 1, 1024],
        name: app_commands.Range[str, 1, 100] | None = None,
        channel: discord.TextChannel | None = None,
    ) -> None:
        guild = interaction.guild
        if guild is None:
            await interaction.response.send_message("Use it in the server.", ephemeral=True)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        async with self._lock:
            answer = await add_project(interaction.client.sessions, guild, path, name, channel)
        await interaction.followup.send(answer[:2000], ephemeral=True)

    # --- /project remove -------------------------------------------------------------

    @app_commands.command(name="remove", description="Unmap this channel's project (asks first)")
    @app_commands.describe(project="another project, by name (e.g. one whose channel is gone)")
    async def remove(self, interaction: BotInteraction, project: str | None = None) -> None:
        await confirm_removal(interaction, interaction.client.sessions, project)

    @remove.autocomplete("project")
    async def _project_names(
        self, interaction: BotInteraction, current: str
    ) -> list[app_commands.Choice[str]]:
        server = interaction.client.server
        if str(interaction.user.id) != server.owner_id:
            return []  # the tree let allowed users through; the names are the owner's
        names = [p.name for p in server.projects if current.lower() in p.name]
        return [app_commands.Choice(name=n, value=n) for n in names[:25]]

    # --- /project list ---------------------------------------------------------------

    @app_commands.command(name="list", description="Every mapped project with its path and state")
    async def list_(self, interaction: BotInteraction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        lines = await asyncio.to_thread(project_lines, interaction.client.sessions)
        await interaction.followup.send(fit(lines), ephemeral=True)


async def add_project(
    sessions: SessionManager,
    guild: discord.Guild,
    path: str,
    name: str | None,
    channel: discord.TextChannel | None,
) -> str:
    """Check, create (or map) the channel, write the config file and map it in the bot; the
    answer, in words."""
    cfg, server = sessions.cfg, sessions.server
    try:
        real = await asyncio.to_thread(edits.check_directory, path)
        rt = sessions.runtime
        edits.check_not_private(real, [runtime.bridge_home(), rt.root, rt.state_root])
        wanted = edits.project_name(name if name else real.rstrip("/").rsplit("/", 1)[-1])
        if not name:
            wanted = _free_name(server.projects, wanted or "project")
        edits.check_new(cfg, server, real, wanted)
        if channel is not None:
            used = edits.channel_in_use(cfg, str(channel.id))
            if used:
                raise edits.Refused(f"<#{channel.id}> is already {used}.")
    except edits.Refused as err:
        return f"⚠️ {err}"
    created = None
    if channel is None:
        category = project_category(guild, server.projects)
        try:
            created = channel = await guild.create_text_channel(
                wanted, category=category, reason=f"discord-bridge: /project add {real}"
            )
        except discord.Forbidden:
            where = f" in the category **{category.name}**" if category else ""
            return NO_MANAGE_CHANNELS.format(where=where, path=real)
        except discord.HTTPException as err:
            return f"⚠️ Discord refused to create the channel: {err.text or err}"[:500]
    entry = edits.new_entry(wanted, str(channel.id), real)
    try:
        await asyncio.to_thread(edits.add_project, cfg.path, server.index, entry, server.token)
    except (OSError, ConfigError) as err:
        log.warning("could not add project %s to %s: %s", wanted, cfg.path, err)
        if created is not None:
            await _delete_quietly(created)
        return f"⚠️ Not added: the config file could not be written: {short_error(err)}"
    edits.map_live(cfg, server, entry)
    sessions.on_change()
    log.info("added project %s (%s) in #%s", wanted, real, channel.id)
    await _welcome(channel, wanted, real)
    how = "created" if created is not None else "mapped"
    return (
        f"✅ Added project **{wanted}**: `{real}` → <#{channel.id}> ({how}). Nothing runs "
        "yet: Claude Code starts with the first message there."
    )


def _free_name(projects: list[Project], name: str) -> str:
    """``name``, or ``name-2``, ``name-3``… when a project has it (a default name only)."""
    taken = {p.name for p in projects}
    candidate, n = name, 2
    while candidate in taken:
        suffix = f"-{n}"
        candidate = name[: edits.NAME_MAX - len(suffix)] + suffix
        n += 1
    return candidate


def project_category(
    guild: discord.Guild, projects: list[Project]
) -> discord.CategoryChannel | None:
    """The category that holds most of the project channels (the first project's on a tie);
    None when they are in none."""
    found: Counter[int] = Counter()
    categories: dict[int, discord.CategoryChannel] = {}
    for project in projects:
        channel = guild.get_channel(int(project.channel_id))
        category = getattr(channel, "category", None)
        if isinstance(category, discord.CategoryChannel):
            found[category.id] += 1
            categories.setdefault(category.id, category)
    if not found:
        return None
    return categories[found.most_common(1)[0][0]]


async def _welcome(channel: discord.abc.Messageable, name: str, path: str) -> None:
    text = (
        f"📂 This channel is now project **{name}**: `{path}`. What you write here is typed "
        "into Claude Code running in that directory; it starts with your first message."
    )
    try:
        await channel.send(text)
    except discord.HTTPException as err:
        log.warning("could not greet in the new project channel: %s", err)


async def _delete_quietly(channel: discord.abc.GuildChannel) -> None:
    try:
        await channel.delete(reason="discord-bridge: the project could not be added")
    except discord.HTTPException as err:
        log.warning("could not delete channel %s again: %s", channel.id, err)


# --- /project list ---------------------------------------------------------------------

ICONS = {"stopped": "⚫", "idle": "🟢", "working": "🟡", "waiting for you": "🔔"}


def project_lines(sessions: SessionManager) -> list[str]:
    """One line per project: state, name, channel, path, running thread sessions."""
    panes = {p.channel_id: p for p in sessions.tmux.panes() if not p.dead}
    waiting = waiting_channels(sessions.runtime)
    records = session_state.all_records(sessions.runtime)
    lines = []
    for project in sessions.server.projects:
        pane = panes.get(project.channel_id)
        if pane is None:
            state = "stopped"
        elif project.channel_id in waiting:
            state = "waiting for you"
        else:
            state = "working" if pane_ops.glance(sessions.tmux, pane.pane_id).busy else "idle"
        threads = sum(
            1
            for r in records
            if r.get("project") == project.name
            and r.get("thread_id")
            and r["key"] in panes
            and r.get("server") == sessions.server.name
        )
        parts = [
            f"{ICONS[state]} **{discord.utils.escape_markdown(project.name)}**",
            f"<#{project.channel_id}>",
            f"`{project.path}`",
            state,
        ]
        if threads:
            parts.append(f"+{threads} thread session{'s' if threads > 1 else ''}")
        if not os.path.isdir(project.path):
            parts.append("⚠️ directory missing")
        lines.append(" · ".join(parts))
    return lines


def fit(lines: list[str]) -> str:
    """The lines under a heading, within one message (the rest counted)."""
    text = f"**{len(lines)} project{'s' if len(lines) != 1 else ''}**"
    for i, line in enumerate(lines):
        if len(text) + len(line) + 1 > LIST_LIMIT:
            return text + f"\n… and {len(lines) - i} more"
        text += "\n" + line
    return text
