"""The validated config as objects: :class:`BridgeConfig` → :class:`Server` → :class:`Project`
→ :class:`ThreadEntry`.

On the hooks' fast path: imports only ``os`` and small bridge modules (no ``json``, ``re``,
``dataclasses`` or ``typing`` at run time).
"""

from __future__ import annotations

import os

from bridge.config.defaults import (
    ACTIVE_CLIENT_SECONDS,
    CLAUDE_NICE,
    DEFAULT_AGENT,
    DEFAULT_API_BASE,
    DEFAULT_ATTACH_AFTER,
    DEFAULT_BUDGET_CONTINUE,
    DEFAULT_CATCH_UP_MINUTES,
    DEFAULT_CONTINUE_PROMPT,
    DEFAULT_DOWNLOAD_LIMIT,
    DEFAULT_GATEWAY_URL,
    DEFAULT_METRICS_HOST,
    DEFAULT_METRICS_PORT,
    DEFAULT_OUTBOX_STUCK_SECONDS,
    DEFAULT_PROMPT_TIMEOUT,
    DEFAULT_QUEUE_PREFIX,
    DEFAULT_RESUME_MARGIN,
    DEFAULT_RETRY_WAIT,
    DEFAULT_STALL_MINUTES,
    DEFAULT_TMUX_SESSION,
    DEFAULT_UPLOAD_LIMIT,
    DEFAULT_VOICE_ENGINE,
    DEFAULT_VOICE_MAX_REPLY_SECONDS,
    DEFAULT_VOICE_MAX_SECONDS,
    DEFAULT_VOICE_MODEL,
    DEFAULT_VOICE_REPLIES,
    ENV_API_BASE,
    ENV_GATEWAY_URL,
    ENV_TMUX_SOCKET,
    TMUX_CONTROL_MODE,
    ConfigError,
    contains,
    norm_path,
)
from bridge.config.roles import DRIVE, granted_by, parse_roles
from bridge.config.validate import validate

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from typing import Any


class ThreadEntry:
    """One entry of a project's ``threads[]``: a Discord thread whose session has settings of
    its own (any left out come from the project's ``thread`` defaults, then the project).
    ``raw`` is the entry as the file has it."""

    __slots__ = (
        "agent",
        "channel_id",
        "isolation",
        "model",
        "name",
        "path",
        "permission",
        "raw",
        "startup",
    )

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.channel_id: str = raw["channelId"]
        self.name: str = raw.get("name") or ""
        path = raw.get("projectPath")
        self.path: str | None = norm_path(path) if isinstance(path, str) else None
        self.model: str | None = raw.get("model")
        self.permission: str | None = raw.get("permission")
        self.isolation: str | None = raw.get("isolation")
        self.agent: str | None = raw.get("agent")
        self.startup: bool = bool(raw.get("startup", False))

    def __repr__(self) -> str:
        return f"<ThreadEntry {self.name!r} #{self.channel_id}>"


class Budget:
    """``budget``: what a session and the day may spend (USD, Claude Code's own cost figure);
    None: no cap. ``continue_usd``: what **Continue** adds once a cap is reached."""

    __slots__ = ("continue_usd", "day_usd", "session_usd")

    def __init__(self, raw: dict) -> None:
        self.session_usd: float | None = _dollars(raw.get("sessionUsd"))
        self.day_usd: float | None = _dollars(raw.get("dayUsd"))
        self.continue_usd: float = _dollars(raw.get("continueUsd")) or DEFAULT_BUDGET_CONTINUE

    @property
    def any(self) -> bool:
        return self.session_usd is not None or self.day_usd is not None

    def __repr__(self) -> str:
        return f"<Budget session={self.session_usd} day={self.day_usd}>"


def _dollars(value: object) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return float(value) if ok else None  # type: ignore[arg-type]


