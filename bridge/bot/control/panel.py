"""The control panel in ``generalChannelId``: one message, edited in place.

It lists every project and thread session (stopped / idle / working / waiting for you, model,
permission mode, worktree, last activity) with Start / Stop per project and Refresh. The
message id is kept in the runtime dir, so a bot restart edits the same message; it is posted
again only if it was deleted. Refreshes are debounced and skipped when nothing changed, so
the panel stays within Discord's (tight) edit rate limits. Buttons are ``DynamicItem``s with
``db:panel:`` custom ids (``bridge/discord/custom_ids.py``), so they work after a restart;
only the owner and ``allowedUserIds`` may use them (``BridgeItem``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord

from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem, data_of
from bridge.claude.model_names import session_model
from bridge.discord import custom_ids
from bridge.sessions import pane_ops
from bridge.sessions.start_failed import ClaudeDidNotStart
from bridge.sessions.targets import SessionTarget
from bridge.state import session_record, session_state
from bridge.state.decisions import open_prompts

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 1.0  # state changes within this window make one edit
PERIODIC_SECONDS = 30.0  # re-read working/idle even without events (edits only on change)
BUTTON_ROWS = 4  # projects shown as button rows; more → a select menu (row 5 is Refresh)
SELECT_MAX = 25  # options per select menu; more projects → pages
ICONS = {"stopped": "⚫", "idle": "🟢", "working": "🟡", "waiting for you": "🔔"}
MODE_NAMES = {"default": "manual", "acceptEdits": "accept edits", "bypassPermissions": "bypass"}


def register(bot: BridgeClient) -> None:
    """The panel's buttons and select (answered also without a panel: they say so); its
    message deleted → posted again."""
    bot.add_dynamic_items(PanelButton, PanelSelect)
    if bot.panel is not None:
        bot.listen("raw_message_delete", bot.panel.on_raw_message_delete)


@dataclass
class Row:
    """One session as the panel shows it."""

    target: SessionTarget
    status: str
    mode: str
    model: str
    worktree: str | None
    last_activity: float | None
    usage: str = ""  # ``ctx 12% · $0.43 · 5h 23%`` (bot/away/usage.py)


class ControlPanel:
    def __init__(self, client: discord.Client, sessions: SessionManager, channel_id: str) -> None:
        self.client = client
        self.sessions = sessions
        self.runtime = sessions.runtime
        self.channel_id = channel_id
        self.message_id: str | None = None
        self.page = 0
        self.unknown_worktrees: list[str] = []
        # Lines of other features below the sessions (scheduled prompts…): each called in a
        # worker thread on every refresh, "" when it has nothing to show.
        self.sections: list[Callable[[], str]] = []
        self._dirty = asyncio.Event()
        self._edit_lock = asyncio.Lock()
        self._shown: tuple | None = None
        self._task: asyncio.Task | None = None

    # --- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Show the panel (edit the stored message, or post one) and keep it current."""
        self.unknown_worktrees = await asyncio.to_thread(self.sessions.unknown_worktrees)
        if self.unknown_worktrees:
            log.warning("unknown worktrees (not deleted): %s", ", ".join(self.unknown_worktrees))
        self.message_id = session_state.load_panel(self.runtime, self.channel_id).get("message_id")
        # The loop first: if this first refresh fails (Discord unreachable for a moment), the
        # next state change or the periodic refresh still shows the panel.
        self._task = asyncio.create_task(self._loop())
        await self.refresh(force=True)

    def request_refresh(self) -> None:
        self._dirty.set()

    async def act(self, interaction: BotInteraction, action: str, arg: str) -> None:
        """A click on this panel (its user already allowed), acknowledged before any slow
        work (Discord allows 3 s)."""
        sessions = self.sessions
        target = sessions.target_for(arg) if action in ("start", "stop", "stopnow") else None
        if action in ("start", "stop", "stopnow") and target is None:
            await interaction.response.send_message(
                "That project is no longer configured.", ephemeral=True
            )
            return
        if action == "stop" and target is not None and await _mid_turn(sessions, arg):
            view = discord.ui.View(timeout=None)
            view.add_item(PanelButton("stopnow", arg, "Stop anyway"))
            await interaction.response.send_message(
                f"Claude is in the middle of a turn in **{target.label}**. Stop it anyway?",
                view=view,
                ephemeral=True,
            )
            return
        await interaction.response.defer()
        if action == "page":
            self.page = int(arg)
        try:
            if target is not None and action == "start":
                async with sessions.lock(target.key):
                    await sessions.ensure_running(target)
            elif target is not None and action in ("stop", "stopnow"):
                async with sessions.lock(target.key):
                    await sessions.stop(target.key)
                if action == "stopnow":
                    await interaction.edit_original_response(
                        content=f"Stopped **{target.label}**.", view=None
                    )
        except ClaudeDidNotStart as err:  # logged by the session manager
            await interaction.followup.send(err.discord_text()[:1900], ephemeral=True)
        except Exception as err:
            log.exception("panel %s %s failed", action, arg)
            await interaction.followup.send(f"⚠️ {action} failed: {err}"[:1900], ephemeral=True)
        await self.refresh(force=action in ("refresh", "page"))

    async def _loop(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._dirty.wait(), PERIODIC_SECONDS)
            except TimeoutError:
                pass
            await asyncio.sleep(DEBOUNCE_SECONDS)
            self._dirty.clear()
            try:
                await self.refresh()
            except Exception:
                log.exception("control panel refresh failed")

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        if self.message_id and str(payload.message_id) == self.message_id:
            self.message_id = None  # deleted: the next refresh posts a new one
            await self.refresh(force=True)

    async def refresh(self, force: bool = False) -> None:
        """Edit the panel if what it shows changed (or ``force``); post it if it is gone."""
        async with self._edit_lock:
            rows = await self.rows()
            sections = await asyncio.to_thread(self._sections)
            content = render(rows, self.unknown_worktrees, sections)
            view = panel_view([r for r in rows if r.target.thread_id is None], self.page)
            shown = (content, repr(view.to_components()))
            if shown == self._shown and not force:
                return
            channel = self.client.get_partial_messageable(int(self.channel_id))
            if self.message_id is not None:
                try:
                    await channel.get_partial_message(int(self.message_id)).edit(
                        content=content, view=view
                    )
                    self._shown = shown
                    return
                except discord.NotFound:
                    log.info("control panel message %s is gone; posting a new one", self.message_id)
            message = await channel.send(content, view=view)
            self.message_id = str(message.id)
            await asyncio.to_thread(
                session_state.save_panel,
                self.runtime,
                self.channel_id,
                {"message_id": self.message_id},
            )
            self._shown = shown

    # --- what it shows ---------------------------------------------------------------

    async def rows(self) -> list[Row]:
        return await asyncio.to_thread(self._rows)

    def _sections(self) -> list[str]:
        shown = []
        for section in self.sections:
            try:
                shown.append(section())
            except Exception:
                log.exception("control panel section failed")
        return [text for text in shown if text]

    def _rows(self) -> list[Row]:
        sessions = self.sessions
        panes = {p.channel_id: p for p in sessions.tmux.panes()}
        records = {
            r["key"]: r
            for r in session_state.all_records(self.runtime)
            if r.get("server") == sessions.server.name
        }
        waiting = waiting_channels(self.runtime)
        rows = []
        for project in sessions.server.projects:
            targets = [SessionTarget.for_project(project)]
            for key, record in records.items():
                if record.get("project") == project.name and record.get("thread_id"):
                    target = sessions.target_for_key(key)
                    if target is not None and (key in panes or record.get("wanted") == "running"):
                        targets.append(target)
            for target in targets:
                rows.append(
                    self._row(target, panes.get(target.key), records.get(target.key), waiting)
                )
        return rows

    def _row(self, target: SessionTarget, pane: Any, record: dict | None, waiting: set) -> Row:
        record = record or {}
        mode = target.permission or "default"
        if pane is None or pane.dead:
            status = "stopped"
        else:
            seen = pane_ops.glance(self.sessions.tmux, pane.pane_id)
            mode = seen.mode or mode
            if target.key in waiting:
                status = "waiting for you"
            else:
                status = "working" if seen.busy else "idle"
        worktree = (record.get("worktree") or {}).get("name")
        from bridge.bot.away.usage import compact_line, session_status

        live = session_status(self.runtime, target.key)
        model = session_model(record.get("model") or target.model, live)
        return Row(
            target,
            status,
            mode,
            model,
            worktree,
            last_activity(self.runtime, target.key, record),
            compact_line(live),
        )


