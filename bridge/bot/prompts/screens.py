"""No dead ends: a Claude Code screen no hook reports, offered on Discord as a prompt.

Folder trust for a new project, the bypass-permissions warning, an API key approval, "Switch
model?", MCP server approvals: while such a screen is up nothing can be typed. When a message
meets one (and no Discord prompt of ours covers it, such as a PermissionRequest hook's), the
message is held (``bridge.state.held_messages``) and the screen is posted to the channel: its
question, one button per option, **Show screen** and **Escape**.

A click is the owner's answer: the screen is read again and the keys are pressed only if it
is the same dialog (its fingerprint is in the button's ``custom_id``). Then, once the input box
is back, the held messages are typed in order and get their ✅; a next screen is offered the same
way; if Claude Code exited, the held messages are dropped with a notice. Everything a click
needs is in its ``custom_id`` or on disk, so prompts posted before a bot restart still work.
"""

from __future__ import annotations

import asyncio
import logging

import discord

from bridge.agents import Screen
from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem
from bridge.claude.dialogs import Dialog
from bridge.config.roles import APPROVE
from bridge.discord import custom_ids
from bridge.discord.render.outcome import closed_content
from bridge.sessions import pane_ops, screen_keys
from bridge.sessions.manager import SessionManager
from bridge.sessions.pane_input import DialogOnScreen, NoInputBox
from bridge.state import decisions, held_messages, runtime
from bridge.tmux import TmuxError

log = logging.getLogger(__name__)

HEADER = "🖥️ **Claude Code is asking in the terminal**"
MAX_OPTIONS = 20  # four rows of five buttons; the fifth row holds Show screen and Escape
LABEL_LIMIT = 80  # Discord's button label limit
COVER_WAIT = 1.5  # seconds a hook gets to post its own prompt for a dialog it reports
SHOW_LIMIT = 1900
STALE = "This screen is no longer on display in the terminal: nothing was pressed."


def register(bot: BridgeClient) -> None:
    """The buttons of a screen offered on Discord (the offers are ``bot.screens``')."""
    bot.add_dynamic_items(ScreenButton)


class ScreenButton(BridgeItem[discord.ui.Button], template=custom_ids.SCREEN_TEMPLATE):
    needs = APPROVE
    wraps_component = True  # one per option of the dialog on screen

    def __init__(self, button: discord.ui.Button, key: str, fingerprint: str, action: str) -> None:
        super().__init__(button)
        self.key = key
        self.fingerprint = fingerprint
        self.action = action

    async def clicked(self, interaction: BotInteraction) -> None:
        await interaction.client.screens.on_click(
            interaction, self.key, self.fingerprint, self.action
        )


