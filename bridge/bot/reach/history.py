"""``/history``: the project's past conversations, and **Resume in a thread**.

Used in a project's channel or one of its threads, it lists the conversations its agent kept
for the project's directory (``bridge/claude/history.py``, a Codex project's
``bridge/codex/history.py``: when, first prompt, last reply, length), newest first, in a
select menu of 25 per page. Nothing of a transcript is posted in the channel: the list and a
picked conversation's summary are ephemeral, for the owner who asked. **Resume in a thread**
opens a thread under the project's channel whose session starts as ``claude --resume <id>``
(``codex resume <id>``; the session manager resumes what the thread's session record
names). Owner only, as ``/project`` and ``/sessions``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bridge.agents import agent_for
from bridge.bot.client import (
    UNMAPPED,
    BotInteraction,
    BridgeClient,
    BridgeItem,
    data_of,
    owner_only,
)
from bridge.bot.control import resume_pick
from bridge.claude import history
from bridge.config.roles import WATCH
from bridge.discord import custom_ids
from bridge.sessions.start_failed import ClaudeDidNotStart
from bridge.sessions.targets import SessionTarget
from bridge.sizes import format_size
from bridge.state import session_record
from bridge.tmux import TmuxError

if TYPE_CHECKING:
    from bridge.config import Project
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

PAGE = 25
SHOWN = 300  # characters of a first prompt or last reply in a picked conversation's summary


def register(bot: BridgeClient) -> None:
    bot.tree.add_command(history_command)
    bot.add_dynamic_items(HistoryPick, HistoryPage, ResumeButton)


@app_commands.command(name="history", description="This project's past conversations: resume one")
@app_commands.check(owner_only)  # the owner's, not allowedUserIds' (as /project)
async def history_command(interaction: BotInteraction) -> None:
    project = project_here(interaction)
    if project is None:
        await interaction.response.send_message(UNMAPPED, ephemeral=True)
        return
    await interaction.response.defer(ephemeral=True, thinking=True)
    content, view = await listing(project, 0)
    await interaction.followup.send(content, view=view, ephemeral=True)


def project_here(interaction: BotInteraction) -> Project | None:
    channel = interaction.channel
    server = interaction.client.server
    parent = getattr(channel, "parent_id", None)
    return server.project_for_channel(getattr(channel, "id", 0)) or (
        server.project_for_channel(parent) if parent else None
    )


def project_by_key(sessions: SessionManager, key: str) -> Project | None:
    return sessions.server.project_for_channel(key)


def past(project: Project) -> list[history.Conversation]:
    """The project's past conversations, from its agent's own transcripts (blocking)."""
    return agent_for(project.agent).conversations(project.path)


def one(project: Project, session_id: str) -> history.Conversation | None:
    """One of them by id (checked by the agent's reader), or None (blocking)."""
    return agent_for(project.agent).conversation(project.path, session_id)


async def listing(project: Project, page: int) -> tuple[str, discord.ui.View]:
    found = await asyncio.to_thread(past, project)
    view = discord.ui.View(timeout=None)
    name = discord.utils.escape_markdown(project.name)
    if not found:
        return f"No past conversation of **{name}** (`{project.path}`).", view
    pages = (len(found) + PAGE - 1) // PAGE
    page = min(max(page, 0), pages - 1)
    shown = found[page * PAGE : (page + 1) * PAGE]
    text = f"**{len(found)} past conversation{'s' if len(found) != 1 else ''} of {name}**"
    if pages > 1:
        text += f" · page {page + 1}/{pages}"
    text += "\nPick one to see it and resume it in a thread (only you see this)."
    view.add_item(HistoryPick(project.channel_id, page, [option(c) for c in shown]))
    if pages > 1:
        for label, to, enabled in (
            ("◀ Previous", page - 1, page > 0),
            ("Next ▶", page + 1, page < pages - 1),
        ):
            view.add_item(
                HistoryPage(project.channel_id, max(0, min(to, pages - 1)), label, enabled)
            )
    return text, view


def when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "?"


def length(c: history.Conversation) -> str:
    prompts = f"{c.prompts}{'+' if c.partial else ''} prompt{'s' if c.prompts != 1 else ''}"
    return f"{prompts}, {format_size(c.size)}"


def option(c: history.Conversation) -> discord.SelectOption:
    label = " ".join(c.first_prompt.split())[:100] or c.session_id
    description = f"{when(c.updated)} · {length(c)} · {' '.join(c.last_reply.split())}"
    return discord.SelectOption(label=label, value=c.session_id, description=description[:100])


def summary(c: history.Conversation) -> str:
    def quote(text: str) -> str:
        text = text.strip()
        cut = text[:SHOWN] + ("…" if len(text) > SHOWN else "")
        return "\n".join("> " + line for line in cut.splitlines()) or "> (none)"

    return (
        f"**Conversation `{c.session_id}`** · started {when(c.started)} · last {when(c.updated)}"
        f" · {length(c)}\n**First prompt**\n{quote(c.first_prompt)}\n"
        f"**Last reply**\n{quote(c.last_reply)}"
    )


async def picked(interaction: BotInteraction, key: str, session_id: str) -> None:
    project = project_by_key(interaction.client.sessions, key)
    found = await asyncio.to_thread(one, project, session_id) if project else None
    view = discord.ui.View(timeout=None)
    if project is None or found is None:
        await interaction.response.send_message("That conversation is gone.", ephemeral=True)
        return
    view.add_item(ResumeButton(key, session_id))
    await interaction.response.send_message(summary(found)[:2000], view=view, ephemeral=True)


async def resume(interaction: BotInteraction, key: str, session_id: str) -> None:
    """A new thread under the project's channel whose session resumes ``session_id``."""
    sessions = interaction.client.sessions
    project = project_by_key(sessions, key)
    found = await asyncio.to_thread(one, project, session_id) if project else None
    if project is None or found is None:
        await interaction.response.send_message("That conversation is gone.", ephemeral=True)
        return
    running = await asyncio.to_thread(resume_pick.running_elsewhere, project.agent, found)
    if running is not None:
        label = agent_for(project.agent).label
        await interaction.response.send_message(
            f"That conversation is open in a running {label} (process {running}): "
            "stop it first (`/stop` where it runs), or adopt it with `/sessions`.",
            ephemeral=True,
        )
        return
    channel = interaction.client.get_channel(int(project.channel_id))
    if not isinstance(channel, discord.TextChannel):
        await interaction.response.send_message(
            "The project's channel is not reachable.", ephemeral=True
        )
        return
    await interaction.response.defer(ephemeral=True, thinking=True)
    name = f"resumed · {' '.join(found.first_prompt.split())}"[:100]
    try:
        thread = await channel.create_thread(name=name, type=discord.ChannelType.public_thread)
    except discord.HTTPException as err:
        await interaction.followup.send(f"⚠️ Could not open a thread: {err}", ephemeral=True)
        return
    target = SessionTarget.for_thread(project, str(thread.id), name, None)
    await thread.send(
        f"↪️ Resuming conversation `{session_id}` (last {when(found.updated)}, {length(found)}): "
        "what you write here continues it."
    )
    try:
        async with sessions.lock(target.key):
            await asyncio.to_thread(
                session_record.write_record,
                sessions.runtime,
                target.key,
                {
                    "session_id": session_id,
                    "transcript_path": found.path,
                    "cwd": project.path,
                    "project_path": project.path,
                    "source": "history",
                    "channel_id": target.key,
                    "recorded_at": time.time(),
                },
            )
            await sessions.register_thread(target)
            await sessions.ensure_running(target)
    except ClaudeDidNotStart as err:
        await thread.send(err.discord_text())
    except (TmuxError, OSError) as err:
        log.warning("could not resume %s in %s: %s", session_id, target.label, err)
        await thread.send(f"⚠️ Could not resume it: {err}")
    log.info("resumed conversation %s in thread %s", session_id, target.key)
    await interaction.followup.send(f"Resumed in {thread.mention}.", ephemeral=True)


class HistoryPick(BridgeItem[discord.ui.Select], template=custom_ids.HISTORY_PICK_TEMPLATE):
    needs = WATCH

    def __init__(
        self,
        key: str,
        page: int | str,
        options: list[discord.SelectOption] | None = None,
    ) -> None:
        select: discord.ui.Select[discord.ui.View] = discord.ui.Select(
            custom_id=custom_ids.history("pick", key, str(page)),
            placeholder="A past conversation…",
            options=options or [discord.SelectOption(label="-", value="-")],
            row=0,
        )
        super().__init__(select)
        self.key = key

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction)

    async def clicked(self, interaction: BotInteraction) -> None:
        values = data_of(interaction).get("values") or []
        if values and history.is_session_name(values[0]):
            await picked(interaction, self.key, values[0])


