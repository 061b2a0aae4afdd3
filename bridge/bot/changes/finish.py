"""Finishing a worktree thread from Discord: **Finish…** and ``/finish``.

A thread whose session works in its own git worktree is told so when the worktree is made,
with a **Finish…** button; it and ``/finish`` post the thread's Finish message, whose buttons
then edit it in place, step by step:

- **Merge into <base>**: the checks first (the thread's session and the project channel's
  are idle, ``worktree_finish.plan_merge``: nothing uncommitted, no conflict, the project's
  checkout clean), then what would be merged (commits, files, +/−) with **Merge**; the merge,
  its result, then **Remove worktree and end thread** / **Keep**.
- **Push and open PR**: where the branch would go and what it carries, then **Push**; the
  pull request gh opened, or the address to open one (``worktree_push``).
- **Keep**: nothing changes. **Discard**: what removing the worktree would lose (the archive's
  check, ``worktrees.inspect``), then **Discard**: the session stops, the worktree and its
  branch go, the thread is archived.

Uncommitted work is never merged or pushed silently: the step stops, names it, and offers
**Ask Claude to commit** (a prompt typed into the thread's session through the key gate); a
conflict offers **Ask Claude to merge <base> in**; once that turn leaves the worktree clean
the Finish message comes again by itself (``finish_ask``). What each screen says is
``finish_screen``'s. A confirmation carries a fingerprint of
what it showed (``custom_ids.finish``): if anything moved meanwhile, the new state is shown
instead of acted on. The buttons are ``BridgeItem``s (owner and ``allowedUserIds``; they work
after a bot restart); git runs in worker threads, as safely as the snapshots
(``sessions/sealed_git.py``).
"""

# Statements marked `# fmt: skip` stay compact: formatted, this module would pass
# 450 lines, the size a module here is kept under.

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, TypeVar

import discord
from discord import app_commands

from bridge.bot.changes import finish_screen
from bridge.bot.changes.diff import bridge_paths
from bridge.bot.changes.finish_ask import COMMIT_PROMPT, RESOLVE_PROMPT, offer_when_clean
from bridge.bot.changes.finish_screen import NO_MENTIONS, Screen
from bridge.bot.client import BotInteraction, BridgeClient, BridgeItem, target_here
from bridge.bot.control.threads import code, loss_lines
from bridge.claude.hook_table import PROMPT_TIMEOUT_MARGIN
from bridge.config.roles import APPROVE
from bridge.discord import custom_ids
from bridge.sessions import worktree_finish, worktree_plan, worktree_push, worktrees
from bridge.sessions.changes import GitError
from bridge.sessions.worktree_plan import CONFLICT, NOTHING, UNCOMMITTED, Plan
from bridge.state import decisions, session_state
from bridge.tmux import TmuxError

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)
PlanT = TypeVar("PlanT", bound=Plan)

BUDGET = 30.0  # seconds of git for a plan: two snapshots, a merge-tree
NOT_A_WORKTREE = (
    "Finish is for a thread whose session works in its own git worktree "
    '(`isolation: "worktree"`); this one has none (now).'
)


def register(bot: BridgeClient) -> None:
    """Finish… and its steps' buttons, ``/finish``, and the note a new worktree thread gets."""
    bot.add_dynamic_items(FinishButton)
    bot.tree.add_command(finish)

    async def announce(key: str, worktree: dict) -> None:
        await Finisher(bot).announce(key, worktree)

    bot.sessions.worktree_started = announce


@app_commands.command(name="finish", description="Merge, push, keep or discard this thread's work")
async def finish(interaction: BotInteraction) -> None:
    """``/finish``: the thread's Finish message (a worktree thread's only)."""
    target = await target_here(interaction)
    if target is None:
        return
    record = await asyncio.to_thread(session_state.load, interaction.client.runtime, target.key)
    if not (record or {}).get("worktree"):
        await interaction.response.send_message(NOT_A_WORKTREE, ephemeral=True)
        return
    await interaction.response.defer(thinking=True)
    screen = await Finisher(interaction.client).menu(target.key)
    await interaction.followup.send(screen.content(), view=screen.view(),
                                    allowed_mentions=NO_MENTIONS)  # fmt: skip


