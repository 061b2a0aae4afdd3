"""What a bot's buttons, selects, modals and slash commands can reach, and who may use them.

``BridgeClient`` declares every part the bot holds, typed; ``app.BridgeBot`` (its only
subclass) builds them all in its ``__init__``, then each feature module's ``register(bot)``
adds its items, commands and listeners. Callbacks take a ``BotInteraction``, so
``interaction.client.sessions`` and the like are typed, without the callback modules importing
``app.py`` (which imports them: a circle). The parts that callbacks reach are described here
as protocols, met by the classes in ``bot/prompts/interactions.py``, ``bot/turn/progress.py``,
``bot/control/threads.py``, ``bot/control/panel.py``, ``bot/prompts/screens.py``,
``bot/changes/review.py`` and ``bot/away/scheduler.py``; a click reaches them only through the check
below, so they do not check again.

:func:`allowed` is the one check every interaction passes, for the action it needs
(``watch``, ``drive``, ``approve``: a :class:`BridgeItem` names its ``needs``, a slash
command's is in :data:`COMMAND_ACTIONS`): the owner and ``allowedUserIds`` may do all, a
member what the ``roles`` of the server and the project grant (:func:`grant`); everyone else
gets :data:`REFUSED` (a member with some role: what they may not do), ephemeral, and nothing
changes.
A reaction on a prompt (✅ / ❌) is no interaction: :func:`may_react` asks the same of it.
It runs before any callback: a button or select is a :class:`BridgeItem` (discord.py calls its
``interaction_check`` first and drops the click on False), a slash command or autocomplete
passes the command tree's check (``commands.BridgeCommandTree``), a modal submit and a click
no item receives pass it in ``bot/prompts/interactions.py``. :func:`owner_only` narrows it to the
owner (``/project``). :func:`target_of` is how a message, command or click finds the session of its
channel.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, ClassVar, Protocol, Self, TypeVar

import discord
from discord import app_commands

from bridge.config import BridgeConfig, Project, Server
from bridge.config.roles import APPROVE, DRIVE, WATCH
from bridge.sessions.manager import SessionManager
from bridge.sessions.targets import SessionTarget
from bridge.state import audit, runtime
from bridge.state.schedules import Schedule

log = logging.getLogger(__name__)

REFUSED = "Only this bridge's owner and its allowed users can do that."
OWNER_ONLY = "Only this bridge's owner can add, remove or list projects."


class PromptAnswers(Protocol):
    """Clicks, selects and modal submits on prompt messages, and reactions on them
    (``interactions.PromptAnswerer``)."""

    async def on_button(self, interaction: BotInteraction, rid: str, action: str) -> None: ...

    async def on_select(
        self,
        interaction: BotInteraction,
        rid: str,
        action: str,
        values: list[str],
    ) -> None: ...

    async def on_modal(self, interaction: BotInteraction, custom_id: str) -> None: ...

    async def on_reaction(
        self, client: BridgeClient, payload: discord.RawReactionActionEvent
    ) -> None: ...


class Interrupter(Protocol):
    """⏹ Interrupt on a status message (``progress.ProgressReporter``)."""

    async def interrupt(self, interaction: BotInteraction, key: str) -> None: ...


class WorktreeDecider(Protocol):
    """Remove anyway / Keep on a kept worktree, Stop / Remove worktree / Keep after an archive
    that was not the owner's, and the thread events behind them (``threads.ThreadEvents``)."""

    async def decide(self, thread_id: str, action: str) -> str: ...

    async def decide_archive(self, thread_id: str, action: str) -> str: ...

    async def on_raw_thread_update(self, payload: discord.RawThreadUpdateEvent) -> None: ...

    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None: ...


class PanelActions(Protocol):
    """A click on the control panel, and its message deleted (``panel.ControlPanel``)."""

    async def act(self, interaction: BotInteraction, action: str, arg: str) -> None: ...

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None: ...


class ScreenAnswers(Protocol):
    """A click on a Claude Code screen offered on Discord (``screens.ScreenPrompts``)."""

    async def on_click(
        self, interaction: BotInteraction, key: str, fingerprint: str, action: str
    ) -> None: ...