class Project:
    """One mapped channel: a tmux window running Claude Code in ``path``."""

    __slots__ = (
        "agent",
        "budget",
        "channel_id",
        "claude_args",
        "claude_command",
        "claude_nice",
        "codex_args",
        "codex_command",
        "model",
        "name",
        "path",
        "permission",
        "progress",
        "raw",
        "roles",
        "server",
        "startup",
        "thread_defaults",
        "threads",
    )

    def __init__(self, server: Server, raw: dict, top: dict) -> None:
        self.server = server
        self.raw = raw
        self.name: str = raw["name"]
        self.channel_id: str = raw["channelId"]
        self.path: str = norm_path(raw["projectPath"])
        self.model: str | None = raw.get("model")
        self.startup: bool = bool(raw.get("startup", False))
        self.permission: str | None = raw.get("permission")
        self.progress: bool = bool(raw.get("progress", True))  # live status messages per turn
        self.roles = parse_roles(raw.get("roles"))  # added to the server's, here
        self.thread_defaults: dict = raw.get("thread") or {}
        self.threads: list[ThreadEntry] = [ThreadEntry(t) for t in raw.get("threads") or []]
        self.agent: str = raw.get("agent") or DEFAULT_AGENT  # the CLI its sessions run
        self.claude_command: str = _inherited(raw, server, top, "claudeCommand") or "claude"
        self.codex_command: str = _inherited(raw, server, top, "codexCommand") or "codex"
        # Claude Code runs this much nicer than the bot, so relays keep a core under load.
        self.claude_nice: int = next(
            (int(level["claudeNice"]) for level in (raw, server.raw, top) if "claudeNice" in level),
            CLAUDE_NICE,
        )
        self.claude_args: list[str] = list(_inherited(raw, server, top, "claudeArgs") or [])
        self.codex_args: list[str] = list(_inherited(raw, server, top, "codexArgs") or [])
        # The project's own ``budget`` replaces the top-level one's values it names.
        self.budget = Budget({**(top.get("budget") or {}), **(raw.get("budget") or {})})

    def __repr__(self) -> str:
        return f"<Project {self.name} #{self.channel_id} {self.path}>"


def _inherited(raw: dict, server: Server, top: dict, key: str) -> Any:
    """``key`` of the project, else of its server, else of the top level (a command left
    empty is not given; an empty list of arguments is)."""
    given = (lambda value: value) if key.endswith("Command") else (lambda value: value is not None)
    return next((level[key] for level in (raw, server.raw, top) if given(level.get(key))), None)