STYLES = {
    "domerge": discord.ButtonStyle.success, "dopush": discord.ButtonStyle.success,
    "dodiscard": discord.ButtonStyle.danger, "discard": discord.ButtonStyle.danger,
    "menu": discord.ButtonStyle.primary, "end": discord.ButtonStyle.primary,
}  # fmt: skip


class FinishButton(BridgeItem[discord.ui.Button], template=custom_ids.FINISH_TEMPLATE):
    """A step of finishing thread ``key``; ``check``: what a confirmation showed."""

    needs = APPROVE

    def __init__(self, action: str, key: str, check: str | None = None, label: str = "") -> None:
        button: discord.ui.Button[discord.ui.View] = discord.ui.Button(
            label=label or action, custom_id=custom_ids.finish(action, key, check or ""),
            style=STYLES.get(action, discord.ButtonStyle.secondary),
            emoji="🏁" if action == "menu" else None,
        )  # fmt: skip
        super().__init__(button)
        self.action, self.key, self.check = action, key, check or ""

    async def clicked(self, interaction: BotInteraction) -> None:
        finisher = Finisher(interaction.client)
        if self.action == "menu":  # a Finish message of its own, below
            await interaction.response.defer(thinking=True)
            screen = await finisher.menu(self.key)
            await interaction.followup.send(screen.content(), view=screen.view(),
                                            allowed_mentions=NO_MENTIONS)  # fmt: skip
            return
        await interaction.response.defer()  # git may take a while: the message is edited after
        screen = await finisher.act(self.key, self.action, self.check)
        await interaction.edit_original_response(content=screen.content(), view=screen.view(),
                                                 allowed_mentions=NO_MENTIONS)  # fmt: skip


