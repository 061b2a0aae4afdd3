"""``/preview [port|url]``: screenshots of the web app a session serves, and **Send to Claude**.

Without an argument, the page is the lowest loopback port the session's processes listen on
(its pane's process tree, read from ``/proc``: ``bridge/preview/ports.py``); an argument is
a port or a loopback http(s) URL, anything else refused (``bridge/preview/address.py``), and
the message says whose program serves it when that is not the session's.
A headless Chromium loads it at a phone's and a desktop's size (``bridge/preview/browser.py``,
in a worker thread, within 20 s); the channel gets both screenshots, the HTTP status, the
title and the console errors. One preview at a time per session.

**Send to Claude** (the owner's) saves the message's screenshots into the session's uploads
directory, as a Discord attachment is saved (``downloads.py``), and types "Here is how the
page looks now" with their paths and the errors, through the input box and the key gate as
any message.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from typing import Any

import aiohttp
import discord
from discord import app_commands

from bridge.bot.client import (
    UNMAPPED,
    BotInteraction,
    BridgeClient,
    BridgeItem,
    not_running,
    owner_only,
    target_here,
)
from bridge.bot.downloads import save_attachments
from bridge.bot.prompt_text import compose_prompt, defuse_prefix
from bridge.discord import custom_ids
from bridge.preview import browser
from bridge.preview.address import NotLoopback, preview_url
from bridge.preview.ports import listening_ports, whose
from bridge.sessions.manager import SessionManager
from bridge.sessions.pane_input import NoInputBox
from bridge.sessions.start_failed import ClaudeDidNotStart
from bridge.sessions.typed_text import sanitize_prompt
from bridge.tmux import TmuxError

log = logging.getLogger(__name__)

HEAD = "🖼️ Preview of "
NOTE = "-# "  # lines of the message that are for the owner, not the model
BUSY = "⏳ A preview of this session is loading already: wait for it."
NO_PORT = (
    "No process of this session listens on a TCP port of 127.0.0.1, [::1] or all addresses "
    "(one on another 127.x.y.z is not shown: 127.0.0.1 there may be another program). Start "
    "the app's server in the session (or give `/preview <port>`)."
)
OWNER_SENDS = "Only this bridge's owner can send a preview to Claude."
PROMPT_LEAD = "Here is how the page looks now (phone and desktop screenshots attached): "
_loading: set[str] = set()  # sessions whose preview is loading (one at a time each)


def register(bot: BridgeClient) -> None:
    bot.tree.add_command(preview)
    bot.add_dynamic_items(SendToClaude)


@app_commands.command(
    name="preview", description="Screenshots of the web app this session serves on this machine"
)
@app_commands.describe(
    target="A port (5173) or a URL of 127.0.0.1 / localhost; default: the "
    "port the session's processes listen on"
)
async def preview(interaction: BotInteraction, target: str | None = None) -> None:
    session = await target_here(interaction)
    if session is None:
        return
    url = None
    if target:
        try:
            url = preview_url(target)
        except NotLoopback as err:
            await interaction.response.send_message(str(err), ephemeral=True)
            return
    key = session.key
    if key in _loading:
        await interaction.response.send_message(BUSY, ephemeral=True)
        return
    _loading.add(key)
    try:
        await interaction.response.defer(thinking=True)
        answer = await _preview(interaction.client.sessions, key, url)
        try:
            await interaction.followup.send(**answer)
        except discord.HTTPException as err:  # e.g. the screenshots refused: say so, in text
            log.warning("could not post the preview in %s: %s", key, err)
            await interaction.followup.send(f"⚠️ The preview could not be posted: {err.text}")
    finally:
        _loading.discard(key)


async def _preview(sessions: SessionManager, key: str, url: str | None) -> dict:
    """What the channel is answered: the screenshots and what the page said, or why not."""
    if url is None:
        url, note = await session_url(sessions, key)
        if url is None:
            return {"content": note}
    else:
        note = await asyncio.to_thread(whose, url, await _session_pid(sessions, key))
    started = time.monotonic()
    try:
        shot = await asyncio.to_thread(browser.capture, url)
    except (browser.NoBrowser, browser.LoadFailed) as err:
        return {"content": str(err)}
    except Exception as err:
        log.exception("preview of %s in %s failed", url, key)
        return {"content": f"⚠️ The preview failed: {_short(err)}"}
    files = [
        discord.File(io.BytesIO(png), filename=f"preview-{name}.png")
        for name, png in shot.shots.items()
    ]
    view = discord.ui.View(timeout=None)
    view.add_item(SendToClaude(key))
    log.info(
        "previewed %s for %s in %.1f s: HTTP %s, %d console errors",
        url,
        key,
        time.monotonic() - started,
        shot.status,
        len(shot.errors),
    )
    return {
        "content": preview_text(shot, note),
        "files": files,
        "view": view,
        "allowed_mentions": discord.AllowedMentions.none(),
    }


async def _session_pid(sessions: SessionManager, key: str) -> int | None:
    """The process of the session's pane (None: not running)."""
    pane = await sessions.live_pane(key)
    if pane is None:
        return None
    try:
        return await asyncio.to_thread(sessions.tmux.pane_pid, pane)
    except TmuxError:
        return None


