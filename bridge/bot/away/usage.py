"""Usage and cost: ``/usage`` and the control panel's compact line per session.

The figures are Claude Code's own, as its statusLine command last reported them for the
session (``bridge/state/status_cache.py``: cost, context, and for Claude.ai subscriptions the
plan's 5-hour / 7-day usage with reset times), and today's total across this bridge's
sessions (``bridge/state/usage_totals.py``, kept by the statusLine command).
"""

from __future__ import annotations

import asyncio
import time
from typing import TypeGuard

import discord
from discord import app_commands

from bridge.bot.client import BotInteraction, BridgeClient, target_here
from bridge.claude.model_names import display_name
from bridge.discord.render.footer import summary
from bridge.sessions.targets import SessionTarget
from bridge.state import runtime, session_record, status_cache, usage_totals

WINDOWS = (("five_hour", "5-hour"), ("seven_day", "7-day"))
NOT_REPORTED = (
    "Plan usage: not reported. Claude Code reports the 5-hour and 7-day limits only for a "
    "Claude.ai subscription (Pro, Max, Team), and only after a reply; with an API key (or "
    "Bedrock, Vertex) there are none."
)


def register(bot: BridgeClient) -> None:
    """``/usage`` (the panel's usage line is ``bot/control/panel.py``'s, from
    :func:`compact_line`)."""
    bot.tree.add_command(usage)


def session_status(rt: runtime.Runtime, key: str) -> dict:
    """The statusLine figures of the session of channel or thread ``key`` ({} if none)."""
    session_id = (session_record.read_record(rt, key) or {}).get("session_id")
    try:
        return status_cache.read_status(rt, session_id) or {}
    except Exception:
        return {}


def compact_line(record: dict) -> str:
    """``ctx 12% · $0.43 · 5h 23% · 7d 41%`` (the panel's per-session usage); "" if unknown."""
    return summary({k: v for k, v in record.items() if k not in ("model_id", "model_name")})


def usage_text(rt: runtime.Runtime, label: str, record: dict, now: float | None = None) -> str:
    """What ``/usage`` answers for one session."""
    now = time.time() if now is None else now
    lines = [f"**{discord.utils.escape_markdown(label)}**"]
    cost, context = record.get("cost_usd"), record.get("context_percent")
    parts = []
    if _number(cost):
        parts.append(f"${cost:.2f} so far")
    if _number(context):
        parts.append(f"context {context:.0f}% used")
    model = record.get("model_name") or display_name(record.get("model_id"))
    if isinstance(model, str) and model:
        parts.append(discord.utils.escape_markdown(model[:60]))
    lines.append(
        "This session: "
        + (
            " · ".join(parts)
            if parts
            else "no figures yet (no reply since the bridge started watching it)"
        )
    )
    spent, sessions = usage_totals.total(rt, usage_totals.day(now))
    plural = "s" if sessions != 1 else ""
    lines.append(
        f"Today ({usage_totals.day(now)}): ${spent:.2f} across {sessions} session{plural}"
        " of this bridge"
    )
    lines.append(plan_text(record, now))
    return "\n".join(lines)


def budget_text(rt: runtime.Runtime, target: SessionTarget, now: float | None = None) -> str:
    """``Budget: session $1.20 of $5.00 left · today …`` for ``/usage`` ("" without a budget)."""
    from bridge.bot.away.budget_figures import budget_left

    left = budget_left(rt, target.project, target.key, now)
    return f"Budget: {left}" if left else ""


def plan_text(record: dict, now: float) -> str:
    """The plan's 5-hour and 7-day usage with reset times, or that it is not reported."""
    limits = record.get("rate_limits")
    resets = record.get("rate_limit_resets")
    limits = limits if isinstance(limits, dict) else {}
    resets = resets if isinstance(resets, dict) else {}
    parts = []
    for window, name in WINDOWS:
        used = limits.get(window)
        if not _number(used):
            continue
        text = f"{name} {used:.0f}% used"
        reset = resets.get(window)
        if _number(reset) and reset > now:
            text += f", resets <t:{int(reset)}:R> (<t:{int(reset)}:f>)"
        parts.append(text)
    return "Plan: " + "; ".join(parts) if parts else NOT_REPORTED


@app_commands.command(
    name="usage", description="Cost and context of this session, today's cost, the plan's usage"
)
async def usage(interaction: BotInteraction) -> None:
    target = await target_here(interaction)
    if target is None:
        return
    rt = interaction.client.sessions.runtime
    record = await asyncio.to_thread(session_status, rt, target.key)
    text = await asyncio.to_thread(usage_text, rt, target.label, record)
    budget = await asyncio.to_thread(budget_text, rt, target)
    text += f"\n{budget}" if budget else ""
    await interaction.response.send_message(
        text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none()
    )


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and -1e12 < value < 1e12