class ReviewDesk(Protocol):
    """Line comments on a diff, gathered into a draft review (``review.Reviews``): the file
    select a diff's answer carries (``bot/changes/diff.py``)."""

    def file_picker(self, key: str, view: Any) -> discord.ui.View | None: ...


class ScheduledPrompts(Protocol):
    """What ``/schedule`` and its list's buttons reach (``scheduler.Scheduler``): an entry
    run now, and entries changed on disk (the runner looks again, the panel refreshes)."""

    def run_now(self, entry: Schedule) -> bool: ...

    def changed(self) -> None: ...


class AwayActions(Protocol):
    """A usage limit's and a reached budget's buttons, and the panel's lines about them
    (``away.AwayWatch``)."""

    async def on_limit_click(self, interaction: BotInteraction, key: str, action: str) -> None: ...

    async def on_budget_click(self, interaction: BotInteraction, key: str, action: str) -> None: ...

    def summary_lines(self) -> list[str]: ...


class QueueActions(Protocol):
    """Queued prompts (``queue.PromptQueue``): ``/queue`` adds one, a click on a queued
    message's Send now / Interrupt and send / Cancel acts on it."""

    async def add(
        self, key: str, prompt: str, source: str, message_id: str | None, author: str | None
    ) -> dict: ...

    def notice_text(self, key: str, number: int | None = None) -> str: ...

    async def held_notices(self, key: str) -> None: ...

    async def noticed(self, key: str, entry: dict, notice: discord.Message | None) -> None: ...

    async def dropped(self, key: str, entries: list[dict], text: str) -> None: ...

    async def on_steer_click(
        self, interaction: BotInteraction, action: str, key: str, message_id: str
    ) -> None: ...

    async def on_click(
        self, interaction: BotInteraction, action: str, key: str, entry_id: str
    ) -> None: ...


class LateMessages(Protocol):
    """▶ Send now / ✖ Drop on a message sent while the bot was away (``catchup.CatchUp``)."""

    async def on_click(
        self, interaction: BotInteraction, action: str, key: str, message_id: int
    ) -> None: ...


class StallActions(Protocol):
    """Peek / Keep waiting / Restart and resume on a stall notice (``stalls.StallWatch``)."""

    async def on_click(self, interaction: BotInteraction, action: str, key: str) -> None: ...


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
    reviews: ReviewDesk
    schedules: ScheduledPrompts

    away: AwayActions
    queue: QueueActions
    stalls: StallActions
    catch_up: LateMessages
    tree: app_commands.CommandTree[BridgeClient]

    def __init__(self, **options: Any) -> None:
        self.feature_listeners: dict[str, list[Handler]] = {}  # before discord.py may dispatch
        super().__init__(**options)

    def listen(self, event: str, handler: Handler) -> None:
        """Call ``handler`` on each gateway ``event`` (``"raw_thread_delete"``: what an
        ``on_raw_thread_delete`` method would get), after the client's own ``on_<event>``."""
        self.feature_listeners.setdefault(event, []).append(handler)

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        super().dispatch(event, *args, **kwargs)
        # As ext.commands.Bot runs its listeners: each a task, its errors through on_error.
        for handler in self.feature_listeners.get(event, ()):
            self._schedule_event(handler, "on_" + event, *args, **kwargs)


BotInteraction = discord.Interaction[BridgeClient]  # what every callback of the bot receives
Handler = Callable[..., Coroutine[Any, Any, None]]  # a listener: the event's arguments


def data_of(interaction: BotInteraction) -> Mapping[str, Any]:
    """The interaction's raw ``data`` (``custom_id``, ``values``, ``components``), or ``{}``:
    discord.py types it as a union of payload shapes, read here as the mapping it is."""
    return interaction.data or {}


# What each slash command needs (by its qualified name); any other needs ``drive``.
COMMAND_ACTIONS = {
    "status": WATCH,
    "peek": WATCH,
    "diff": WATCH,
    "usage": WATCH,
    "history": WATCH,
    "schedule list": WATCH,
    "finish": APPROVE,
}