class ScreenPrompts:
    """Offers Claude Code's screens on Discord and answers them from clicks."""

    def __init__(self, sessions: SessionManager, rt: runtime.Runtime) -> None:
        self.sessions = sessions
        self.runtime = rt

    # --- a message meets a screen (the relay; the caller holds the session's lock) -----------

    async def offer(self, key: str, message: discord.Message, prompt: str, err: NoInputBox) -> bool:
        """Hold ``message`` and post the screen as a prompt. False when there is nothing to
        offer (no readable dialog, or a Discord prompt of ours covers it): the caller replies
        as before."""
        reader = self._reader(key)
        if not isinstance(err, DialogOnScreen) or reader.read_dialog(err.screen) is None:
            return False
        if await self._covered(key):
            return False
        pane_id = await self.sessions.live_pane(key)
        screen = await asyncio.to_thread(self.sessions.tmux.capture, pane_id) if pane_id else ""
        dialog = reader.read_dialog(screen)
        if dialog is None:
            return False
        record = await asyncio.to_thread(held_messages.load, self.runtime, key)
        if record.get("fingerprint") != dialog.fingerprint or not record.get("prompt_message_id"):
            try:
                await self._post(key, message.channel, dialog)
            except discord.HTTPException as err:
                log.warning("could not offer the screen of %s: %s", key, err)
                return False
        else:
            await _reply(message, "📥 Held: it will be typed once the screen above is answered.")
        await asyncio.to_thread(
            held_messages.hold, self.runtime, key, str(message.id), str(message.channel.id), prompt
        )
        return True

    def _reader(self, key: str) -> Screen:
        return self.sessions.agent_of(key).screen

    async def _covered(self, key: str) -> bool:
        """A prompt of ours (a hook's) is open in this channel or thread: the dialog is
        answered through it. A hook may still be posting it: give it a moment."""
        for attempt in range(2):
            prompts = await asyncio.to_thread(decisions.open_prompts, self.runtime)
            if any(p.channel_id == key for p in prompts):
                return True
            if attempt == 0:
                await asyncio.sleep(COVER_WAIT)
        return False

    async def _post(self, key: str, channel: discord.abc.Messageable, dialog: Dialog) -> None:
        label = self.sessions.agent_of(key).label
        posted = await channel.send(
            content=prompt_content(dialog, label), view=prompt_view(key, dialog)
        )
        record = held_messages.load(self.runtime, key)
        record.update(fingerprint=dialog.fingerprint, prompt_message_id=str(posted.id))
        await asyncio.to_thread(held_messages.save, self.runtime, key, record)
        log.info(
            "screen %s of %s offered on Discord (%d options)",
            dialog.fingerprint,
            key,
            len(dialog.options),
        )

    # --- clicks ------------------------------------------------------------------------------

    async def on_click(
        self, interaction: BotInteraction, key: str, fingerprint: str, action: str
    ) -> None:
        if str(interaction.channel_id) != key:
            await _ephemeral(interaction, STALE)
            return
        pane_id = await self.sessions.live_pane(key)
        if pane_id is None:
            label = self.sessions.agent_of(key).label
            await _ephemeral(interaction, f"{label} is not running here any more.")
            return
        if action == "show":
            text = await asyncio.to_thread(pane_ops.peek, self.sessions.tmux, pane_id)
            shown = text[-SHOW_LIMIT:].replace("```", "ˋˋˋ")
            await _ephemeral(interaction, f"```\n{shown}\n```")
            return
        channel = interaction.channel
        # Acknowledged at once: the session's lock may be held by a message being typed.
        await interaction.response.defer()
        async with self.sessions.lock(key):
            try:
                line = await self._press(interaction, key, pane_id, fingerprint, action)
            except TmuxError as err:  # the pane went away under the click
                await _followup(interaction, f"Nothing was pressed: {err}")
                return
            except screen_keys.ScreenChanged as err:
                log.info("screen click on %s refused: %s", key, err)
                screen = await asyncio.to_thread(self.sessions.tmux.capture, pane_id)
                still = self._reader(key).read_dialog(screen)
                if still is not None and still.fingerprint == fingerprint:
                    await _followup(interaction, f"Nothing was confirmed: {err}.")
                    return
                line = f"⚠️ {STALE}"
            if line is None:
                return  # a checkbox ticked: the prompt shows the dialog as it is now
            original = interaction.message.content if interaction.message else HEADER
            await interaction.edit_original_response(
                content=closed_content(original, line), view=None
            )
            await asyncio.to_thread(self._forget_prompt, key)
            if isinstance(channel, discord.abc.Messageable):
                await self._resume(key, pane_id, fingerprint, channel)

    async def _press(
        self, interaction: BotInteraction, key: str, pane_id: str, fingerprint: str, action: str
    ) -> str | None:
        """Press what the click asks for; the line the closed prompt gets, or None when the
        prompt stays open (a checkbox of a multi-select list, refreshed in place)."""
        tmux = self.sessions.tmux
        keys = self.sessions.keys(key, pane_id, screen_answer=True)
        who = interaction.user.mention
        if action == "esc":
            await asyncio.to_thread(screen_keys.escape, keys, fingerprint)
            return f"⎋ **Escape** pressed by {who}"
        index = int(action[1:])
        option = await asyncio.to_thread(screen_keys.choose, keys, fingerprint, index)
        if option.toggles:  # a checkbox: the same dialog, ticked or unticked
            dialog = await asyncio.to_thread(
                screen_keys.after_toggle,
                tmux,
                pane_id,
                fingerprint,
                index,
                option.label,
                keys.screen,
            )
            if dialog is not None:
                await interaction.edit_original_response(
                    content=prompt_content(dialog, keys.agent.label),
                    view=prompt_view(key, dialog),
                )
                return None
        return f"✅ **{_plain(option.label)}**, chosen by {who}"

    def _forget_prompt(self, key: str) -> None:
        """The posted prompt is closed: a next message meeting a screen posts a new one."""
        record = held_messages.load(self.runtime, key)
        if record.pop("prompt_message_id", None) is not None:
            held_messages.save(self.runtime, key, record)

    async def _resume(
        self, key: str, pane_id: str, fingerprint: str, channel: discord.abc.Messageable
    ) -> None:
        """After an answer: type the held messages once the box is back, or offer the next
        screen, or say that Claude Code exited."""
        outcome = await asyncio.to_thread(
            screen_keys.settle,
            self.sessions.tmux,
            pane_id,
            fingerprint,
            screen_keys.SETTLE_TIMEOUT,
            self._reader(key),
        )
        record = held_messages.load(self.runtime, key)
        held = record["messages"]
        if outcome.state == "dialog":
            dialog = self._reader(key).read_dialog(outcome.screen)
            if dialog is not None and not await self._covered(key):
                await self._post(key, channel, dialog)
            return
        if outcome.state == "gone":
            await asyncio.to_thread(held_messages.clear, self.runtime, key)
            self.sessions.on_change()
            if held:
                label = self.sessions.agent_of(key).label
                await _send(
                    channel,
                    f"⚠️ {label} exited; {len(held)} held message(s) were "
                    "not typed. Send a message to start it again.",
                )
            return
        if outcome.state != "ready":
            return  # still busy with something: the next message or click picks it up
        await self._type_held(key, pane_id, channel)

    async def _type_held(self, key: str, pane_id: str, channel: discord.abc.Messageable) -> None:
        try:
            await self.type_held(key, pane_id, channel)
        except NoInputBox as err:
            screen = err.screen if isinstance(err, DialogOnScreen) else ""
            dialog = self._reader(key).read_dialog(screen) if screen else None
            if dialog is not None and not await self._covered(key):
                await self._post(key, channel, dialog)
            else:
                await _send(channel, f"⚠️ {err}")

    async def type_held(self, key: str, pane_id: str, channel: discord.abc.Messageable) -> None:
        """Type the messages held for ``key``, in order, each getting its ✅; raises
        :class:`NoInputBox` (the rest still held) when a screen is up again. The relay calls
        this before typing a new message, so a held message is never overtaken. The caller
        holds the session's lock."""
        held = held_messages.load(self.runtime, key)["messages"]
        while held:
            item = held[0]
            await self.sessions.type_prompt(key, pane_id, str(item.get("prompt", "")))
            held = held[1:]
            if held:
                await asyncio.to_thread(held_messages.save, self.runtime, key, {"messages": held})
            else:
                await asyncio.to_thread(held_messages.clear, self.runtime, key)
            self.sessions.touch(key)
            log.info("typed held message %s into %s", item.get("id"), key)
            await _react(channel, item)


