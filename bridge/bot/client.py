"""What a bot's buttons, selects, modals and slash commands can reach, and who may use them.

``BridgeClient`` declares every part the bot holds, typed; ``app.BridgeBot`` (its only
subclass) builds them all in its ``__init__``. Callbacks take a
``BotInteraction``, so ``interaction.client.sessions`` and the like are
typed, without the callback modules importing ``app.py`` (which imports them: a circle). The
parts that callbacks reach are described here as protocols, met by the classes in
``interactions.py``, ``progress.py``, ``threads.py`` and ``panel.py``.

:func:`allowed` is the one check every interaction passes: only the owner and
``allowedUserIds`` act; everyone else gets :data:`REFUSED`, ephemeral, and nothing changes.
"""

from __future__ import annotations

import logging
from typing import Protocol

import discord
from discord import app_commands

from bridge.config import BridgeConfig, Server
from bridge.sessions.manager import SessionManager
from bridge.state import runtime

log = logging.getLogger(__name__)

REFUSED = "Only this bridge's owner and its allowed users can do that."


class PromptAnswers(Protocol):
    """Clicks, selects and modal submits on prompt messages (``interactions.PromptAnswerer``)."""

    async def on_button(self, interaction: BotInteraction, rid: str, action: str) -> None: ...

    async def on_select(
        self, interaction: BotInteraction, rid: str, action: str,
        values: list[str],
    ) -> None: ...  # fmt: skip

    async def on_modal(self, interaction: BotInteraction, custom_id: str) -> None: ...


class Interrupter(Protocol):
    """⏹ Interrupt on a status message (``progress.ProgressReporter``)."""

    async def interrupt(self, interaction: BotInteraction, key: str) -> None: ...


class WorktreeDecider(Protocol):
    """Remove anyway / Keep on a kept worktree, and Stop / Remove worktree / Keep after an
    archive that was not the owner's (``threads.ThreadEvents``)."""

    async def decide(self, thread_id: str, action: str) -> str: ...

    async def decide_archive(self, thread_id: str, action: str) -> str: ...


class PanelActions(Protocol):
    """A click on the control panel (``panel.ControlPanel``)."""

    async def act(self, interaction: BotInteraction, action: str, arg: str) -> None: ...


class ScreenAnswers(Protocol):
    """A click on a Claude Code screen offered on Discord (``screens.ScreenPrompts``)."""

    async def on_click(
        self, interaction: BotInteraction, key: str, fingerprint: str, action: str
    ) -> None: ...


class BridgeClient(discord.Client):
    """The Discord side of one configured server, as its callbacks see it."""

    cfg: BridgeConfig
    server: Server
    runtime: runtime.Runtime
    sessions: SessionManager
    prompts: PromptAnswers
    progress: Interrupter
    threads: WorktreeDecider
    panel: PanelActions | None  # None without ``generalChannelId``
    screens: ScreenAnswers
    tree: app_commands.CommandTree[BridgeClient]


BotInteraction = discord.Interaction[BridgeClient]  # what every callback of the bot receives


async def allowed(interaction: BotInteraction) -> bool:
    """True if this user may act on this bridge; otherwise refuse (ephemeral) and say False."""
    if interaction.client.server.may_act(interaction.user.id):
        return True
    if interaction.type is discord.InteractionType.autocomplete:
        await interaction.response.autocomplete([])  # no message can answer a suggestion
    else:
        await interaction.response.send_message(REFUSED, ephemeral=True)
    command = getattr(interaction.command, "name", None)
    what = f"/{command}" if command else (interaction.data or {}).get("custom_id", "?")
    log.info("refused %s from %s", what, interaction.user.id)
    return False
