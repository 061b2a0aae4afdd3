"""``/project remove``: asks first, then unmaps the channel's project and stops its sessions.

The question is ephemeral, with **Remove**, **Remove and delete channel** and **Cancel**
(``db:proj:`` ``DynamicItem``s: they work after a bot restart; owner only). Removing writes
the config file (atomic, the project's entry and its ``threads[]`` taken out, every other key
kept), drops the project from the running bot, then stops its channel's and threads'
sessions as ``/stop`` does (Claude exits, the window closes, it stays stopped). The directory,
its files and any thread worktrees are never touched; the channel is deleted only with
**Remove and delete channel**. The last project of a bot cannot be removed (a config needs
one).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import discord

from bridge.bot.client import BotInteraction, BridgeItem, owner_only, target_of
from bridge.config import ConfigError, Project
from bridge.config import projects as edits
from bridge.discord import custom_ids
from bridge.state import session_state

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
    running = await asyncio.to_thread(running_keys, sessions, project)
    sessions_text = (
        f"its {len(running)} running session{'s' if len(running) > 1 else ''} stop (as /stop)"
        if running
        else "nothing of it is running"
    )
    text = (
        f"Remove project **{project.name}** (`{project.path}`)? It leaves the config and "
        f"{sessions_text}. The directory and its files stay as they are; its channel "
        f"<#{project.channel_id}> stays unless you pick **Remove and delete channel**."
    )
    view = discord.ui.View(timeout=None)
    view.add_item(RemoveButton("remove", project.channel_id))
    view.add_item(RemoveButton("delete", project.channel_id))
    view.add_item(RemoveButton("cancel", project.channel_id))
    await interaction.followup.send(text, view=view, ephemeral=True)


def session_keys(sessions: SessionManager, project: Project) -> list[str]:
    """The project's channel and every thread session it has (listed or recorded)."""
    keys = [project.channel_id]
    keys += [t.channel_id for t in project.threads]
    for record in session_state.all_records(sessions.runtime):
        if (
            record.get("server") == sessions.server.name
            and record.get("project") == project.name
            and record.get("thread_id")
        ):
            keys.append(record["key"])
    return list(dict.fromkeys(keys))


def running_keys(sessions: SessionManager, project: Project) -> list[str]:
    live = {p.channel_id for p in sessions.tmux.panes() if not p.dead}
    return [key for key in session_keys(sessions, project) if key in live]


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
        answer = await remove(client.sessions, project)
        await interaction.edit_original_response(content=answer, view=None)
        if self.action == "delete" and answer.startswith("✅"):
            await _delete_channel(interaction, int(self.key))


async def remove(sessions: SessionManager, project: Project) -> str:
    """Unmap ``project`` (file, then the running bot) and stop its sessions; the answer."""
    cfg, server = sessions.cfg, sessions.server
    if len(server.projects) == 1:
        return LAST_ONE.format(name=project.name)
    keys = await asyncio.to_thread(session_keys, sessions, project)
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
    sessions.on_change()
    log.info("removed project %s (%s); stopped %d session(s)", project.name, project.path, stopped)
    ran = "nothing was running"
    if stopped:
        ran = f"stopped {stopped} session{'s' if stopped != 1 else ''}"
    return (
        f"✅ Removed project **{project.name}**: {ran}. `{project.path}` and its files are "
        "untouched."
    )


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