def prompt_content(dialog: Dialog, label: str = "Claude Code") -> str:
    question = dialog.question.replace("```", "ˋˋˋ") or "(no text above the options)"
    header = HEADER.replace("Claude Code", label)
    return (
        f"{header}; nothing can be typed until it is answered. Your message is held and will be "
        f"typed once it is.\n```\n{question}\n```"
    )


def prompt_view(key: str, dialog: Dialog) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for index, option in enumerate(dialog.options[:MAX_OPTIONS]):
        label = f"{option.number}. {option.label}" if option.number is not None else option.label
        highlighted = index == dialog.selected
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            style=discord.ButtonStyle.primary if highlighted else discord.ButtonStyle.secondary,
            label=label[:LABEL_LIMIT],
            custom_id=custom_ids.screen(key, dialog.fingerprint, f"o{index}"),
            row=index // 5,
        )
        view.add_item(ScreenButton(button, key, dialog.fingerprint, f"o{index}"))
    for label, action, style in (
        ("Show screen", "show", discord.ButtonStyle.secondary),
        ("Escape", "esc", discord.ButtonStyle.danger),
    ):
        button = discord.ui.Button(
            style=style,
            label=label,
            custom_id=custom_ids.screen(key, dialog.fingerprint, action),
            row=4,
        )
        view.add_item(ScreenButton(button, key, dialog.fingerprint, action))
    return view


def _plain(text: str) -> str:
    return discord.utils.escape_markdown(text)[:200]


async def _react(channel: discord.abc.Messageable, item: dict) -> None:
    message_id = str(item.get("id", ""))
    if not message_id.isdigit() or not hasattr(channel, "get_partial_message"):
        return
    try:
        await channel.get_partial_message(int(message_id)).add_reaction("✅")
    except discord.HTTPException as err:
        log.warning("could not react to %s: %s", message_id, err)


async def _send(channel: discord.abc.Messageable, text: str) -> None:
    try:
        await channel.send(text)
    except discord.HTTPException as err:
        log.warning("could not post to %s: %s", getattr(channel, "id", "?"), err)


async def _reply(message: discord.Message, text: str) -> None:
    try:
        await message.reply(text, mention_author=False)
    except discord.HTTPException as err:
        log.warning("could not reply to %s: %s", message.id, err)


async def _ephemeral(interaction: BotInteraction, text: str) -> None:
    await interaction.response.send_message(text, ephemeral=True)


async def _followup(interaction: BotInteraction, text: str) -> None:
    await interaction.followup.send(text, ephemeral=True)
