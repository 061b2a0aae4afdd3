"""Which tmux pane serves which channel or thread: adopt, start, resume, stop.

Every session — a project's channel, or a thread under it — runs Claude Code as the command of
its own tmux window (never typed into a shell), tagged with its key (the channel or thread id),
with env vars that tell every hook where to post. A thread's settings come from the 3-layer
merge in :func:`bridge.config.thread_settings`; with ``isolation: "worktree"`` it runs in its own
git worktree. What each session is (pane, cwd, worktree, wanted running or not) is kept in
``bridge.state.session_state``, so after a restart a live pane is adopted and a dead one
whose conversation is known comes back with ``--resume``. Running windows are never killed by a
bot start.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import Awaitable, Callable

from bridge import config
from bridge.agents import Agent, agent_for
from bridge.claude import launch
from bridge.codex import models as codex_models
from bridge.config import BridgeConfig, Server
from bridge.sessions import adoption, pane_input, pane_launch, worktrees
from bridge.sessions.key_gate import SessionKeys
from bridge.sessions.start_failed import did_not_start
from bridge.sessions.targets import SessionTarget
from bridge.state import decisions, runtime, session_state
from bridge.tmux import PaneExited, PaneInfo, TmuxError, TmuxSessions

log = logging.getLogger(__name__)

READY_TIMEOUT = 60.0  # seconds for a fresh Claude Code to show its prompt box
TURN_START_GRACE = 15.0  # seconds a typed prompt gets to show up as a turn before another goes
ADOPTED_ENDED = (
    "⏹ The Claude Code adopted here has ended (its pane closed or it exited): released. "
    "A message here resumes its conversation in a session of the bridge's own."
)


class SessionManager:
    """The Claude Code sessions of one configured server (one tmux session)."""

    def __init__(self, cfg: BridgeConfig, server: Server, rt: runtime.Runtime) -> None:
        self.cfg = cfg
        self.server = server
        self.runtime = rt
        self.config_path = os.path.abspath(cfg.path)  # the hooks must read this same file
        self.upload_limit = cfg.upload_limit
        self.tmux = TmuxSessions(server.tmux_session, server.tmux_socket, server.tmux_control)
        self._locks: dict[str, asyncio.Lock] = {}
        self._typed_at: dict[str, float] = {}  # key → when a prompt was typed, its turn unseen
        self._config_lock = asyncio.Lock()  # config appends are read-modify-write of one file
        # Set by the bot: called after a session starts or stops (the panel refreshes), and
        # to post a notice in a channel or thread.
        self.on_change: Callable[[], None] = lambda: None
        self.notify: Callable[[str, str], Awaitable[None]] | None = None
        # Set by the bot: called when a thread's session gets a worktree of its own (the
        # thread is told where it works and how to finish).
        self.worktree_started: Callable[[str, dict], Awaitable[None]] | None = None

    def lock(self, channel_id: str) -> asyncio.Lock:
        """Serialises starting and typing per channel or thread, so two messages never
        interleave."""
        return self._locks.setdefault(channel_id, asyncio.Lock())

    # --- which session ---------------------------------------------------------------

    def target_for(
        self, channel_id: int | str, parent_id: int | str | None = None, name: str = ""
    ) -> SessionTarget | None:
        """The session a channel or thread maps to: a project's channel, a thread listed in
        ``threads[]``, or a new thread under a project's channel; None when unmapped."""
        found = config.find_channel(self.server, channel_id)
        if found is not None:
            project, entry = found
            if entry is None:
                return SessionTarget.for_project(project)
            return SessionTarget.for_thread(project, str(channel_id), entry.name or name, entry)
        parent = self.server.project_for_channel(parent_id) if parent_id else None
        if parent is None:
            return None
        return SessionTarget.for_thread(parent, str(channel_id), name, None)

    def target_for_key(self, key: str) -> SessionTarget | None:
        """The target of a recorded session (state file), if its project still exists."""
        record = session_state.load(self.runtime, key) or {}
        found = config.find_channel(self.server, key)
        if found is not None or not record.get("thread_id"):
            return self.target_for(key)
        project = next((p for p in self.server.projects if p.name == record.get("project")), None)
        if project is None:
            return None
        return SessionTarget.for_thread(project, key, record.get("thread_name") or "", None)

    async def register_thread(self, target: SessionTarget) -> None:
        """List a thread first used from Discord in the project's ``threads[]`` (atomic), with
        its effective settings, as gnsrtk does: a later change of the project's defaults does
        not change a thread that already runs with them."""
        if target.thread_id is None or config.find_channel(self.server, target.key):
            return
        entry = {"name": target.thread_name or target.key, "channelId": target.key}
        if target.agent != target.project.agent:  # an adopted session of the other agent
            entry["agent"] = target.agent
        settings = {
            "model": target.model,
            "projectPath": target.path,
            "permission": target.permission,
            "isolation": target.isolation,
        }
        entry.update((key, value) for key, value in settings.items() if value is not None)
        async with self._config_lock:
            if config.find_channel(self.server, target.key):
                return  # listed meanwhile by another message of the same thread
            try:
                await asyncio.to_thread(
                    config.append_thread,
                    self.cfg.path,
                    self.server.index,
                    target.project.name,
                    entry,
                    self.server.token,
                )
            except (OSError, config.ConfigError) as err:
                log.warning("could not add thread %s to %s: %s", target.key, self.cfg.path, err)
            config.remember_thread(target.project, entry)

    # --- start-up --------------------------------------------------------------------

    async def adopt_running(self) -> list[PaneInfo]:
        panes = await asyncio.to_thread(self.tmux.panes)
        for pane in panes:
            log.info(
                "adopted %s (window %s)%s",
                pane.pane_id,
                pane.window_name,
                " [exited]" if pane.dead else "",
            )
        return panes

    async def start_startup_projects(self) -> None:
        """At bot start: bring back sessions that died while the bot was away, then start
        ``startup: true`` projects and threads."""
        await self.restore()
        targets = [SessionTarget.for_project(p) for p in self.server.projects if p.startup]
        for project in self.server.projects:
            for entry in project.threads:
                if entry.startup:
                    targets.append(
                        SessionTarget.for_thread(project, entry.channel_id, entry.name, entry)
                    )
        for target in targets:
            record = await asyncio.to_thread(session_state.load, self.runtime, target.key)
            if record and record.get("wanted") == "stopped":
                continue  # stopped by /stop, the panel or an archived thread: stays stopped
            async with self.lock(target.key):  # a message meanwhile waits for it
                try:
                    await self.ensure_running(target)
                except Exception:
                    log.exception("could not start %s", target.label)

    async def restore(self) -> None:
        """Sessions the user left running: a live pane is adopted as it is; a dead one whose
        conversation is known is restarted with ``--resume`` in the same place."""
        for record in await asyncio.to_thread(session_state.all_records, self.runtime):
            key = record["key"]
            if record.get("server") != self.server.name or record.get("wanted") != "running":
                continue
            if record.get("adopted"):
                continue  # not the bridge's pane: never restarted by it (live_pane finds it)
            target = self.target_for_key(key)
            if target is None:
                continue
            session_id = session_state.resumable_session(self.runtime, key, target.project.path)
            if session_id is None:
                continue
            worktree = record.get("worktree")
            if worktree and not os.path.isdir(worktree["path"]):
                continue  # removed outside the bridge: check_worktrees ends it and says so
            async with self.lock(key):
                pane = await asyncio.to_thread(self.tmux.find, key)
                if pane is not None and not pane.dead:
                    continue
                log.info("resuming %s (session %s)", target.label, session_id)
                try:
                    await self.ensure_running(target)
                except Exception:
                    log.exception("could not resume %s", target.label)

    # --- starting and stopping -------------------------------------------------------

    async def ensure_running(self, target: SessionTarget, fresh: bool = False) -> str:
        """The pane id of the session's live Claude Code, started (and ready) if needed.

        A dead session whose conversation is known is resumed (``--resume``) unless
        ``fresh``. The caller holds :meth:`lock` for the target's key. An adopted session's
        pane is returned while its Claude Code runs; once that has ended, the thread is
        released and its conversation resumed in a pane of the bridge's own."""
        adopted = await self._adopted_pane(target.key)
        if adopted is not None:
            return adopted
        pane = await asyncio.to_thread(self.tmux.find, target.key)
        if pane is not None and not pane.dead:
            return pane.pane_id
        if pane is not None:  # Claude exited; its window stayed for diagnosis
            log.info("replacing exited pane %s of %s", pane.pane_id, target.label)
            await asyncio.to_thread(self.tmux.kill, pane.pane_id)
        before = (session_state.load(self.runtime, target.key) or {}).get("worktree") or {}
        cwd, worktree = await asyncio.to_thread(self._prepare_cwd, target)
        resume = None if fresh else self.resumable(target)
        target = self._chosen_model(target)
        log.info(
            "starting %s for %s in %s%s",
            agent_for(target.agent).label,
            target.label,
            cwd,
            f" (resuming {resume})" if resume else "",
        )
        pane = await asyncio.to_thread(
            self.tmux.start,
            target.key,
            target.window_name,
            cwd,
            self.launch_argv(target, resume),
            self.pane_env(target),
        )
        await asyncio.to_thread(self._record_start, target, pane, cwd, worktree)
        if target.project.claude_nice > 0:  # its whole process group yields to the bot
            await asyncio.to_thread(self._lower_cpu_group, pane.pane_id, target.project.claude_nice)
        self.on_change()
        if worktree and worktree["path"] != before.get("path") and self.worktree_started:
            try:
                await self.worktree_started(target.key, worktree)
            except Exception:
                log.exception("could not announce the worktree of %s", target.label)
        agent = agent_for(target.agent)
        try:
            await asyncio.to_thread(
                pane_input.wait_ready, self.tmux, pane.pane_id, READY_TIMEOUT, agent=agent
            )
        except PaneExited as err:  # said in the agent's own words, with what to do
            command = agent.command(target.project)[0]
            failure = did_not_start(err, command, agent.start_wording)
            log.warning("%s for %s did not start: %s", agent.label, target.label, failure)
            raise failure from None
        return pane.pane_id

    def resumable(self, target: SessionTarget) -> str | None:
        """The conversation a start of ``target`` continues: the one recorded for its key,
        if it was the same project's (never one of a project the channel served before)."""
        return session_state.resumable_session(self.runtime, target.key, target.project.path)

    def _chosen_model(self, target: SessionTarget) -> SessionTarget:
        """A Codex session's model as ``/model`` set it (a restart with ``--model``), kept
        for its later starts. Claude Code's ``/model`` is typed into its own box instead."""
        if target.agent != "codex":
            return target
        chosen = (session_state.load(self.runtime, target.key) or {}).get("model")
        if not isinstance(chosen, str) or not codex_models.valid_name(chosen):
            return target
        return dataclasses.replace(target, model=chosen)

    async def stop(self, key: str) -> bool:
        """End the session's Claude Code and close its pane; it stays stopped after a bot
        restart. True if something was running. The caller holds :meth:`lock`. An adopted
        session is released instead: the bridge never ends a Claude Code it did not start."""
        if await asyncio.to_thread(adoption.release, self.runtime, key) is not None:
            self.on_change()
            return True
        pane = await asyncio.to_thread(self.tmux.find, key)
        if pane is not None:
            await asyncio.to_thread(self.tmux.kill, pane.pane_id)
            await asyncio.to_thread(decisions.close_channel, self.runtime, key)
        if session_state.load(self.runtime, key) is not None:
            await asyncio.to_thread(
                session_state.update, self.runtime, key, wanted="stopped", pane_id=None
            )
        self.on_change()
        return pane is not None and not pane.dead

    async def live_pane(self, key: str) -> str | None:
        adopted = await self._adopted_pane(key)
        if adopted is not None:
            return adopted
        pane = await asyncio.to_thread(self.tmux.find, key)
        return pane.pane_id if pane is not None and not pane.dead else None

    async def _adopted_pane(self, key: str) -> str | None:
        """The pane address of ``key``'s adopted session while it runs; an adopted session
        that has ended is released (said in its thread), and None."""
        record = await asyncio.to_thread(adoption.adopted, self.runtime, key)
        if record is None:
            return None
        if adoption.alive(record):
            return str(record["address"])
        await asyncio.to_thread(adoption.release, self.runtime, key, True)
        log.info("adopted session of %s has ended; released", key)
        if self.notify is not None:
            await self.notify(key, ADOPTED_ENDED)
        return None

    def keys(self, key: str, pane_id: str, screen_answer: bool = False) -> SessionKeys:
        """Session ``key``'s pane as keys are pressed into it: every key through the key gate
        (``key_gate``). ``screen_answer``: the keys answer its screen prompt."""
        return SessionKeys(self.tmux, pane_id, self.runtime, key, screen_answer, self.agent_of(key))

    def agent_of(self, key: str) -> Agent:
        """The agent session ``key`` runs (``bridge.agents``): its target's; Claude Code for
        a key no target has (an adopted session: the bridge adopts Claude Code's only)."""
        target = self.target_for_key(key)
        return agent_for(target.agent if target is not None else None)

    async def type_prompt(self, key: str, pane_id: str, text: str) -> pane_input.Timings:
        """Type ``text`` as one prompt into session ``key``'s pane: only into an input box,
        never into a dialog. Returns where the time went (milliseconds per phase)."""
        keys = self.keys(key, pane_id)
        since = time.monotonic()  # the box's time counts the wait for a worker thread too
        timings = await asyncio.to_thread(pane_input.type_into_box, keys, text, since)
        if not text.lstrip().startswith("/"):  # a slash command may start no turn
            self._typed_at[key] = time.monotonic()
        return timings

    def awaiting_turn(self, key: str) -> bool:
        """A prompt was typed into ``key`` (by anyone: a message, the queue, a button, the
        scheduler) less than :data:`TURN_START_GRACE` ago and its turn has not shown yet. It
        shows in the events and on Claude Code's screen only later (the UserPromptSubmit
        hook, the redraw: seconds on a busy machine); meanwhile the session is busy for
        whoever would type next (a ``>>`` sent right behind a prompt was typed into its turn,
        2 runs of 6 under load). A prompt that starts no turn holds them no longer than that."""
        typed = self._typed_at.get(key)
        return typed is not None and time.monotonic() - typed < TURN_START_GRACE

    def turn_shown(self, key: str) -> None:
        """A turn of ``key`` started or ended (its events say so), or was interrupted: the
        prompt typed last is no longer pending."""
        self._typed_at.pop(key, None)

    def touch(self, key: str) -> None:
        """Note activity (a prompt typed) for the panel's "last activity"."""
        try:
            session_state.update(self.runtime, key, last_activity=time.time())
        except (OSError, ValueError) as err:
            log.warning("could not record activity of %s: %s", key, err)

    def _prepare_cwd(self, target: SessionTarget) -> tuple[str, dict | None]:
        """The directory to start in: the project's, or the thread's own worktree."""
        if target.isolation != "worktree" or target.thread_id is None:
            return target.path, None
        recorded = (session_state.load(self.runtime, target.key) or {}).get("worktree")
        if recorded and os.path.isdir(recorded["path"]):
            worktree = recorded
            worktrees.hide_worktrees(worktree["repo"])  # one made before the bridge hid them
        elif recorded:  # its folder went: made again on the thread's own branch, if it stayed
            worktree = worktrees.add(target.path, recorded["name"])
        else:
            worktree = worktrees.add_for_thread(target.path, target.thread_name, target.thread_id)
        # A project in a subdirectory of its repository runs in the same subdirectory. git
        # gives the repository's real path: compare real paths (a symlinked projectPath).
        inside = os.path.relpath(os.path.realpath(target.path), os.path.realpath(worktree["repo"]))
        if inside == os.pardir or inside.startswith(os.pardir + os.sep):
            raise worktrees.WorktreeError(f"{target.path} is outside {worktree['repo']}")
        cwd = worktree["path"] if inside == "." else os.path.join(worktree["path"], inside)
        return cwd, worktree

    def _lower_cpu_group(self, pane_id: str, nice: int) -> None:
        try:
            launch.lower_cpu_group(self.tmux.pane_pid(pane_id), nice)
        except TmuxError as err:  # the pane is gone already: wait_ready says why
            log.debug("no pid for %s: %s", pane_id, err)

    def _record_start(
        self, target: SessionTarget, pane: PaneInfo, cwd: str, worktree: dict | None
    ) -> None:
        session_state.update(
            self.runtime,
            target.key,
            server=self.server.name,
            project=target.project.name,
            parent_id=target.project.channel_id,
            thread_id=target.thread_id,
            thread_name=target.thread_name,
            window=target.window_name,
            pane_id=pane.pane_id,
            cwd=cwd,
            worktree=worktree,
            wanted="running",
            started_at=time.time(),
        )

    # --- worktrees -------------------------------------------------------------------

    async def check_worktrees(self) -> list[str]:
        """Sessions whose worktree was removed outside the bridge: tell the thread and end
        the session. Returns their keys."""
        ended = []
        for record in await asyncio.to_thread(session_state.all_records, self.runtime):
            worktree = record.get("worktree")
            if record.get("server") != self.server.name or not worktree:
                continue
            if os.path.isdir(worktree["path"]):
                continue
            key = record["key"]
            async with self.lock(key):
                # Wanted running but not running: it died while the bot was away (a restart
                # does not resume into a missing worktree); the thread is told all the same.
                was_running = await self.stop(key) or record.get("wanted") == "running"
                await asyncio.to_thread(session_state.update, self.runtime, key, worktree=None)
            ended.append(key)
            if was_running and self.notify is not None:
                text = (
                    f"⚠️ This thread's worktree `{worktree['path']}` was removed outside the "
                    "bridge; its Claude Code session has ended."
                )
                await self.notify(key, text)
        return ended

    def unknown_worktrees(self) -> list[str]:
        """Worktrees under a project's ``.claude/worktrees/`` that no session record knows
        (left by ``claude -w`` or an earlier install): reported, never deleted."""
        known = {
            os.path.realpath(r["worktree"]["path"])
            for r in session_state.all_records(self.runtime)
            if r.get("worktree")
        }
        found: list[str] = []
        for project in self.server.projects:
            try:
                paths = worktrees.bridge_worktrees(project.path)
            except worktrees.WorktreeError:
                continue
            found += [p for p in paths if os.path.realpath(p) not in known and p not in found]
        return found

    # --- how Claude Code is started (bridge/sessions/pane_launch.py) -------------------

    def launch_argv(self, target: SessionTarget, resume: str | None = None) -> list[str]:
        return pane_launch.launch_argv(
            self.runtime, self.config_path, self.upload_limit, target, resume
        )

    def pane_env(self, target: SessionTarget) -> dict[str, str]:
        return pane_launch.pane_env(self.runtime, self.config_path, target)
