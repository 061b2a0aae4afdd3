"""``/sessions``: every Claude Code and Codex session in a tmux pane on this machine, and
**Adopt**.

The list (``bridge/sessions/machine.py``: the user's tmux servers, each pane's process tree)
is read when asked, never polled: one line per session with its state (working / idle /
dialog open), directory, tmux pane and project; a select menu (25 per page, ◀ ▶ for more)
picks one. Picking shows what adopting it would do, with **Adopt**: a new thread in its
project's channel becomes that session (``bridge/sessions/adoption.py``): messages there are
typed into its pane, its hooks post there. An unmapped directory gets the ``/project add``
line to map it first. The thread's first message has **Release**, which gives the session
back untouched (``/stop`` in the thread does the same). Owner only, as ``/project``: adopting
hands a pane of this machine to Discord. Answers are ephemeral; ids survive a restart
(``db:ms:…``, ``bridge/discord/custom_ids.py``). A Codex is adopted when the pane says which
conversation it shows (``bridge/sessions/machine_codex.py``); its thread runs Codex's screen.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bridge.agents import agent_for
from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem, data_of, owner_only
from bridge.discord import custom_ids
from bridge.sessions import adoption, machine
from bridge.sessions.targets import SessionTarget
from bridge.state import adoptions, locations

if TYPE_CHECKING:
    from bridge.config import Project
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

PAGE = 25  # options of one select menu
TEXT_LIMIT = 1900
ICONS = {"working": "🟡", "idle": "🟢", "dialog open": "🔔", "starting": "⚪", "unknown": "⚪"}
NO_HOOKS = (
    "⚠️ The bridge's hooks are not in this session's `~/.claude/settings.json`: replies and "
    "permission prompts will not reach Discord until you run `discord-bridge hooks install` "
    "(Claude Code picks them up from its next prompt)."
)


def register(bot: BridgeClient) -> None:
    """``/sessions`` and its select, page, Adopt and Release items."""
    bot.tree.add_command(sessions_command)
    bot.add_dynamic_items(SessionPick, SessionPage, AdoptButton, ReleaseButton)


@app_commands.command(
    name="sessions", description="Claude Code and Codex sessions on this machine: adopt"
)
@app_commands.check(owner_only)  # the owner's, not allowedUserIds' (as /project)
async def sessions_command(interaction: BotInteraction) -> None:
    await interaction.response.defer(ephemeral=True, thinking=True)
    content, view = await listing(interaction.client.sessions, 0)
    await interaction.followup.send(content, view=view, ephemeral=True)


# --- the list --------------------------------------------------------------------------


async def scan() -> list[machine.FoundSession]:
    found = await asyncio.to_thread(machine.scan)
    return sorted(found, key=lambda s: (s.bridge, s.cwd, s.socket, s.pane_id))


async def listing(sessions: SessionManager, page: int) -> tuple[str, discord.ui.View]:
    found = await scan()
    pages = max(1, (len(found) + PAGE - 1) // PAGE)
    page = min(max(page, 0), pages - 1)
    shown = found[page * PAGE : (page + 1) * PAGE]
    head = f"**{len(found)} {names(found)} session{'s' if len(found) != 1 else ''} in tmux**"
    if pages > 1:
        head += f" · page {page + 1}/{pages}"
    lines = [describe_line(sessions, s) for s in shown]
    view = discord.ui.View(timeout=None)
    if not found:
        return head + "\nNone found in this user's tmux servers.", view
    text = head
    for i, line in enumerate(lines):
        if len(text) + len(line) + 1 > TEXT_LIMIT:
            text += f"\n… and {len(lines) - i} more in the menu"
            break
        text += "\n" + line
    options = [option(sessions, s) for s in shown]
    view.add_item(SessionPick(page, options))
    if pages > 1:
        view.add_item(SessionPage(max(page - 1, 0), "◀ Previous", page > 0))
        view.add_item(SessionPage(min(page + 1, pages - 1), "Next ▶", page < pages - 1))
    return text, view


def names(found: list[machine.FoundSession]) -> str:
    """Which agents the list holds, by name ("Claude Code" while it holds no Codex)."""
    return "Claude Code and Codex" if any(s.agent == "codex" for s in found) else "Claude Code"


def label(found: machine.FoundSession) -> str:
    return agent_for(found.agent).label


def project_of(sessions: SessionManager, found: machine.FoundSession) -> Project | None:
    return sessions.cfg.project_for_cwd(found.cwd)


def owner_of(sessions: SessionManager, found: machine.FoundSession) -> str:
    """Who serves it now: the bridge (a pane it started), a thread (adopted), or nobody."""
    if found.bridge:
        return "bridge session"
    record = adoptions.lookup(sessions.runtime, found.session_id)
    if record is not None and not record.get("released"):
        return f"adopted in <#{record['key']}>"
    if adopted_elsewhere(sessions, found.session_id):
        return "adopted by another bridge bot of this machine"
    return ""


def adopted_elsewhere(sessions: SessionManager, session_id: str | None) -> bool:
    """Another bot of this machine holds the session: a running one with a config of its own
    routes its hooks (``try``'s, ``run --config``'s), or, seen from such a bot, the bridge
    home's bot adopted it (its record is in the dirs it recorded in the home)."""
    elsewhere = adoptions.routed_to(session_id)
    if elsewhere and elsewhere != sessions.config_path:
        return True
    if not adoptions.routes_needed(sessions.config_path):
        return False
    recorded = locations.home_bot_dirs()
    if recorded is None or recorded.state_root == sessions.runtime.state_root:
        return False  # no home bot ever ran, or this is it (run --config shares its dirs)
    record = adoptions.lookup(recorded, session_id)
    return record is not None and not record.get("released")