async def session_url(sessions: SessionManager, key: str) -> tuple[str | None, str]:
    """(the URL of the session's lowest listening port, a note naming the others), or
    (None, why there is none)."""
    pid = await _session_pid(sessions, key)
    if pid is None:
        return None, not_running(sessions.agent_of(key).label)
    found = await asyncio.to_thread(listening_ports, pid)
    if not found:
        return None, NO_PORT
    others = ", ".join(str(entry.port) for entry in found[1:])
    note = f"Also listening: {others} (`/preview <port>` shows one)." if others else ""
    return found[0].url, note


def preview_text(shot: browser.Capture, note: str = "") -> str:
    """The message: URL, status, title, console errors (in a code block), then the note."""
    status = f"HTTP {shot.status}" if shot.status is not None else "no HTTP status"
    title = discord.utils.escape_markdown(shot.title.replace("\n", " ")) or "(no title)"
    lines = [f"{HEAD}{shot.url} · {status} · title: {title}"]
    if shot.errors:
        shown = "\n".join(error.replace("`", "ˋ") for error in shot.errors)[:1400]
        lines += [f"Console errors ({len(shot.errors)}):", f"```\n{shown}\n```"]
    else:
        lines.append("No console errors.")
    if shot.refused:
        shown = ", ".join(f"{url[:120]} ({why[:60]})" for url, why in shot.refused.items())
        lines.append(f"{NOTE}Not loaded, another host ({len(shot.refused)}): {shown}"[:600])
    for line in (shot.note, note):
        if line:
            lines.append(NOTE + line)
    return "\n".join(lines)[:1990]


def preview_prompt(content: str, paths: list[str]) -> str:
    """The prompt **Send to Claude** types: the message's lines for the model, the files."""
    kept = [
        line for line in content.splitlines() if not line.startswith(NOTE) and line.strip() != "```"
    ]
    body = "\n".join(kept).removeprefix(HEAD)
    return defuse_prefix(compose_prompt(sanitize_prompt(PROMPT_LEAD + body), paths))


class SendToClaude(BridgeItem[discord.ui.Button], template=custom_ids.PREVIEW_TEMPLATE):
    """**Send to Claude** on a preview: the owner's only."""

    def __init__(self, key: str) -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label="Send to Claude",
            emoji="📨",
            style=discord.ButtonStyle.primary,
            custom_id=custom_ids.preview_send(key),
        )
        super().__init__(button)
        self.key = key

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        return await owner_only(interaction, OWNER_SENDS)

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        answer = await send_to_claude(interaction, self.key)
        await interaction.followup.send(answer, ephemeral=True)


async def send_to_claude(interaction: BotInteraction, key: str) -> str:
    """Save the clicked message's screenshots, type the prompt; what the owner is told."""
    client = interaction.client
    sessions, message = client.sessions, interaction.message
    target = sessions.target_for_key(key)
    if target is None:
        return UNMAPPED
    if message is None or not message.attachments:
        return "⚠️ This message holds no screenshots to send."
    directory = client.runtime.channel_dir("uploads", key)
    limit = client.cfg.download_limit
    async with aiohttp.ClientSession() as http:
        paths, failures = await save_attachments(http, message, directory, limit)
    if not paths:
        return "⚠️ The screenshots could not be fetched: " + "; ".join(failures)
    prompt = preview_prompt(message.content, paths)
    try:
        async with sessions.lock(key):
            pane = await sessions.ensure_running(target)
            await sessions.type_prompt(key, pane, prompt)
    except NoInputBox as err:
        return f"⚠️ Not sent: {err}"
    except ClaudeDidNotStart as err:
        return err.discord_text("⚠️ Not sent to Claude Code")
    except Exception as err:
        log.exception("sending the preview to %s failed", key)
        return f"⚠️ Not sent to Claude Code: {_short(err)}"
    log.info("sent a preview (%d screenshots) to %s", len(paths), target.label)
    return f"📨 Sent to Claude: {len(paths)} screenshots" + (
        f" (not fetched: {'; '.join(failures)})" if failures else ""
    )


def _short(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return (lines[0] if lines else type(err).__name__)[:300]
