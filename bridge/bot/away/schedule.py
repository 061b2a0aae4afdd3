"""``/schedule``: prompts typed into this channel's (or thread's) session later, once or
repeatedly, and ``/schedule list`` with **Run now**, **Pause** / **Resume** and **Delete**.

``/schedule at | in`` make a one-off, ``/schedule daily | weekdays | every | cron`` a
repeating prompt; times are the machine's local time and every answer names its zone
(``bridge/schedule_times.py``). Entries are files in the state dir
(``bridge/state/schedules.py``); the bot's :class:`~bridge.bot.away.scheduler.Scheduler` runs them.
A scheduled prompt runs unattended, so all of it is the owner's alone (not
``allowedUserIds``'): the commands and the buttons (``db:sch:`` custom ids, answered after a
restart too) refuse everyone else. The control panel shows what is scheduled
(:func:`panel_section`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import discord
from discord import app_commands

from bridge import schedule_times
from bridge.bot.client import (
    UNMAPPED,
    BotInteraction,
    BridgeClient,
    BridgeItem,
    owner_only,
    target_of,
)
from bridge.discord import custom_ids
from bridge.schedule_times import BadTime
from bridge.sessions.typed_text import sanitize_prompt
from bridge.state import runtime, schedules
from bridge.state.schedules import Schedule

OWNER_ONLY = "Only this bridge's owner can schedule prompts or change scheduled ones."
GONE = "That scheduled prompt is gone (deleted, or a one-off that already ran)."
LIST_BUTTONS = 5  # entries with buttons in one list (a row each; Discord allows 5 rows)
PANEL_LINES = 3  # upcoming entries the control panel names
EXCERPT = 60
START = "start the session if it is stopped (default: skip that run with a note)"


def register(bot: BridgeClient) -> None:
    """``/schedule`` and its list's buttons (the panel's section: ``app.py`` adds
    :func:`panel_section`)."""
    bot.tree.add_command(ScheduleCommands())
    bot.add_dynamic_items(ScheduleButton)


class ScheduleCommands(app_commands.Group):
    """``/schedule at | in | daily | weekdays | every | cron | list``."""

    def __init__(self) -> None:
        super().__init__(
            name="schedule", description="Prompts typed here later, once or repeatedly"
        )

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction, OWNER_ONLY)

    @app_commands.command(
        name="at", description="Once, at a local time (HH:MM or YYYY-MM-DD HH:MM)"
    )
    @app_commands.describe(
        prompt="what to type",
        time="HH:MM (today, or tomorrow once passed) or "
        "YYYY-MM-DD HH:MM, this machine's local time",
        start=START,
    )
    async def at(
        self,
        interaction: BotInteraction,
        prompt: app_commands.Range[str, 1, 4000],
        time: str,
        start: bool = False,
    ) -> None:
        await create(
            interaction,
            prompt,
            start,
            lambda now: {"kind": "once", "at": schedule_times.parse_at(time, now)},
        )

    @app_commands.command(name="in", description="Once, after a delay (45m, 2h, 1h30m, 1d)")
    @app_commands.describe(prompt="what to type", delay="45m, 2h, 1h30m, 1d…", start=START)
    async def in_(
        self,
        interaction: BotInteraction,
        prompt: app_commands.Range[str, 1, 4000],
        delay: str,
        start: bool = False,
    ) -> None:
        await create(
            interaction,
            prompt,
            start,
            lambda now: {"kind": "once", "at": now + schedule_times.parse_delay(delay)},
        )

    @app_commands.command(name="daily", description="Every day at a local time")
    @app_commands.describe(prompt="what to type", time="HH:MM, local time", start=START)
    async def daily(
        self,
        interaction: BotInteraction,
        prompt: app_commands.Range[str, 1, 4000],
        time: str,
        start: bool = False,
    ) -> None:
        await create(
            interaction,
            prompt,
            start,
            lambda now: {"kind": "daily", "time": schedule_times.parse_clock(time)},
        )

    @app_commands.command(name="weekdays", description="Monday to Friday at a local time")
    @app_commands.describe(prompt="what to type", time="HH:MM, local time", start=START)
    async def weekdays(
        self,
        interaction: BotInteraction,
        prompt: app_commands.Range[str, 1, 4000],
        time: str,
        start: bool = False,
    ) -> None:
        await create(
            interaction,
            prompt,
            start,
            lambda now: {"kind": "weekdays", "time": schedule_times.parse_clock(time)},
        )

    @app_commands.command(name="every", description="Every N hours, the first in N hours")
    @app_commands.describe(prompt="what to type", hours="1 to 168", start=START)
    async def every(
        self,
        interaction: BotInteraction,
        prompt: app_commands.Range[str, 1, 4000],
        hours: app_commands.Range[int, 1, schedule_times.MAX_HOURS],
        start: bool = False,
    ) -> None:
        await create(
            interaction,
            prompt,
            start,
            lambda now: {"kind": "hours", "hours": hours, "anchor": now + hours * 3600.0},
        )

    @app_commands.command(name="cron", description="A cron expression (5 fields, local time)")
    @app_commands.describe(
        prompt="what to type",
        expression="minute hour day month weekday, e.g. 0 9 * * 1-5",
        start=START,
    )
    async def cron(
        self,
        interaction: BotInteraction,
        prompt: app_commands.Range[str, 1, 4000],
        expression: app_commands.Range[str, 1, 200],
        start: bool = False,
    ) -> None:
        await create(
            interaction,
            prompt,
            start,
            lambda now: {"kind": "cron", "cron": schedule_times.parse_cron(expression, now)},
        )

    @app_commands.command(
        name="list", description="This session's scheduled prompts: run now, pause, delete"
    )
    async def list_(self, interaction: BotInteraction) -> None:
        content, view = await asyncio.to_thread(listing, interaction)
        await interaction.response.send_message(
            content, view=view, ephemeral=True, allowed_mentions=discord.AllowedMentions.none()
        )


async def create(interaction: BotInteraction, prompt: str, start: bool, rule_of: Any) -> None:
    """Check the prompt and the time, store the entry, say when it runs (or what is wrong:
    nothing is stored then)."""
    target = target_of(interaction.client.sessions, interaction.channel)
    if target is None:
        await interaction.response.send_message(UNMAPPED, ephemeral=True)
        return
    text = sanitize_prompt(prompt).strip()
    now = time.time()
    try:
        if not text:
            raise BadTime("The prompt is empty.")
        rule = rule_of(now)
    except BadTime as err:
        await interaction.response.send_message(f"⚠️ {err} Nothing was scheduled.", ephemeral=True)
        return
    client = interaction.client
    await client.sessions.register_thread(target)  # a new thread is listed, as a message does
    entry = Schedule(
        id=schedules.new_id(),
        server=client.server.name,
        key=target.key,
        prompt=text,
        rule=rule,
        next_run=schedule_times.next_run(rule, now),
        start=start,
        created_at=now,
        created_by=str(interaction.user.id),
    )
    await asyncio.to_thread(schedules.save, client.sessions.runtime, entry)
    client.schedules.changed()
    when = schedule_times.describe(rule, now)
    relative = f"<t:{int(entry.next_run or now)}:R>"
    if not entry.once:
        when += f": first run {schedule_times.show_moment(entry.next_run or now, now)}"
    stopped = (
        "starts the session if it is stopped"
        if start
        else "skips a run (with a note) while the session is stopped"
    )
    await interaction.response.send_message(
        f"⏰ Scheduled `{entry.id}` in **{discord.utils.escape_markdown(target.label)}**, "
        f"{when} ({relative}). It waits for Claude to be idle, {stopped}. `/schedule list` to "
        "run it now, pause or delete it.",
        ephemeral=True,
    )


def listing(interaction: BotInteraction) -> tuple[str, discord.ui.View]:
    """The list as it stands: this session's entries (every entry of this bot's where the
    channel is no project's), each with its buttons while they fit."""
    client = interaction.client
    target = target_of(client.sessions, interaction.channel)
    entries = schedules.all_entries(client.sessions.runtime, client.server.name)
    if target is not None:
        entries = [e for e in entries if e.key == target.key]
    return render_list(entries, target.label if target else None, time.time(), client.schedules)