def grant(client: BridgeClient, user: object, action: str, channel: object | None) -> str | None:
    """Why ``user`` (a ``Member`` carries its roles; a ``User`` has none) may do ``action`` in
    ``channel``'s project: "owner", "allowedUserIds" or "role <id>"; None: they may not. What
    the audit trail records as who decided."""
    project = project_of(client, channel)
    return client.server.grant(getattr(user, "id", ""), role_ids(user), action, project)


def role_ids(user: object) -> list[str]:
    """The Discord role ids a ``Member`` has (an interaction's, a message's or a reaction's
    member brings them: no privileged intent needed); a ``User`` has none."""
    return [str(role.id) for role in getattr(user, "roles", ())]


def project_of(client: BridgeClient, channel: object | None) -> Project | None:
    target = target_of(client.sessions, channel)
    return target.project if target is not None else None


def refusal_for(client: BridgeClient, user: object, action: str, channel: object | None) -> str:
    """What a refused user is told: :data:`REFUSED`, or to a member who may watch here, which
    action their roles lack."""
    if action == WATCH or grant(client, user, WATCH, channel) is None:
        return REFUSED
    project = project_of(client, channel)
    return f"You may not {action} in {project.name if project else 'this channel'}."


async def allowed(interaction: BotInteraction, action: str = DRIVE) -> bool:
    """True if this user may do ``action`` here (the reason kept in ``interaction.extras
    ["grant"]``); otherwise refuse (ephemeral) and say False."""
    client, user, channel = interaction.client, interaction.user, interaction.channel
    reason = grant(client, user, action, channel)
    if reason is not None:
        interaction.extras["grant"] = reason
        return True
    if interaction.type is discord.InteractionType.autocomplete:
        await interaction.response.autocomplete([])  # no message can answer a suggestion
    else:
        text = refusal_for(client, user, action, channel)
        await interaction.response.send_message(text, ephemeral=True)
    log.info("refused %s (%s) from %s", _what(interaction), action, user.id)
    return False


def command_action(interaction: BotInteraction) -> str:
    """The action a slash command (or its autocomplete) needs: :data:`COMMAND_ACTIONS`."""
    name = getattr(interaction.command, "qualified_name", "")
    return COMMAND_ACTIONS.get(name, DRIVE)


def may_react(client: BridgeClient, payload: discord.RawReactionActionEvent) -> bool:
    """Whether a reaction may act on a prompt. A reaction is no interaction (discord.py runs no
    check for it), so this is :func:`allowed` for it, asked explicitly: the same check, for
    ``approve`` (the owner, ``allowedUserIds``, ``roles``), never the bot itself, and only on
    this bot's own messages (a reaction on another bot's is not its to act on). Nobody is
    told of a refusal: a reaction has no reply, and it changes nothing."""
    me = client.user.id if client.user else None
    if payload.user_id == me:
        return False
    if payload.message_author_id is not None and payload.message_author_id != me:
        return False
    channel = client.get_channel(payload.channel_id)
    if grant(client, payload.member or _Someone(payload.user_id), APPROVE, channel):
        return True
    log.info("ignored %s on %s from %s", payload.emoji, payload.message_id, payload.user_id)
    return False


async def owner_only(interaction: BotInteraction, refusal: str = OWNER_ONLY) -> bool:
    """:func:`allowed`, and the owner only: what gives Claude Code a directory of this machine
    (``/project``) or prompts it unattended (``/schedule``) is the owner's, not
    ``allowedUserIds``'; they get ``refusal`` (default :data:`OWNER_ONLY`)."""
    if not await allowed(interaction):
        return False
    if str(interaction.user.id) == interaction.client.server.owner_id:
        return True
    await interaction.response.send_message(refusal, ephemeral=True)
    log.info("refused %s from %s: not the owner", _what(interaction), interaction.user.id)
    return False