def describe_line(sessions: SessionManager, found: machine.FoundSession) -> str:
    project = project_of(sessions, found)
    parts = [
        f"{ICONS.get(found.state, '⚪')} {found.state}",
        *(["Codex"] if found.agent == "codex" else []),
        f"**{discord.utils.escape_markdown(project.name)}**" if project else "no project",
        f"`{found.cwd}`",
        f"tmux `{os.path.basename(found.socket)}` {found.where}",
    ]
    if not found.hooks:
        parts.append("⚠️ hooks not installed")
    if owner := owner_of(sessions, found):
        parts.append(owner)
    return " · ".join(parts)


def option(sessions: SessionManager, found: machine.FoundSession) -> discord.SelectOption:
    project = project_of(sessions, found)
    label = f"{project.name if project else 'no project'} · {os.path.basename(found.cwd) or '/'}"
    where = f"{found.state} · tmux {os.path.basename(found.socket)} {found.where} · {found.cwd}"
    return discord.SelectOption(label=label[:100], value=found.token, description=where[:100])


# --- pick, adopt, release --------------------------------------------------------------


async def picked(interaction: BotInteraction, token: str) -> None:
    """What adopting this session would do, with **Adopt** when it can be."""
    sessions = interaction.client.sessions
    await interaction.response.defer(ephemeral=True, thinking=True)
    found = await asyncio.to_thread(machine.find, token)
    view = discord.ui.View(timeout=None)
    if found is None:
        text = "That session is no longer running."
    else:
        text = describe_line(sessions, found)
        project = project_of(sessions, found)
        if found.bridge or owner_of(sessions, found):
            text += "\nIt already has a channel or thread here."
        elif found.session_id is None:
            codex = found.agent == "codex"
            text += "\n" + (adoption.CODEX_NO_SESSION_ID if codex else adoption.NO_SESSION_ID)
        elif project is None:
            text += (
                f"\nIts directory is no project of this bridge. Map it first: "
                f"`/project add path:{found.cwd}`, then `/sessions` again."
            )
        else:
            text += f"\n**Adopt** opens a thread in <#{project.channel_id}> for it."
            if not found.hooks:
                text += "\n" + no_hooks(found)
            view.add_item(AdoptButton(found.token))
    await interaction.followup.send(text[:2000], view=view, ephemeral=True)


async def adopt(interaction: BotInteraction, token: str) -> None:
    sessions = interaction.client.sessions
    await interaction.response.defer(ephemeral=True, thinking=True)
    found = await asyncio.to_thread(machine.find, token)
    project = project_of(sessions, found) if found is not None else None
    if found is None or project is None or found.bridge or owner_of(sessions, found):
        await interaction.followup.send(
            "Not adopted: that session has ended, moved or is served already; `/sessions` "
            "shows what runs now.",
            ephemeral=True,
        )
        return
    channel = interaction.client.get_channel(int(project.channel_id))
    if not isinstance(channel, discord.TextChannel):
        await interaction.followup.send("Its project's channel is not reachable.", ephemeral=True)
        return
    name = f"adopted · {os.path.basename(found.cwd) or found.cwd}"[:100]
    try:
        thread = await channel.create_thread(name=name, type=discord.ChannelType.public_thread)
    except discord.HTTPException as err:
        await interaction.followup.send(f"⚠️ Could not open a thread: {err}", ephemeral=True)
        return
    key = str(thread.id)
    # the thread runs the adopted CLI's screen, whichever agent its project starts
    target = replace(SessionTarget.for_thread(project, key, name, None), agent=found.agent)
    try:
        async with sessions.lock(key):
            await asyncio.to_thread(
                adoption.adopt,
                sessions.runtime,
                found,
                sessions.server.name,
                project.name,
                project.channel_id,
                key,
                target.thread_name,
                sessions.config_path,
            )
    except (adoption.CannotAdopt, OSError, ValueError) as err:
        await interaction.followup.send(f"⚠️ {err}", ephemeral=True)
        return
    await sessions.register_thread(target)
    sessions.on_change()
    log.info("adopted %s (pid %s, %s) into thread %s", found.address, found.pid, found.cwd, key)
    await thread.send(welcome(found), view=release_view(key))
    await interaction.followup.send(f"Adopted into {thread.mention}.", ephemeral=True)