def render_list(
    entries: list[Schedule], label: str | None, now: float, scheduler: Any = None
) -> tuple[str, discord.ui.View]:
    where = f" — {discord.utils.escape_markdown(label)}" if label else ""
    zone = schedule_times.zone_name(now)
    lines = [f"**Scheduled prompts{where}** (this machine's local time, {zone})"]
    view = discord.ui.View(timeout=None)
    if not entries:
        lines.append("None. `/schedule in`, `at`, `daily`, `weekdays`, `every` or `cron` adds one.")
    for number, entry in enumerate(entries, 1):
        lines.append(f"{number}. {entry_line(entry, now, label is None, zone)}")
        if scheduler is not None and scheduler.waiting(entry.id):
            lines.append("   running now: waiting for Claude to be idle")
        if number <= LIST_BUTTONS:
            for action, text in (
                ("run", "▶ Run now"),
                ("resume" if entry.paused else "pause", "⏵ Resume" if entry.paused else "⏸ Pause"),
                ("delete", "🗑 Delete"),
            ):
                view.add_item(ScheduleButton(action, entry.id, f"{text} {number}", number - 1))
    if len(entries) > LIST_BUTTONS:
        lines.append(f"(Buttons for the first {LIST_BUTTONS}: delete some to reach the others.)")
    text = "\n".join(lines)
    return (text if len(text) <= 2000 else text[:1997] + "…"), view


