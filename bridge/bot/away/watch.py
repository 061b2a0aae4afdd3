"""While the owner is away: a session at a usage limit resumes at the reset, a session past
its spend budget stops and asks.

The hooks note what happened in ``away/`` (state dir, ``bridge/state/away.py``; written by
``bridge/handlers/away.py``); :class:`AwayWatch` looks every :data:`TICK` and acts:

* a usage limit: "⏸ Usage limit — resumes at 16:20 (in 2 h 13 min)" with **Resume at reset**
  (on unless ``limits.autoResume`` is false), **Resume now** and **Cancel**. At the reset plus
  ``limits.resumeMarginSeconds`` it types ``limits.continuePrompt`` into the session (through
  the key gate, like any message) and edits the message to say so. Several sessions at a limit
  resume one by one, :data:`RESUME_GAP` apart. A reset time nobody gave: a try every
  :data:`POLL_UNKNOWN`, said in the message. A prompt that reached the session meanwhile (the
  owner's, or Claude Code's own continue ~80 s after the reset) ends the wait.
* a spend budget: at :data:`budget.WARN_AT` a warning in the channel; at 100 % the PreToolUse
  hook has stopped the turn, and the owner gets **Continue (+$N)** (raises the cap by
  ``budget.continueUsd`` and types the continue prompt) or **Stop**.

Everything it needs is in the files, so a bot restart or a reboot picks up where it was; the
clock is injectable (``clock``) so tests take seconds.
"""

# Statements marked `# fmt: skip` stay compact: formatted, this module would pass
# 450 lines, the size a module here is kept under.

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import discord

from bridge.bot.away.away_buttons import budget_view, limit_view
from bridge.bot.away.budget_figures import budget_left, raised_cap
from bridge.bot.client import BotInteraction
from bridge.config import BridgeConfig, Project, Server
from bridge.sessions.manager import SessionManager
from bridge.sessions.start_failed import ClaudeDidNotStart
from bridge.state import away, runtime, session_record
from bridge.state.budget import NAMES, WARN_AT, Spend
from bridge.tmux import TmuxError

log = logging.getLogger(__name__)

TICK = 1.0  # seconds between two looks at away/
WARN_TICKS = 5  # budgets are checked for the 80 % warning every 5 ticks
EXACT_GRACE = 3.0  # seconds to wait for the statusLine's exact reset before posting without
RESUME_GAP = 20.0  # seconds between the resumes of two sessions at a limit
POLL_UNKNOWN = 15 * 60.0  # a reset time nobody gave: try again this often
# After such a try, the limit met again within this long is said in the same message
TRY_SETTLE = 10 * 60.0
RETRY_TYPING = 60.0  # seconds before another try when the continue prompt could not be typed