class Server:
    """One Discord bot (token) and its tmux session."""

    __slots__ = (
        "allowed_user_ids",
        "api_base",
        "gateway_url",
        "general_channel_id",
        "guild_id",
        "guild_ready_timeout",
        "hooks_post_directly",
        "index",
        "name",
        "owner_id",
        "permission_tools",
        "projects",
        "raw",
        "roles",
        "tmux_control",
        "tmux_session",
        "tmux_socket",
        "token",
    )

    def __init__(self, index: int, raw: dict, top: dict, env: dict) -> None:
        discord = raw["discord"]
        tmux = raw.get("tmux") or {}
        self.index = index
        self.raw = raw
        self.name: str = raw.get("name") or f"server{index}"
        self.token: str = discord["botToken"]
        self.guild_id: str | None = discord.get("guildId")
        self.owner_id: str = discord["ownerUserId"]
        self.allowed_user_ids = frozenset([self.owner_id, *discord.get("allowedUserIds", [])])
        self.api_base: str = (
            env.get(ENV_API_BASE) or discord.get("apiBaseUrl") or DEFAULT_API_BASE
        ).rstrip("/")
        self.gateway_url: str = (
            env.get(ENV_GATEWAY_URL) or discord.get("gatewayUrl") or DEFAULT_GATEWAY_URL
        )
        self.guild_ready_timeout: float = float(discord.get("guildReadyTimeout", 2.0))
        # False: the API lives only as long as the bot (`discord-bridge try`'s emulator): with
        # no bot running, hooks leave their messages in the outbox for it, never call the API.
        self.hooks_post_directly: bool = discord.get("hooksPostDirectly", True) is not False
        self.tmux_session: str = tmux.get("session") or DEFAULT_TMUX_SESSION
        self.tmux_socket: str | None = env.get(ENV_TMUX_SOCKET) or tmux.get("socketName")
        self.tmux_control: bool = bool(tmux.get("controlMode", TMUX_CONTROL_MODE))
        self.permission_tools: list[str] = list(raw.get("permissionTools", []))
        self.general_channel_id: str | None = raw.get("generalChannelId")
        self.roles = parse_roles(raw.get("roles"))
        self.projects = [Project(self, p, top) for p in raw["projects"]]

    def lists_permission_tool(self, tool: str) -> bool:
        """``tool`` is in ``permissionTools`` (a name, or a prefix ending in ``*``)."""
        for pattern in self.permission_tools:
            if pattern == tool or (pattern.endswith("*") and tool.startswith(pattern[:-1])):
                return True
        return False

    def may_act(self, user_id: int | str) -> bool:
        """The owner and ``allowedUserIds``: they may do everything (roles may do some)."""
        return str(user_id) in self.allowed_user_ids

    def grant(
        self,
        user_id: int | str,
        role_ids: list[str],
        action: str = DRIVE,
        project: Project | None = None,
    ) -> str | None:
        """Why this user (with these Discord role ids) may do ``action`` (``watch``, ``drive``,
        ``approve``: ``bridge/config/roles.py``) in ``project`` (None: outside any): "owner",
        "allowedUserIds", "role <id>"; None if they may not."""
        if str(user_id) == self.owner_id:
            return "owner"
        if str(user_id) in self.allowed_user_ids:
            return "allowedUserIds"
        for roles in (self.roles, project.roles if project else {}):
            role = granted_by(roles, role_ids, action)
            if role is not None:
                return f"role {role}"
        return None

    def project_for_channel(self, channel_id: int | str) -> Project | None:
        channel_id = str(channel_id)
        for project in self.projects:
            if project.channel_id == channel_id:
                return project
        return None

    def __repr__(self) -> str:
        return f"<Server {self.name} {len(self.projects)} projects>"


class VoiceSettings:
    """``voice``: how voice messages are transcribed (``bridge/voice``)."""

    __slots__ = ("engine", "language", "max_reply_seconds", "max_seconds", "model", "replies")

    def __init__(self, raw: dict) -> None:
        self.engine: str = raw.get("engine", DEFAULT_VOICE_ENGINE)
        self.model: str = raw.get("model", DEFAULT_VOICE_MODEL)
        self.max_seconds: float = float(raw.get("maxSeconds", DEFAULT_VOICE_MAX_SECONDS))
        self.language: str | None = raw.get("language")  # None: the engine detects it
        self.replies: str = raw.get("replies", DEFAULT_VOICE_REPLIES)  # when replies are spoken
        self.max_reply_seconds: float = float(
            raw.get("maxReplySeconds", DEFAULT_VOICE_MAX_REPLY_SECONDS)
        )

    def __repr__(self) -> str:
        return f"<VoiceSettings {self.engine} {self.model} ≤{self.max_seconds:g}s>"


class MetricsSettings:
    """``metrics``: ``enabled`` (default false), ``host`` (default loopback), ``port`` (0: a
    free port, logged), ``outbox_stuck`` seconds (``bot/operations/``)."""

    __slots__ = ("enabled", "host", "outbox_stuck", "port")

    def __init__(self, raw: dict) -> None:
        self.enabled: bool = raw.get("enabled", False) is True
        self.host: str = raw.get("host", DEFAULT_METRICS_HOST)
        self.port: int = int(raw.get("port", DEFAULT_METRICS_PORT))
        self.outbox_stuck = float(raw.get("outboxStuckSeconds", DEFAULT_OUTBOX_STUCK_SECONDS))

    def __repr__(self) -> str:
        return f"<MetricsSettings {'on' if self.enabled else 'off'} {self.host}:{self.port}>"


