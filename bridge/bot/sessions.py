"""Which tmux pane serves which project channel: adopt running ones, start missing ones.

A project's Claude Code runs as the command of its own tmux window (never typed into a
shell), in the project's directory, with env vars that tell every hook which channel it
belongs to. Running windows are adopted when the bot starts and never killed by it.
"""

from __future__ import annotations

import asyncio
import logging
import os

from bridge import fastjson, runtime
from bridge.config import ENV_API_BASE, ENV_TMUX_SOCKET, BridgeConfig, Project, Server
from bridge.hookkit import ENV_CHANNEL
from bridge.render.attachments import format_size
from bridge.tmux import PaneInfo, TmuxSessions

log = logging.getLogger(__name__)

READY_TIMEOUT = 60.0  # seconds for a fresh Claude Code to show its prompt box

SYSTEM_PROMPT = """\
You are being driven from Discord through discord-bridge: the user reads your final replies \
in a Discord channel, often on a phone.
- Files the user attaches in Discord are saved under {uploads} and their paths appear in the \
prompt as "Attached file: /path".
- To send a file to the user, save it inside {outputs} and put the marker \
[DISCORD_ATTACH: <name relative to that folder>] on its own line in your reply, e.g. \
[DISCORD_ATTACH: report.txt]. Up to {limit} per file; the marker is removed from the text."""


class SessionManager:
    """The Claude Code sessions of one configured server (one tmux session)."""

    def __init__(self, cfg: BridgeConfig, server: Server, rt: runtime.Runtime) -> None:
        self.server = server
        self.runtime = rt
        self.config_path = os.path.abspath(cfg.path)  # the hooks must read this same file
        self.upload_limit = cfg.upload_limit
        self.tmux = TmuxSessions(server.tmux_session, server.tmux_socket)
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, channel_id: str) -> asyncio.Lock:
        """Serialises starting and typing per channel, so two messages never interleave."""
        return self._locks.setdefault(channel_id, asyncio.Lock())

    async def adopt_running(self) -> list[PaneInfo]:
        panes = await asyncio.to_thread(self.tmux.panes)
        for pane in panes:
            log.info("adopted %s (window %s)%s", pane.pane_id, pane.window_name,
                     " [exited]" if pane.dead else "")  # fmt: skip
        return panes

    async def start_startup_projects(self) -> None:
        for project in self.server.projects:
            if not project.startup:
                continue
            async with self.lock(project.channel_id):  # a message meanwhile waits for it
                try:
                    await self.ensure_running(project)
                except Exception:
                    log.exception("could not start project %s", project.name)

    async def ensure_running(self, project: Project) -> str:
        """The pane id of the project's live Claude Code, started (and ready) if needed.
        The caller holds :meth:`lock` for the project's channel."""
        pane = await asyncio.to_thread(self.tmux.find, project.channel_id)
        if pane is not None and not pane.dead:
            return pane.pane_id
        if pane is not None:  # Claude exited; its window stayed for diagnosis
            log.info("replacing exited pane %s of %s", pane.pane_id, project.name)
            await asyncio.to_thread(self.tmux.kill, pane.pane_id)
        log.info("starting Claude Code for %s in %s", project.name, project.path)
        pane = await asyncio.to_thread(
            self.tmux.start,
            project.channel_id,
            project.name,
            project.path,
            self.launch_argv(project),
            self.pane_env(project),
        )
        await asyncio.to_thread(self.tmux.wait_ready, pane.pane_id, READY_TIMEOUT)
        return pane.pane_id

    async def type_prompt(self, pane_id: str, text: str) -> None:
        """Type ``text`` as one prompt: only into an input box, never into a dialog."""
        await asyncio.to_thread(self.tmux.clear_input, pane_id)
        await asyncio.to_thread(self.tmux.type_text, pane_id, text)

    def launch_argv(self, project: Project) -> list[str]:
        uploads = self.runtime.channel_dir("uploads", project.channel_id)
        outputs = self.runtime.channel_dir("outputs", project.channel_id)
        argv = [project.claude_command]
        if project.model:
            argv += ["--model", project.model]
        if project.permission:
            argv += ["--permission-mode", project.permission]
        # Not --add-dir: for a directory it has not seen, that raises a trust dialog whose
        # default answer exits Claude Code. additionalDirectories in a session settings layer
        # grants the same access without asking.
        extra_dirs = {"permissions": {"additionalDirectories": [uploads, outputs]}}
        argv += ["--settings", fastjson.dumps(extra_dirs)]
        limit = format_size(self.upload_limit)
        prompt = SYSTEM_PROMPT.format(uploads=uploads, outputs=outputs, limit=limit)
        argv += ["--append-system-prompt", prompt]
        return argv + project.claude_args

    def pane_env(self, project: Project) -> dict[str, str]:
        """Env vars on the pane: they reach every hook of that Claude Code session."""
        env = {
            ENV_CHANNEL: project.channel_id,
            runtime.ENV_CONFIG: self.config_path,
            runtime.ENV_HOME: runtime.bridge_home(),
            runtime.ENV_RUNTIME_DIR: self.runtime.root,
            "DISCORD_BRIDGE_OUTPUT_DIR": self.runtime.path("outputs", project.channel_id),
        }
        for name in (ENV_API_BASE, ENV_TMUX_SOCKET, "DISCORD_BRIDGE_RETRY_SECONDS"):
            if os.environ.get(name):
                env[name] = os.environ[name]
        return env