def waiting_channels(rt: Any) -> set[str]:
    """Channels and threads with an open prompt (a decision the owner has not made yet)."""
    try:
        return {str(p.channel_id) for p in open_prompts(rt)}
    except Exception:
        log.exception("could not read open prompts")
        return set()


def last_activity(rt: Any, key: str, record: dict) -> float | None:
    """The latest of: a prompt typed by the bridge, and the transcript's last write."""
    times = [record.get("last_activity") or 0.0]
    transcript = (session_record.read_record(rt, key) or {}).get("transcript_path")
    if isinstance(transcript, str):
        try:
            times.append(os.stat(transcript).st_mtime)
        except OSError:
            pass
    latest = max(times)
    return latest or None


def render(rows: list[Row], unknown_worktrees: list[str], sections: Sequence[str] = ()) -> str:
    """The panel's text (≤ 2000 characters). Timestamps are Discord's relative ``<t:…:R>``,
    so the text changes only when something really changed."""
    lines = ["**Claude Code sessions**"]
    for row in rows:
        name = discord.utils.escape_markdown(
            row.target.thread_name or row.target.key
            if row.target.thread_id
            else row.target.project.name
        )
        prefix = "  ↳ " if row.target.thread_id else ""
        parts = [f"{prefix}{ICONS[row.status]} **{name}**", row.status]
        if row.status != "stopped":
            parts += [row.model, MODE_NAMES.get(row.mode, row.mode)]
            if row.usage:
                parts.append(row.usage)
        if row.worktree:
            parts.append(f"worktree `{row.worktree}`")
        if row.last_activity:
            parts.append(f"active <t:{int(row.last_activity)}:R>")
        lines.append(" · ".join(parts))
    if unknown_worktrees:
        lines.append(
            "⚠️ Worktrees no session knows (not deleted): "
            + ", ".join(f"`{p}`" for p in unknown_worktrees[:10])
        )
    lines.extend(sections)
    text = "\n".join(lines)
    return text if len(text) <= 2000 else text[:1997] + "…"