class BridgeConfig:
    """A validated config file. ``raw`` is the parsed JSON, kept whole for saving."""

    __slots__ = (
        "active_within",
        "attach_after",
        "audit_text",
        "auto_resume",
        "catch_up_minutes",
        "continue_prompt",
        "download_limit",
        "footer",
        "mention_owner",
        "metrics",
        "notify_when_attached",
        "path",
        "prompt_timeout",
        "prompt_timeout_outcome",
        "queue_prefix",
        "raw",
        "resume_margin",
        "retry_wait",
        "servers",
        "stall_minutes",
        "upload_limit",
        "voice",
    )

    def __init__(self, raw: object, path: str = "", env: dict | None = None) -> None:
        env = dict(os.environ) if env is None else env
        if isinstance(raw, dict) and raw.get("schemaVersion") != 2:
            from bridge.config.legacy import upgrade  # only then: hooks load v2 on every call

            raw = upgrade(raw)  # schemaVersion 1 is read as its v2 equivalent
        problems = validate(raw)
        if problems or not isinstance(raw, dict):  # validate() says so when it is not
            raise ConfigError(problems, path)
        self.raw = raw
        self.path = path
        limits = raw.get("attachments") or {}
        self.download_limit: int = int(limits.get("maxDownloadBytes", DEFAULT_DOWNLOAD_LIMIT))
        self.upload_limit: int = int(limits.get("maxUploadBytes", DEFAULT_UPLOAD_LIMIT))
        prompts = raw.get("prompts") or {}
        self.prompt_timeout: float = float(prompts.get("timeoutSeconds", DEFAULT_PROMPT_TIMEOUT))
        self.prompt_timeout_outcome: str = prompts.get("onTimeout", "deny")
        self.retry_wait: float = float(prompts.get("retryWaitSeconds", DEFAULT_RETRY_WAIT))
        replies = raw.get("replies") or {}
        self.footer: bool = bool(replies.get("footer", True))
        self.attach_after: int = int(replies.get("attachAfterMessages", DEFAULT_ATTACH_AFTER))
        notifications = raw.get("notifications") or {}
        self.mention_owner: bool = bool(notifications.get("mentionOwner", True))
        # Mention also while a tmux client is attached to the session and active (at the desk).
        self.notify_when_attached: bool = bool(notifications.get("whenAttached", False))
        self.active_within: float = float(
            notifications.get("activeWithinSeconds", ACTIVE_CLIENT_SECONDS)
        )
        self.queue_prefix: str = (raw.get("queue") or {}).get("prefix", DEFAULT_QUEUE_PREFIX)
        self.stall_minutes: float = float(raw.get("stallMinutes", DEFAULT_STALL_MINUTES))
        self.catch_up_minutes: float = float(
            raw.get("catchUpWindowMinutes", DEFAULT_CATCH_UP_MINUTES)
        )
        self.voice = VoiceSettings(raw.get("voice") or {})
        # a usage limit: resume at its reset (bot/away/watch.py)
        limits_at = raw.get("limits") or {}
        self.auto_resume: bool = limits_at.get("autoResume", True) is not False
        self.continue_prompt: str = limits_at.get("continuePrompt") or DEFAULT_CONTINUE_PROMPT
        self.resume_margin: float = float(
            limits_at.get("resumeMarginSeconds", DEFAULT_RESUME_MARGIN)
        )
        # audit.messageText: a typed message's text in the audit trail, not only its length
        self.audit_text: bool = (raw.get("audit") or {}).get("messageText") is True
        self.metrics = MetricsSettings(raw.get("metrics") or {})  # the operator's endpoint
        self.servers = [Server(i, s, raw, env) for i, s in enumerate(raw["servers"])]

    def projects(self) -> list[Project]:
        return [p for s in self.servers for p in s.projects]

    def project_for_channel(self, channel_id: int | str) -> Project | None:
        for server in self.servers:
            project = server.project_for_channel(channel_id)
            if project:
                return project
        return None

    def project_for_cwd(self, cwd: str) -> Project | None:
        """The project whose path is ``cwd`` or the longest one that contains it."""
        cwd = norm_path(cwd)
        best: Project | None = None
        for project in self.projects():
            longer = best is None or len(project.path) > len(best.path)
            if longer and contains(project.path, cwd):
                best = project
        return best
