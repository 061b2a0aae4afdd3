"""``/audit``: the audit trail's recent entries (``state/audit.py``), to the owner only, as an
ephemeral answer; filtered by session (a channel or thread) and by user. Also what the bot
adds to the trail itself: each slash command that changes something, once it has run.

What the entries hold came partly from users and the model (a command's options, a tool's
command, a file name): shown in a code block with its backticks replaced, so nothing in them
can end the block, mention anyone or become a link.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from discord import app_commands

from bridge.bot.client import BotInteraction, BridgeClient, owner_only
from bridge.state import audit

OWNER_AUDIT = "Only this bridge's owner can read the audit trail."
# Commands that only show something: not worth a line in the trail.
READ_ONLY = {
    "status",
    "peek",
    "usage",
    "diff",
    "project list",
    "schedule list",
    "sessions",
    "history",
    "preview",
    "audit",
}
SHOWN = 20  # entries in one answer
LIMIT = 1900  # characters of the answer (Discord's 2000, with the block's fences)
_ID = re.compile(r"\d{15,21}")


def register(bot: BridgeClient) -> None:
    bot.tree.add_command(audit_command)
    bot.listen("app_command_completion", command_done)


async def _owner(interaction: BotInteraction) -> bool:
    return await owner_only(interaction, OWNER_AUDIT)


@app_commands.command(name="audit", description="Who did what: the audit trail's recent entries")
@app_commands.describe(
    session="only this channel's or thread's session (#channel, or its id)",
    user="only what this user did (@user, or their id)",
)
@app_commands.check(_owner)
async def audit_command(
    interaction: BotInteraction, session: str | None = None, user: str | None = None
) -> None:
    wanted = {"session": session, "user": user}
    ids = {key: _id_in(value) for key, value in wanted.items() if value}
    if any(found is None for found in ids.values()):
        await interaction.response.send_message(
            "Name the session as #channel or an id, the user as @user or an id.", ephemeral=True
        )
        return
    rt = interaction.client.runtime
    entries = await asyncio.to_thread(audit.recent, rt, SHOWN, ids.get("session"), ids.get("user"))
    await interaction.response.send_message(render(entries), ephemeral=True)


def _id_in(text: str) -> str | None:
    found = _ID.search(text)
    return found[0] if found else None


def render(entries: list[dict]) -> str:
    """Newest first, one line each, in a code block that nothing inside can end."""
    if not entries:
        return "No audit entries match."
    lines: list[str] = []
    size = 0
    for entry in entries:
        line = describe(entry).replace("`", "ˋ")
        if size + len(line) + 1 > LIMIT:
            break
        lines.append(line)
        size += len(line) + 1
    return "```\n" + "\n".join(lines) + "\n```"


def describe(entry: dict) -> str:
    """``2026-11-29 05:20 decision by alice (…) in #…: Bash `git push` → allow (discord)``."""
    when = str(entry.get("time", "")).replace("T", " ")[:16]
    who = f"{entry.get('name') or '?'} ({entry.get('user')})" if entry.get("user") else "-"
    kind = entry.get("kind")
    where = f"#{entry.get('session')}" if entry.get("session") else ""
    if kind == "decision":
        what = (
            f"{entry.get('tool') or entry.get('prompt')} {entry.get('subject') or ''} → "
            f"{entry.get('outcome')}"
            + (f" ({entry['scope']})" if entry.get("scope") else "")
            + f" via {entry.get('via')}"
        )
    elif kind == "message":
        what = f"typed {entry.get('length')} characters" + (
            f": {entry['text']}" if entry.get("text") else ""
        )
    elif kind == "command":
        what = f"/{entry.get('command')} {entry.get('options') or ''}"
    else:
        what = f"{entry.get('item')} {entry.get('custom_id') or ''}"
    text = " ".join(f"{when} {kind} {who} {where} {what}".split())
    return text[:300]


async def command_done(interaction: BotInteraction, command: Any) -> None:
    """A slash command ran (discord.py's ``app_command_completion``): in the trail unless it
    only shows something. A ``text`` option (a prompt) goes in as its length unless the config
    asks for text."""
    name = getattr(command, "qualified_name", "")
    if not name or name in READ_ONLY:
        return
    bot = interaction.client
    options = {}
    for key, value in vars(interaction.namespace).items():
        if key == "text" and not bot.cfg.audit_text and isinstance(value, str):
            options[key] = f"({len(value)} characters)"
        else:
            options[key] = str(getattr(value, "id", value))
    shown = " ".join(f"{key}={value}" for key, value in sorted(options.items()))
    await asyncio.to_thread(
        audit.record,
        bot.runtime,
        "command",
        user=str(interaction.user.id),
        name=interaction.user.name,
        session=str(interaction.channel_id or ""),
        command=name,
        options=shown or None,
    )