class Finisher:
    """The Finish steps of one bot's threads (stateless: built per click)."""

    def __init__(self, client: BridgeClient) -> None:
        self.client = client
        self.sessions: SessionManager = client.sessions
        self.runtime = client.runtime
        self.private = bridge_paths(client.runtime, client.cfg.path)

    # --- the messages ----------------------------------------------------------------

    async def announce(self, key: str, worktree: dict) -> None:
        """Tell a thread that got a worktree where it works and how to finish."""
        base = await asyncio.to_thread(worktree_plan.base_branch, worktree["repo"])
        where = os.path.relpath(worktree["path"], worktree["repo"])
        text = (
            f"🗂️ This thread works in its own git worktree: branch `{code(worktree['branch'])}`"
            f"{f' from `{code(base)}`' if base else ''} at `{worktree['base'][:7]}`, in "
            f"`{code(where)}`. When its work is done: **Finish…** (merge, pull request, keep or "
            "discard) or `/finish`."
        )
        view = Screen(text, [FinishButton("menu", key, label="Finish…")]).view()
        try:
            await self.client.get_partial_messageable(int(key)).send(
                text, view=view, allowed_mentions=NO_MENTIONS
            )
        except discord.HTTPException as err:
            log.warning("could not tell thread %s about its worktree: %s", key, err)

    async def menu(self, key: str) -> Screen:
        worktree = await self._worktree(key)
        if worktree is None:
            return Screen(NOT_A_WORKTREE)
        base, ahead = await asyncio.to_thread(finish_screen.base_and_ahead, worktree)
        branch = code(worktree["branch"])
        into = f"`{code(base)}`" if base else "the project's branch"
        text = (
            f"🏁 **Finish this thread's work**: branch `{branch}`, {ahead} commit(s) not in "
            f"{into}.\n**Merge** it there (checked and shown first) · **Push** it and open a "
            "pull request · **Keep** everything as it is · **Discard** the worktree and its "
            "branch (what would be lost is shown first)."
        )
        return Screen(text, [
            FinishButton("merge", key, label=f"Merge into {base[:60]}" if base else "Merge"),
            FinishButton("pr", key, label="Push and open PR"),
            FinishButton("keep", key, label="Keep"),
            FinishButton("discard", key, label="Discard"),
        ])  # fmt: skip

    async def act(self, key: str, action: str, check: str) -> Screen:
        """Carry out one step; the Finish message's new contents."""
        if action == "keep":
            return await self.keep(key)
        worktree = await self._worktree(key)
        if worktree is None:
            return Screen(NOT_A_WORKTREE)
        steps = {
            "back": lambda: self.menu(key),
            "merge": lambda: self.preview_merge(key, worktree),
            "domerge": lambda: self.merge(key, worktree, check),
            "pr": lambda: self.preview_push(key, worktree),
            "dopush": lambda: self.push(key, worktree, check),
            "discard": lambda: self.preview_discard(key, worktree),
            "dodiscard": lambda: self.discard(key, worktree, check),
            "end": lambda: self.end(key, worktree),
            "commit": lambda: self.ask(key, worktree, COMMIT_PROMPT, "to commit its work"),
            "resolve": lambda: self.ask_resolve(key, worktree),
        }
        try:
            return await steps[action]()
        except (GitError, worktrees.WorktreeError) as err:
            log.warning("finish %s of thread %s: %s", action, key, err)
            return Screen(f"⚠️ git could not do it, so nothing was changed: {code(str(err))}",
                          [back(key)])  # fmt: skip

    # --- merge -----------------------------------------------------------------------

    async def preview_merge(self, key: str, worktree: dict) -> Screen:
        busy = await self._busy(key)
        if busy:
            return busy
        plan = await self._plan(worktree_finish.plan_merge, worktree)
        if not plan.ok:
            return self._refused("Not merged", key, plan, plan.base)
        return Screen("\n".join(finish_screen.merge_preview_lines(plan)), [
            FinishButton("domerge", key, plan.fingerprint, label="Merge"), back(key)
        ])  # fmt: skip

    async def merge(self, key: str, worktree: dict, check: str) -> Screen:
        async with AsyncExitStack() as locks:
            # The thread's and the project channel's: no prompt is typed into either while
            # the checkout changes under the project's session.
            for session in dict.fromkeys((key, self._project_key(key))):
                await locks.enter_async_context(self.sessions.lock(session))
            busy = await self._busy(key)
            if busy:
                return busy
            plan = await self._plan(worktree_finish.plan_merge, worktree)
            if plan.fingerprint != check or not plan.ok:
                shown = await self.preview_merge(key, worktree)
                return Screen("⚠️ Something changed since the preview; here it is again.\n"
                              + shown.text, shown.buttons)  # fmt: skip
            message = f"Merge branch '{worktree['branch']}'{self._from_thread(key)}"
            try:
                result = await asyncio.to_thread(
                    worktree_finish.merge, plan, self._scratch(), message
                )
            except worktree_finish.MergeFailed as err:
                return Screen(f"⚠️ Not merged: {err}", [back(key)])
        return Screen(finish_screen.merged_text(plan, result), [
            FinishButton("end", key, label="Remove worktree and end thread"),
            FinishButton("keep", key, label="Keep"),
        ])  # fmt: skip

    # --- push ------------------------------------------------------------------------

    async def preview_push(self, key: str, worktree: dict) -> Screen:
        busy = await self._busy(key, project=False)
        if busy:
            return busy
        plan = await self._plan(worktree_push.plan_push, worktree)
        if not plan.ok:
            return self._refused("Not pushed", key, plan, plan.target)
        then = (
            "gh opens the pull request (if it is logged in)"
            if shutil.which("gh")
            else "you get the address to open the pull request (gh is not installed)"
        )
        return Screen("\n".join(finish_screen.push_preview_lines(plan, then)), [
            FinishButton("dopush", key, plan.fingerprint, label="Push"), back(key)
        ])  # fmt: skip

    async def push(self, key: str, worktree: dict, check: str) -> Screen:
        async with self.sessions.lock(key):
            busy = await self._busy(key, project=False)
            if busy:
                return busy
            plan = await self._plan(worktree_push.plan_push, worktree)
            if plan.fingerprint != check or not plan.ok:
                shown = await self.preview_push(key, worktree)
                return Screen("⚠️ Something changed since the preview; here it is again.\n"
                              + shown.text, shown.buttons)  # fmt: skip
            title, body = finish_screen.pull_request_text(self._thread_name(key), plan)
            result = await asyncio.to_thread(worktree_push.push, plan, self._scratch(), title, body)
        return Screen("\n".join(finish_screen.pushed_lines(plan, result)), [back(key)])

    # --- keep, discard, end ----------------------------------------------------------

    async def keep(self, key: str) -> Screen:
        worktree = await self._worktree(key)
        if worktree is None:
            return Screen("📌 Kept: nothing changes.")
        return Screen(f"📌 Kept: the worktree `{code(worktree['path'])}` and its branch "
                      f"`{code(worktree['branch'])}` stay, and so does this thread's "
                      "session.")  # fmt: skip

    async def preview_discard(self, key: str, worktree: dict, heading: str = "") -> Screen:
        loss = await asyncio.to_thread(worktrees.inspect, worktree, self._scratch(), self.private)
        lines = [
            heading or "🗑️ **Discard this thread's work?**",
            f"The worktree `{code(worktree['path'])}` and its branch "
            f"`{code(worktree['branch'])}` are removed, the session stops and the thread is "
            "archived.",
        ]
        if loss.clean:
            lines.append("Nothing would be lost (nothing uncommitted, no commit in no other "
                         "branch, no ignored file).")  # fmt: skip
        else:
            lines += ["It would lose:", *loss_lines(worktree, loss)]
        return Screen("\n".join(lines), [
            FinishButton("dodiscard", key, finish_screen.loss_print(loss), label="Discard"),
            FinishButton("keep", key, label="Keep"),
        ])  # fmt: skip

    async def discard(self, key: str, worktree: dict, check: str) -> Screen:
        async with self.sessions.lock(key):
            loss = await asyncio.to_thread(
                worktrees.inspect, worktree, self._scratch(), self.private
            )
            if finish_screen.loss_print(loss) != check:
                shown = await self.preview_discard(key, worktree)
                return Screen("⚠️ Something changed since you looked; here it is again.\n"
                              + shown.text, shown.buttons)  # fmt: skip
            await self._end(key, worktree)
        return Screen(f"🗑️ Discarded: the worktree `{code(worktree['path'])}` and branch "
                      f"`{code(worktree['branch'])}` are removed, the session has ended and "
                      "this thread is archived.")  # fmt: skip

    async def end(self, key: str, worktree: dict) -> Screen:
        """After a merge: remove the worktree and end the thread when nothing would be lost,
        else show what would (the discard's question)."""
        async with self.sessions.lock(key):
            loss = await asyncio.to_thread(
                worktrees.inspect, worktree, self._scratch(), self.private
            )
            if loss.clean:
                await self._end(key, worktree)
                return Screen(f"🏁 Done: the worktree `{code(worktree['path'])}` and its branch "
                              "are removed, the session has ended and this thread is "
                              "archived.")  # fmt: skip
        return await self.preview_discard(
            key, worktree, "🗂️ **The worktree still holds something removing it would lose.**"
        )

    async def _end(self, key: str, worktree: dict) -> None:
        """Stop the session, remove the worktree and its branch, archive the thread. The
        caller holds the session's lock."""
        await self.sessions.stop(key)
        await asyncio.to_thread(worktrees.remove, worktree, True)
        await asyncio.to_thread(
            session_state.update, self.runtime, key, worktree=None, worktree_question=None
        )
        self.sessions.on_change()
        try:
            await self.client.http.edit_channel(int(key), archived=True)
        except discord.HTTPException as err:
            log.warning("could not archive thread %s: %s", key, err)

    # --- asking Claude ---------------------------------------------------------------

    async def ask(self, key: str, worktree: dict, prompt: str, what: str) -> Screen:
        """Type ``prompt`` into the thread's session (started if it is not running); the
        Finish message comes again by itself once that turn leaves the worktree clean."""
        target = self.sessions.target_for_key(key)
        if target is None:
            return Screen("This thread's project is gone.")
        try:
            async with self.sessions.lock(key):
                pane = await self.sessions.ensure_running(target)
                await self.sessions.type_prompt(key, pane, prompt)
        except (TmuxError, worktrees.WorktreeError) as err:  # a dialog is up, or no session
            return Screen(f"⚠️ Not asked: {err}", [back(key)])
        await asyncio.to_thread(self.sessions.touch, key)
        offer_when_clean(self.client, self.sessions, key, worktree, self._doing,
                         lambda: self.menu(key), (self._scratch(), self.private))  # fmt: skip
        again = FinishButton("back", key, label="Finish…")
        return Screen(f"✍️ Asked Claude {what} (typed into this thread's session). When its "
                      "turn leaves everything committed, the Finish buttons come again here; "
                      "or finish now:", [again])  # fmt: skip

    async def ask_resolve(self, key: str, worktree: dict) -> Screen:
        base = await asyncio.to_thread(worktree_plan.base_branch, worktree["repo"])
        if not base:
            return Screen("The project's checkout is on no branch now.", [back(key)])
        prompt = RESOLVE_PROMPT.format(quoted=shlex.quote(base))
        return await self.ask(key, worktree, prompt, f"to merge `{code(base)}` in")

    # --- reading ---------------------------------------------------------------------

    async def _worktree(self, key: str) -> dict | None:
        record = await asyncio.to_thread(session_state.load, self.runtime, key) or {}
        worktree = record.get("worktree")
        return worktree if isinstance(worktree, dict) else None

    async def _plan(self, planner: Callable[..., PlanT], worktree: dict) -> PlanT:
        deadline = time.monotonic() + BUDGET
        return await asyncio.to_thread(planner, worktree, self._scratch(), self.private, deadline)

    async def _busy(self, key: str, project: bool = True) -> Screen | None:
        """A screen saying why not now, while the thread's session (or, ``project``, the
        project channel's, which works in the checkout a merge writes) is not idle."""
        places = [(key, "Claude in this thread")]
        if project:
            places.append((self._project_key(key), "Claude in the project's channel"))
        for session, who in places:
            doing = await self._doing(session)
            if doing:
                return Screen(f"✋ Not now: {who} {doing}. Finish when it is idle (or `/esc` "
                              "there first).", [back(key)])  # fmt: skip
        return None

    async def _doing(self, key: str) -> str:
        """What a session is busy with ("" when idle or not running)."""
        pane = await self.sessions.live_pane(key)
        if pane is None:
            return ""
        if await asyncio.to_thread(decisions.asking, self.runtime, key, PROMPT_TIMEOUT_MARGIN):
            return "waits for your answer to a prompt"
        screen = await asyncio.to_thread(self.sessions.tmux.capture, pane)
        reader = self.sessions.agent_of(key).screen
        if reader.is_busy(screen):
            return "is working"
        return "" if reader.input_box(screen) is not None else "shows a dialog"

    def _refused(self, verb: str, key: str, plan: Plan, base: str) -> Screen:
        lines, buttons = finish_screen.problem_lines(verb, plan), []
        if plan.problem(UNCOMMITTED):
            buttons.append(FinishButton("commit", key, label="Ask Claude to commit"))
        if plan.problem(CONFLICT) and base:
            buttons.append(
                FinishButton("resolve", key, label=f"Ask Claude to merge {base[:50]} in")
            )
        if plan.problem(NOTHING) and len(plan.problems) == 1:
            buttons.append(FinishButton("end", key, label="Remove worktree and end thread"))
        return Screen("\n".join(lines), [*buttons, back(key)])

    def _project_key(self, key: str) -> str:
        target = self.sessions.target_for_key(key)
        return target.project.channel_id if target is not None else key

    def _thread_name(self, key: str) -> str:
        record = session_state.load(self.runtime, key) or {}
        name = str(record.get("thread_name") or "")
        return "".join(c for c in name if c.isprintable()).strip()[:100]

    def _from_thread(self, key: str) -> str:
        name = self._thread_name(key)
        return f' (Discord thread "{name}")' if name else ""

    def _scratch(self) -> str:
        return self.runtime.path("turns")  # private (0700), the snapshots' scratch folder


def back(key: str) -> FinishButton:
    return FinishButton("back", key, label="Back")