class _Someone:
    """A user known by id only (a reaction outside a guild carries no member)."""

    def __init__(self, user_id: int) -> None:
        self.id = user_id


def _what(interaction: BotInteraction) -> str:
    command = getattr(interaction.command, "qualified_name", None)
    return f"/{command}" if command else str(data_of(interaction).get("custom_id", "?"))


ItemT = TypeVar("ItemT", bound=discord.ui.Item[Any], covariant=True)


class BridgeItem(discord.ui.DynamicItem[ItemT], template=r"(?!)"):
    """A button or select the bot answers by its ``custom_id``, before and after a restart.

    A subclass names its template (``bridge/discord/custom_ids.py``: ``*_TEMPLATE``), whose
    named groups are its constructor's keyword arguments: a click on a matching id builds the
    item from them (:meth:`from_custom_id`), discord.py runs :meth:`interaction_check` and,
    only on True, the item's callback, which runs its :meth:`clicked`. An item drawn from
    elsewhere (a prompt's or a screen's rendered buttons: ``wraps_component``) also gets the
    component as the message shows it, first. (The base's template matches nothing: it is never
    registered.)
    """

    wraps_component: ClassVar[bool] = False
    needs: ClassVar[str] = DRIVE  # the action a click needs (bridge/config/roles.py)

    # discord.py's hooks (interaction_check, callback, from_custom_id) take ``Interaction[Any]``
    # here: discord.py types them as generic over the client, so an override taking
    # ``BotInteraction`` is narrower than its base (mypy's ``override`` error, kept on for
    # bot/). The items are registered on a ``BridgeClient`` only (each module's
    # ``register(bot)``), so what reaches them is a ``BotInteraction``: ``clicked`` is typed so.

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        """Who may click: :func:`allowed` for :attr:`needs` (a refusal is answered there)."""
        return await allowed(interaction, self.needs)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        _audit_click(interaction, type(self).__name__)
        await self.clicked(interaction)

    async def clicked(self, interaction: BotInteraction) -> None:
        """What a click does (each subclass says): only a click the check let through."""
        raise NotImplementedError

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> Self:
        build: Any = cls  # each subclass's constructor takes its own template's groups
        fields = match.groupdict()
        return build(item, **fields) if cls.wraps_component else build(**fields)


def _audit_click(interaction: BotInteraction, item: str) -> None:
    """A click the check let through, in the audit trail (``state/audit.py``): written by a
    worker thread, not waited for (the click's answer is due within 3 s)."""
    record = functools.partial(
        audit.record,
        interaction.client.runtime,
        "component",
        user=str(interaction.user.id),
        name=interaction.user.name,
        session=str(interaction.channel_id or ""),
        item=item,
        custom_id=str(data_of(interaction).get("custom_id", "")),
    )
    asyncio.get_running_loop().run_in_executor(None, record)


def target_of(sessions: SessionManager, channel: object) -> SessionTarget | None:
    """The session a Discord channel or thread object maps to (None when unmapped)."""
    channel_id = getattr(channel, "id", None)
    if channel_id is None:
        return None
    if isinstance(channel, discord.Thread):
        return sessions.target_for(channel_id, channel.parent_id, channel.name)
    return sessions.target_for(channel_id)


# --- the session a slash command is used in, and what it says when it has none ---

# Also what another machine's bot says in this bot's channels: each bot's commands show
# everywhere in the guild, only the bot whose channel it is acts (README "Several machines").
UNMAPPED = (
    "This channel is not one of this bot's projects (use a project's channel or a thread in "
    "it; with a bridge per machine, use the commands of the bot whose channel this is)."
)


def not_running(agent_label: str) -> str:
    """What a command needing a running session says when there is none."""
    return f"No {agent_label} is running here; /start or send a message first."


async def target_here(interaction: BotInteraction) -> SessionTarget | None:
    """The session of the channel or thread a command is used in; None (after saying so)
    when it has none."""
    target = target_of(interaction.client.sessions, interaction.channel)
    if target is None:
        await interaction.response.send_message(UNMAPPED, ephemeral=True)
    return target