def welcome(found: machine.FoundSession) -> str:
    text = (
        f"🔗 Adopted the {label(found)} running in tmux `{os.path.basename(found.socket)}` "
        f"{found.where} (`{found.cwd}`). What you write here is typed into it; its replies, "
        "progress and prompts come here. **Release** gives it back untouched."
    )
    return text if found.hooks else text + "\n" + no_hooks(found)


def no_hooks(found: machine.FoundSession) -> str:
    if found.agent != "codex":
        return NO_HOOKS
    return (
        "⚠️ The bridge's hooks are not in this Codex's `$CODEX_HOME/hooks.json`: replies and "
        "permission requests will not reach Discord until you run `discord-bridge hooks "
        "install` and restart it (Codex reads and reviews its hooks when it starts)."
    )


def release_view(key: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(ReleaseButton(key))
    return view


async def release(interaction: BotInteraction, key: str) -> None:
    sessions = interaction.client.sessions
    async with sessions.lock(key):
        was = await asyncio.to_thread(adoption.release, sessions.runtime, key)
    sessions.on_change()
    if was is None:
        await interaction.response.send_message("Nothing is adopted here.", ephemeral=True)
        return
    log.info("released %s from thread %s", was.get("address"), key)
    agent = agent_for("codex" if was.get("agent") == "codex" else None).label
    await interaction.response.send_message(
        f"↩️ Released: the {agent} in tmux {was.get('where')} keeps running, no longer "
        "linked to this thread."
    )


# --- the items -------------------------------------------------------------------------


class SessionPick(BridgeItem[discord.ui.Select], template=custom_ids.SESSIONS_PICK_TEMPLATE):
    def __init__(self, page: int | str, options: list[discord.SelectOption] | None = None) -> None:
        select: discord.ui.Select[discord.ui.View] = discord.ui.Select(
            custom_id=custom_ids.sessions("pick", str(page)),
            placeholder="Adopt a session…",
            options=options or [discord.SelectOption(label="-", value="0-0")],
            row=0,
        )
        super().__init__(select)

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction)

    async def clicked(self, interaction: BotInteraction) -> None:
        values = data_of(interaction).get("values") or []
        token = values[0] if values else ""
        if custom_ids.is_session_token(token):
            await picked(interaction, token)


class SessionPage(BridgeItem[discord.ui.Button], template=custom_ids.SESSIONS_PAGE_TEMPLATE):
    def __init__(self, page: int | str, label: str = "Next ▶", enabled: bool = True) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label,
            custom_id=custom_ids.sessions("page", str(page)),
            disabled=not enabled,
            row=1,
        )
        super().__init__(button)
        self.page = int(page)

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction)

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.response.defer()
        content, view = await listing(interaction.client.sessions, self.page)
        await interaction.edit_original_response(content=content, view=view)


class AdoptButton(BridgeItem[discord.ui.Button], template=custom_ids.SESSIONS_ADOPT_TEMPLATE):
    def __init__(self, token: str) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label="Adopt",
            style=discord.ButtonStyle.success,
            custom_id=custom_ids.sessions("adopt", token),
        )
        super().__init__(button)
        self.token = token

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction)

    async def clicked(self, interaction: BotInteraction) -> None:
        await adopt(interaction, self.token)


class ReleaseButton(BridgeItem[discord.ui.Button], template=custom_ids.SESSIONS_RELEASE_TEMPLATE):
    def __init__(self, key: str) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label="Release",
            style=discord.ButtonStyle.secondary,
            custom_id=custom_ids.sessions("release", key),
        )
        super().__init__(button)
        self.key = key

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction)

    async def clicked(self, interaction: BotInteraction) -> None:
        await release(interaction, self.key)