def panel_view(rows: list[Row], page: int) -> discord.ui.View:
    """Start / Stop per project: a row of buttons each while they fit, else a select menu
    (with pages past 25 projects); Refresh last."""
    view = discord.ui.View(timeout=None)
    if len(rows) <= BUTTON_ROWS:
        for i, row in enumerate(rows):
            running = row.status != "stopped"
            name = row.target.project.name[:60]
            view.add_item(PanelButton("start", row.target.key, f"▶ Start {name}", not running, i))
            view.add_item(PanelButton("stop", row.target.key, f"■ Stop {name}", running, i))
        view.add_item(PanelButton("refresh", "0", "🔄 Refresh", True, BUTTON_ROWS))
        return view
    pages = (len(rows) + SELECT_MAX - 1) // SELECT_MAX
    page = min(page, pages - 1)
    options = [
        discord.SelectOption(
            label=f"{'Stop' if row.status != 'stopped' else 'Start'} {row.target.project.name}"[
                :100
            ],
            value=f"{'stop' if row.status != 'stopped' else 'start'}:{row.target.key}",
        )
        for row in rows[page * SELECT_MAX : (page + 1) * SELECT_MAX]
    ]
    view.add_item(PanelSelect(page, options))
    if pages > 1:
        view.add_item(PanelButton("page", str(max(page - 1, 0)), "◀ Previous", page > 0, 1))
        view.add_item(
            PanelButton("page", str(min(page + 1, pages - 1)), "Next ▶", page < pages - 1, 1)
        )
    view.add_item(PanelButton("refresh", "0", "🔄 Refresh", True, 1))
    return view


class PanelButton(BridgeItem[discord.ui.Button], template=custom_ids.PANEL_TEMPLATE):
    def __init__(
        self, action: str, arg: str, label: str = "", enabled: bool = True, row: int | None = None
    ) -> None:
        style = {
            "start": discord.ButtonStyle.success,
            "stop": discord.ButtonStyle.danger,
            "stopnow": discord.ButtonStyle.danger,
        }.get(action, discord.ButtonStyle.secondary)
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label or action,
            style=style,
            custom_id=custom_ids.panel(action, arg),
            disabled=not enabled,
            row=row,
        )
        super().__init__(button)
        self.action = action
        self.arg = arg

    async def clicked(self, interaction: BotInteraction) -> None:
        await act(interaction, self.action, self.arg)


class PanelSelect(BridgeItem[discord.ui.Select], template=custom_ids.PANEL_PICK_TEMPLATE):
    def __init__(self, page: int | str, options: list[discord.SelectOption] | None = None) -> None:
        select: discord.ui.Select[discord.ui.View] = discord.ui.Select(
            custom_id=custom_ids.panel_pick(int(page)),
            placeholder="Start or stop a project…",
            options=options or [discord.SelectOption(label="-", value="refresh:0")],
            row=0,
        )
        super().__init__(select)

    async def clicked(self, interaction: BotInteraction) -> None:
        values = data_of(interaction).get("values") or []
        action, _, arg = (values[0] if values else "refresh:0").partition(":")
        if action in ("start", "stop", "refresh") and arg.isdigit():
            await act(interaction, action, arg)


async def act(interaction: BotInteraction, action: str, arg: str) -> None:
    """A panel click, acted on only while this bot shows a panel."""
    panel = interaction.client.panel
    if panel is None:
        await interaction.response.send_message("The control panel is not running.", ephemeral=True)
        return
    await panel.act(interaction, action, arg)


async def _mid_turn(sessions: SessionManager, key: str) -> bool:
    pane_id = await sessions.live_pane(key)
    if pane_id is None:
        return False
    seen = await asyncio.to_thread(pane_ops.glance, sessions.tmux, pane_id)
    return seen.busy
