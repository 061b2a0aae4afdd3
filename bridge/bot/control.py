"""Wiring of the parallel-session parts into one bot: thread events and worktree buttons,
the control panel, and the slash commands. ``app.py`` calls :func:`setup` from its
``setup_hook`` and forwards the thread and message-delete events."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from bridge.bot.commands import build_tree, sync
from bridge.bot.panel import ControlPanel, PanelButton, PanelSelect
from bridge.bot.threads import ThreadEvents, WorktreeButton

log = logging.getLogger(__name__)


async def setup(bot: Any) -> None:
    """Attach ``bot.threads``, ``bot.panel`` (None without ``generalChannelId``) and
    ``bot.tree``; start the panel and the worktree watcher in the background."""
    bot.threads = ThreadEvents(bot, bot.sessions)
    bot.sessions.notify = bot.threads.notify
    bot.add_dynamic_items(WorktreeButton, PanelButton, PanelSelect)  # work after a restart
    bot.panel = None
    channel = bot.server.general_channel_id
    if channel:
        bot.panel = ControlPanel(bot, bot.sessions, channel)
        bot.sessions.on_change = bot.panel.request_refresh
    bot.tree = build_tree(bot, bot.sessions)
    try:
        await sync(bot.tree, bot.server.guild_id)
    except Exception:
        log.exception("%s: could not register the slash commands", bot.server.name)
    bot.control_tasks = [asyncio.create_task(bot.threads.watch_worktrees())]
    if bot.panel is not None:
        bot.control_tasks.append(asyncio.create_task(_start_panel(bot.panel)))


async def start_sessions(bot: Any) -> None:
    """At bot start: close sessions of threads archived or deleted meanwhile, then bring
    back the others and start ``startup: true`` projects and threads."""
    try:
        await bot.threads.reconcile()
    except Exception:
        log.exception("%s: could not check threads closed while the bot was away", bot.server.name)
    await bot.sessions.start_startup_projects()


async def _start_panel(panel: ControlPanel) -> None:
    try:
        await panel.start()
    except Exception:
        log.exception("could not show the control panel in %s", panel.channel_id)