def entry_line(entry: Schedule, now: float, where: bool = False, said: str | None = None) -> str:
    """One entry of a list; ``said``: the zone the list's heading names (not repeated)."""
    prompt = " ".join(entry.prompt.split())
    prompt = prompt if len(prompt) <= EXCERPT else prompt[:EXCERPT] + "…"
    parts = [f"`{entry.id}`"]
    if where:
        parts.append(f"<#{entry.key}>")
    parts.append(schedule_times.describe(entry.rule, now, said))
    if entry.paused:
        parts.append("⏸ paused")
    elif entry.next_run is not None:
        parts.append(f"next {schedule_times.show_moment(entry.next_run, now, said)}")
    if entry.start:
        parts.append("starts the session")
    if entry.last_run:
        parts.append(f"last: {entry.last_result or '?'} <t:{int(entry.last_run)}:R>")
    return " · ".join(parts) + f"\n   > {discord.utils.escape_markdown(prompt)}"


def panel_section(rt: runtime.Runtime, server: str, now: float | None = None) -> str:
    """The control panel's lines: how many prompts are scheduled, the next few ("" if none)."""
    now = time.time() if now is None else now
    entries = schedules.all_entries(rt, server)
    if not entries:
        return ""
    paused = sum(e.paused for e in entries)
    count = f"{len(entries)}" + (f", {paused} paused" if paused else "")
    zone = schedule_times.zone_name(now)
    lines = [f"⏰ **Scheduled prompts** ({count}; local time, {zone})"]
    for entry in [e for e in entries if not e.paused and e.next_run][:PANEL_LINES]:
        rule = schedule_times.describe(entry.rule, now, zone)
        lines.append(
            f"  `{entry.id}` <#{entry.key}> {rule} · next <t:{int(entry.next_run or now)}:R>"
        )
    return "\n".join(lines)


class ScheduleButton(BridgeItem[discord.ui.Button], template=custom_ids.SCHEDULE_TEMPLATE):
    def __init__(self, action: str, sid: str, label: str = "", row: int | None = None) -> None:
        style = {"run": discord.ButtonStyle.success, "delete": discord.ButtonStyle.danger}.get(
            action, discord.ButtonStyle.secondary
        )
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label or action, style=style, custom_id=custom_ids.schedule(action, sid), row=row
        )
        super().__init__(button)
        self.action, self.sid = action, sid

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction, OWNER_ONLY)

    async def clicked(self, interaction: BotInteraction) -> None:
        client = interaction.client
        rt = client.sessions.runtime
        entry = await asyncio.to_thread(schedules.load, rt, self.sid)
        if entry is None or entry.server != client.server.name:
            await interaction.response.send_message(GONE, ephemeral=True)
            return
        if self.action == "run":
            started = client.schedules.run_now(entry)
            text = (
                f"▶ Running `{entry.id}` now in <#{entry.key}> (once Claude is idle)."
                if started
                else f"`{entry.id}` is already running."
            )
            await interaction.response.send_message(text, ephemeral=True)
            return
        await asyncio.to_thread(change, rt, entry, self.action, time.time())
        client.schedules.changed()
        content, view = await asyncio.to_thread(listing, interaction)
        await interaction.response.edit_message(content=content, view=view)


def change(rt: runtime.Runtime, entry: Schedule, action: str, now: float) -> None:
    """**Pause**, **Resume** (a repeating entry's next run: the first after now) or
    **Delete** one entry on disk."""
    if action == "delete":
        schedules.remove(rt, entry.id)
        return
    entry.paused = action == "pause"
    if not entry.paused and not entry.once:
        entry.next_run = schedule_times.next_run(entry.rule, now)
    schedules.save(rt, entry)