class AwayWatch:
    """Usage-limit waits and reached budgets of one configured server's sessions."""

    def __init__(
        self,
        bot: discord.Client,
        cfg: BridgeConfig,
        server: Server,
        sessions: SessionManager,
        rt: runtime.Runtime,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.bot = bot
        self.cfg = cfg
        self.server = server
        self.sessions = sessions
        self.runtime = rt
        self.clock = clock
        self.last_resume = 0.0  # clock time of the latest resume (RESUME_GAP apart)
        self._shown: dict[str, str] = {}  # key → the limit message text last shown
        self._lock = asyncio.Lock()  # one tick or click at a time changes away/
        self._stop = asyncio.Event()

    # --- the loop ---------------------------------------------------------------------

    async def run(self) -> None:
        ticks = 0
        while not self._stop.is_set():
            try:
                async with self._lock:
                    await self.tick(check_budgets=ticks % WARN_TICKS == 0)
            except Exception:  # one bad file must not stop the watch
                log.exception("away watch failed; looking again")
            ticks += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), TICK)

    def stop(self) -> None:
        self._stop.set()

    async def tick(self, check_budgets: bool = True) -> None:
        """Post what is new, resume the first session that is due, warn about budgets."""
        limits = self._mine(await asyncio.to_thread(away.all_of, self.runtime, "limit"))
        due = []
        for key, record in limits.items():
            if record.get("state") == "trying":  # a try at an unknown reset: met again?
                if self.clock() >= float(record.get("tried_at") or 0) + TRY_SETTLE:
                    await asyncio.to_thread(away.remove, self.runtime, "limit", key)
                continue
            if record.get("state") == "ended":
                await self._close_limit(key, record)
                continue
            if not record.get("exact"):
                record = await asyncio.to_thread(self._exact_reset, key, record)
                hit = float(record.get("hit_at") or 0)
                if not record.get("exact") and self.clock() < hit + EXACT_GRACE:
                    continue  # the statusLine may say the exact time in a moment
            await self._show_limit(key, record)
            at = self.resume_at(record)
            if at is not None and self.clock() >= at:
                due.append((at, key))
        if due and self.clock() >= self.last_resume + RESUME_GAP:
            _, key = min(due)
            await self._resume(key, limits[key])
        stops = self._mine(await asyncio.to_thread(away.all_of, self.runtime, "budget"))
        for key, record in stops.items():
            if not record.get("message_id"):
                await self._ask_budget(key, record)
        if check_budgets:
            await self._warn_budgets()

    def _panel_changed(self) -> None:
        """The control panel lists limits and stopped budgets: have it refreshed."""
        panel = getattr(self.bot, "panel", None)
        if panel is not None and hasattr(panel, "request_refresh"):
            panel.request_refresh()

    def _mine(self, records: dict[str, dict]) -> dict[str, dict]:
        return {k: r for k, r in records.items() if r.get("server") == self.server.name}

    # --- usage limits -----------------------------------------------------------------

    def _exact_reset(self, key: str, record: dict) -> dict:
        """The statusLine often reports the reset (to the second) just after StopFailure
        wrote the wait: take it once it is there."""
        from bridge.handlers.away import reset_time

        resets_at, window, exact = reset_time(self.runtime, record.get("session"), "")
        if not exact:
            return record
        return away.update(self.runtime, "limit", key, resets_at=resets_at, window=window,
                           exact=True)  # fmt: skip

    def resume_at(self, record: dict) -> float | None:
        """When to type the continue prompt (None: not by itself)."""
        mode = record.get("mode") or ("auto" if self.cfg.auto_resume else "off")
        if record.get("state") != "waiting" or mode in ("off", "cancel"):
            return None
        if mode == "now":
            return 0.0
        if record.get("retry_at"):
            return float(record["retry_at"])
        resets = record.get("resets_at")
        if isinstance(resets, int | float):
            return float(resets) + self.cfg.resume_margin
        return float(record.get("hit_at") or 0) + POLL_UNKNOWN

    def limit_text(self, record: dict) -> str:
        """The limit message as it stands."""
        said = str(record.get("said") or "").replace("`", "'").replace("@", "@\u200b")
        quote = f"\n> {said}" if said else ""
        mode = record.get("mode") or ("auto" if self.cfg.auto_resume else "off")
        resets = record.get("resets_at")
        prompt = _quoted(self.cfg.continue_prompt)
        if isinstance(resets, int | float):
            when = f"<t:{int(resets)}:t> (<t:{int(resets)}:R>)"
            head = f"⏸ Usage limit — resumes at {when}" if mode != "off" else (
                f"⏸ Usage limit — resets at {when}")  # fmt: skip
        else:
            nxt = self.resume_at(record)
            head = "⏸ Usage limit — reset time unknown" + (
                f"; trying again every {POLL_UNKNOWN / 60:.0f} min (next <t:{int(nxt)}:R>)"
                if nxt else "")  # fmt: skip
        if mode == "off":
            tail = ("Auto-resume is off (`limits.autoResume`): **Resume at reset** types "
                    f"{prompt} then, **Resume now** at once.")  # fmt: skip
        elif mode == "cancel":
            tail = "Auto-resume cancelled: send a message when you want to go on."
        else:
            tail = f"Then I type {prompt} into the session."
        if record.get("note"):
            tail += f"\n⚠️ {record['note']}"
        return f"{head}{quote}\n{tail}"

    async def _show_limit(self, key: str, record: dict) -> None:
        text = self.limit_text(record)
        if record.get("message_id") and self._shown.get(key) == text:
            return
        channel = self.bot.get_partial_messageable(int(key))
        view = limit_view(key)
        try:
            if record.get("message_id"):
                message = channel.get_partial_message(int(record["message_id"]))
                await message.edit(content=text, view=view)
            else:
                sent = await channel.send(text, view=view)
                record = await asyncio.to_thread(
                    away.update, self.runtime, "limit", key, message_id=str(sent.id)
                )
                self._panel_changed()
        except (discord.HTTPException, ValueError) as err:
            log.warning("usage-limit message in %s: %s", key, err)
            return
        self._shown[key] = text

    async def _resume(self, key: str, record: dict) -> None:
        """Type the continue prompt into the session (started again if it is not running)."""
        self.last_resume = self.clock()
        target = self.sessions.target_for_key(key)
        if target is None:  # unmapped meanwhile
            await asyncio.to_thread(away.remove, self.runtime, "limit", key)
            return
        prompt = self.cfg.continue_prompt
        # A reset nobody gave: the limit may still be there, and the hook that notes it
        # again keeps this message (not a new one every POLL_UNKNOWN) while it says "trying"
        # (set before typing: the prompt's own hook ends only a "waiting" wait).
        unknown = not isinstance(record.get("resets_at"), int | float)
        if unknown:
            await asyncio.to_thread(
                away.update, self.runtime, "limit", key, state="trying", tried_at=self.clock()
            )
        try:
            async with self.sessions.lock(key):
                if self.sessions.target_for_key(key) is None:  # its project removed meanwhile
                    return
                pane_id = await self.sessions.ensure_running(target)
                await self.sessions.type_prompt(key, pane_id, prompt)
        except (TmuxError, ClaudeDidNotStart, OSError) as err:
            log.warning("could not resume %s after its usage limit: %s", target.label, err)
            await asyncio.to_thread(
                away.update, self.runtime, "limit", key, retry_at=self.clock() + RETRY_TYPING,
                mode="auto" if record.get("mode") == "now" else record.get("mode"),
                note=f"Could not type it yet ({_short(err)}); trying again in a minute.",
                state="waiting",
            )  # fmt: skip
            return
        await asyncio.to_thread(self.sessions.touch, key)
        log.info("resumed %s after its usage limit", target.label)
        text = (f"▶️ Usage limit over — typed {_quoted(prompt)} into the session at "
                f"<t:{int(self.clock())}:t>.")  # fmt: skip
        if unknown:
            await self._edit_limit_message(key, record, text + " If the limit is still "
                                           "there, this message says so again.")  # fmt: skip
            self._shown.pop(key, None)
            self._panel_changed()
            return
        await self._finish_limit(key, record, text)

    async def _close_limit(self, key: str, record: dict) -> None:
        """A prompt reached the session while it waited: say so, forget the wait."""
        by = str(record.get("ended_by") or "")
        if by.startswith("Your claude.ai usage limit has reset"):
            text = "▶️ Usage limit over — Claude Code continued by itself at the reset."
        else:
            text = "▶️ Usage limit over — the session got a new prompt."
        await self._finish_limit(key, record, text)

    async def _finish_limit(self, key: str, record: dict, text: str) -> None:
        await self._edit_limit_message(key, record, text)
        await asyncio.to_thread(away.remove, self.runtime, "limit", key)
        self._shown.pop(key, None)
        self._panel_changed()

    async def _edit_limit_message(self, key: str, record: dict, text: str) -> None:
        """The limit's message says ``text``, without its buttons."""
        message_id = record.get("message_id")
        if message_id:
            channel = self.bot.get_partial_messageable(int(key))
            try:
                await channel.get_partial_message(int(message_id)).edit(content=text, view=None)
            except discord.HTTPException as err:
                log.warning("usage-limit message in %s: %s", key, err)

    async def on_limit_click(self, interaction: BotInteraction, key: str, action: str) -> None:
        async with self._lock:
            record = await asyncio.to_thread(away.load, self.runtime, "limit", key)
            if not record or record.get("state") != "waiting":
                await interaction.response.send_message(
                    "This usage limit is over: nothing to do.", ephemeral=True)  # fmt: skip
                return
            record = await asyncio.to_thread(
                away.update, self.runtime, "limit", key, mode=action, retry_at=None, note=None
            )
            text = self.limit_text(record)
            await interaction.response.edit_message(content=text, view=limit_view(key))
            self._shown[key] = text
            if action == "now":
                self.last_resume = 0.0  # the owner asked: no gap to wait for
                await self.tick(check_budgets=False)

    # --- spend budgets ----------------------------------------------------------------

    async def _ask_budget(self, key: str, record: dict) -> None:
        target = self.sessions.target_for_key(key)
        if target is None:
            await asyncio.to_thread(away.remove, self.runtime, "budget", key)
            return
        more = target.project.budget.continue_usd
        which = str(record.get("which") or "session")
        text = (f"🛑 Budget reached — {NAMES.get(which, which)}: ${_usd(record.get('spent'))} "
                f"of ${_usd(record.get('cap'))}. Claude stopped before "
                f"{_tool(record.get('tool'))}. **Continue** raises the budget to what was "
                f"spent + ${more:.2f} and types {_quoted(self.cfg.continue_prompt)}; "
                "**Stop** leaves it here.")  # fmt: skip
        channel = self.bot.get_partial_messageable(int(key))
        try:
            sent = await channel.send(text, view=budget_view(key, more))
        except discord.HTTPException as err:
            log.warning("budget message in %s: %s", key, err)
            return
        await asyncio.to_thread(away.update, self.runtime, "budget", key, message_id=str(sent.id))
        self._panel_changed()

    async def on_budget_click(self, interaction: BotInteraction, key: str, action: str) -> None:
        async with self._lock:
            record = await asyncio.to_thread(away.load, self.runtime, "budget", key)
            target = self.sessions.target_for_key(key)
            if not record or record.get("state") == "stopped" or target is None:
                await interaction.response.send_message(
                    "This budget question is settled already.", ephemeral=True)  # fmt: skip
                return
            who = f"<@{interaction.user.id}>"
            if action == "stop":  # kept, as "stopped": queued prompts wait for your next one
                await asyncio.to_thread(away.update, self.runtime, "budget", key, state="stopped")
                self._panel_changed()
                text = (f"⏹ Stopped at the budget by {who}. Queued prompts wait until you "
                        "send one; the next tool call past the budget asks again.")  # fmt: skip
                await interaction.response.edit_message(content=text, view=None)
                await interaction.client.queue.held_notices(key)
                return
            await asyncio.to_thread(away.remove, self.runtime, "budget", key)
            self._panel_changed()
            more = target.project.budget.continue_usd
            which = str(record.get("which") or "session")
            kind, name = ("raise-day", str(record.get("day"))) if which == "day" else (
                "raise", str(record.get("session")))  # fmt: skip
            cap, raise_by = raised_cap(record, more)
            try:
                await asyncio.to_thread(away.add_raise, self.runtime, kind, name, raise_by)
            except ValueError:
                log.warning("no raise for %s: %r", key, record)
            text = (f"▶️ Continued by {who}: {NAMES.get(which, which)} raised by ${raise_by:.2f} "
                    f"to ${cap:.2f}; typed {_quoted(self.cfg.continue_prompt)}.")  # fmt: skip
            await interaction.response.edit_message(content=text, view=None)
        try:
            async with self.sessions.lock(key):
                pane_id = await self.sessions.ensure_running(target)
                await self.sessions.type_prompt(key, pane_id, self.cfg.continue_prompt)
        except (TmuxError, ClaudeDidNotStart, OSError) as err:
            await interaction.followup.send(f"⚠️ Not typed: {_short(err)}", ephemeral=True)

    async def _warn_budgets(self) -> None:
        """At 80 % of a cap, once per session (per cap) and per day: a warning in the channel."""
        for project in self.server.projects:
            if not project.budget.any:
                continue
            for key in self._session_keys(project):
                await self._warn(key, project)

    def _session_keys(self, project: Project) -> list[str]:
        from bridge.state import session_state

        keys = [project.channel_id]
        for record in session_state.all_records(self.runtime):
            if record.get("project") == project.name and record.get("thread_id"):
                keys.append(str(record.get("key")))
        return keys

    async def _warn(self, key: str, project: Project) -> None:
        session = (session_record.read_record(self.runtime, key) or {}).get("session_id")
        if not session:
            return
        spend = await asyncio.to_thread(Spend, self.runtime, project.budget, session, self.clock())
        warned = await asyncio.to_thread(away.load, self.runtime, "warned", key) or {}
        for which, spent, cap in spend.over(WARN_AT):
            mark = f"{session}:{cap}" if which == "session" else f"{spend.day}:{cap}"
            if warned.get(which) == mark or spent >= cap:
                continue  # warned already, or over: the stop says it
            text = (f"⚠️ Budget: {NAMES[which]} is {spent / cap:.0%} used (${spent:.2f} of "
                    f"${cap:.2f}). At 100 % Claude stops before its next tool call and asks "
                    "you.")  # fmt: skip
            try:
                await self.bot.get_partial_messageable(int(key)).send(text)
            except discord.HTTPException as err:
                log.warning("budget warning in %s: %s", key, err)
                continue
            warned[which] = mark
            await asyncio.to_thread(away.save, self.runtime, "warned", key, warned)

    # --- what /usage and the panel show -----------------------------------------------

    def panel_section(self) -> str:
        """The control panel's section (``panel.ControlPanel.sections``)."""
        return "\n".join(self.summary_lines()[:10])

    def summary_lines(self) -> list[str]:
        """The panel's "while you are away" lines: limits waited on, budgets left."""
        lines = []
        for key, record in self._mine(away.all_of(self.runtime, "limit")).items():
            if record.get("state") != "waiting":
                continue
            resets = record.get("resets_at")
            when = f"resets <t:{int(resets)}:R>" if isinstance(resets, int | float) else (
                "reset time unknown")  # fmt: skip
            lines.append(f"⏸ <#{key}> at a usage limit, {when}")
        for key in self._mine(away.all_of(self.runtime, "budget")):
            lines.append(f"🛑 <#{key}> stopped at its budget")
        for project in self.server.projects:
            text = budget_left(self.runtime, project, project.channel_id, self.clock())
            if text:
                lines.append(f"💰 {project.name}: {text}")
        return lines


def _quoted(text: str) -> str:
    shown = " ".join(text.split())
    shown = shown if len(shown) <= 60 else shown[:59] + "…"
    return "“" + discord.utils.escape_markdown(shown).replace("@", "@\u200b") + "”"


def _usd(value: object) -> str:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return f"{value:.2f}" if ok else "?"


def _tool(name: object) -> str:
    if not isinstance(name, str) or not name:
        return "its next tool call"
    return f"its next tool call ({discord.utils.escape_markdown(name[:40])})"


def _short(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text if len(text) <= 200 else text[:199] + "…"