class HistoryPage(BridgeItem[discord.ui.Button], template=custom_ids.HISTORY_PAGE_TEMPLATE):
    needs = WATCH

    def __init__(
        self, key: str, page: int | str, label: str = "Next ▶", enabled: bool = True
    ) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label,
            custom_id=custom_ids.history("page", key, str(page)),
            disabled=not enabled,
            row=1,
        )
        super().__init__(button)
        self.key, self.page = key, int(page)

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction)

    async def clicked(self, interaction: BotInteraction) -> None:
        project = project_by_key(interaction.client.sessions, self.key)
        if project is None:
            await interaction.response.send_message("That project is gone.", ephemeral=True)
            return
        await interaction.response.defer()
        content, view = await listing(project, self.page)
        await interaction.edit_original_response(content=content, view=view)


class ResumeButton(BridgeItem[discord.ui.Button], template=custom_ids.HISTORY_RESUME_TEMPLATE):
    def __init__(self, key: str, session: str) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label="Resume in a thread",
            style=discord.ButtonStyle.success,
            custom_id=custom_ids.history("resume", key, session),
        )
        super().__init__(button)
        self.key, self.session = key, session

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction)

    async def clicked(self, interaction: BotInteraction) -> None:
        if history.is_session_name(self.session):
            await resume(interaction, self.key, self.session)
