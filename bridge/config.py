"""Load, validate and save ``config.json`` (schemaVersion 2, compatible with gnsrtk/discord-bridge).

The bot and every hook validate the file the same way. Errors name the JSON path and the fix.
Writes are atomic and keep every key this module does not know.

This module is on the hooks' fast path: it imports only ``os`` and small bridge modules
(no ``json``, ``re``, ``dataclasses`` or ``typing`` at run time).
"""

from __future__ import annotations

import _thread
import os

from bridge import fastjson
from bridge.state import runtime

DEFAULT_API_BASE = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg/"
DEFAULT_TMUX_SESSION = "discord-bridge"
DEFAULT_DOWNLOAD_LIMIT = 50 * 1024 * 1024  # bytes accepted from one Discord attachment
DEFAULT_UPLOAD_LIMIT = 10 * 1024 * 1024  # Discord's default per-file upload limit
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "auto", "dontAsk")
ISOLATION_MODES = ("none", "worktree")
DEFAULT_PROMPT_TIMEOUT = 900.0  # seconds a Discord prompt waits before its timeout outcome
PROMPT_TIMEOUT_OUTCOMES = ("deny", "terminal")  # deny with a message / leave it to the terminal
DEFAULT_ATTACH_AFTER = 4  # a reply longer than this many messages is attached as a .md file
FORBIDDEN = ":.;'\"\\\t\n"  # in tmux session, socket and window names

ENV_API_BASE = "DISCORD_BRIDGE_API_BASE"
ENV_GATEWAY_URL = "DISCORD_BRIDGE_GATEWAY_URL"
ENV_TMUX_SOCKET = "DISCORD_BRIDGE_TMUX_SOCKET"


class ConfigError(ValueError):
    """The config file cannot be used; ``problems`` lists each ``path: what and how to fix``."""

    def __init__(self, problems: list[str], path: str = "") -> None:
        self.problems = problems
        self.path = path
        where = f"{path}: " if path else ""
        super().__init__(where + "invalid config:\n  " + "\n  ".join(problems))


class Project:
    """One mapped channel: a tmux window running Claude Code in ``path``."""

    __slots__ = (
        "channel_id",
        "claude_args",
        "claude_command",
        "model",
        "name",
        "path",
        "permission",
        "progress",
        "raw",
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
        self.path: str = _norm_path(raw["projectPath"])
        self.model: str | None = raw.get("model")
        self.startup: bool = bool(raw.get("startup", False))
        self.permission: str | None = raw.get("permission")
        self.progress: bool = bool(raw.get("progress", True))  # live status messages per turn
        self.thread_defaults: dict = raw.get("thread") or {}
        self.threads: list[dict] = raw.get("threads") or []
        self.claude_command: str = (
            raw.get("claudeCommand") or server.raw.get("claudeCommand") or top.get("claudeCommand")
        ) or "claude"
        self.claude_args: list[str] = list(
            raw.get("claudeArgs", server.raw.get("claudeArgs", top.get("claudeArgs", [])))
        )

    def __repr__(self) -> str:
        return f"<Project {self.name} #{self.channel_id} {self.path}>"


class Server:
    """One Discord bot (token) and its tmux session."""

    __slots__ = (
        "allowed_user_ids",
        "api_base",
        "gateway_url",
        "general_channel_id",
        "guild_id",
        "guild_ready_timeout",
        "index",
        "name",
        "owner_id",
        "permission_tools",
        "projects",
        "raw",
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
        self.tmux_session: str = tmux.get("session") or DEFAULT_TMUX_SESSION
        self.tmux_socket: str | None = env.get(ENV_TMUX_SOCKET) or tmux.get("socketName")
        self.permission_tools: list[str] = list(raw.get("permissionTools", []))
        self.general_channel_id: str | None = raw.get("generalChannelId")
        self.projects = [Project(self, p, top) for p in raw["projects"]]

    def may_act(self, user_id: int | str) -> bool:
        """Only the owner and ``allowedUserIds`` may drive sessions or answer prompts."""
        return str(user_id) in self.allowed_user_ids

    def project_for_channel(self, channel_id: int | str) -> Project | None:
        channel_id = str(channel_id)
        for project in self.projects:
            if project.channel_id == channel_id:
                return project
        return None

    def __repr__(self) -> str:
        return f"<Server {self.name} {len(self.projects)} projects>"


class BridgeConfig:
    """A validated config file. ``raw`` is the parsed JSON, kept whole for saving."""

    __slots__ = (
        "attach_after",
        "download_limit",
        "footer",
        "mention_owner",
        "path",
        "prompt_timeout",
        "prompt_timeout_outcome",
        "raw",
        "servers",
        "upload_limit",
    )

    def __init__(self, raw: dict, path: str = "", env: dict | None = None) -> None:
        env = dict(os.environ) if env is None else env
        problems = validate(raw)
        if problems:
            raise ConfigError(problems, path)
        self.raw = raw
        self.path = path
        limits = raw.get("attachments") or {}
        self.download_limit: int = int(limits.get("maxDownloadBytes", DEFAULT_DOWNLOAD_LIMIT))
        self.upload_limit: int = int(limits.get("maxUploadBytes", DEFAULT_UPLOAD_LIMIT))
        prompts = raw.get("prompts") or {}
        self.prompt_timeout: float = float(prompts.get("timeoutSeconds", DEFAULT_PROMPT_TIMEOUT))
        self.prompt_timeout_outcome: str = prompts.get("onTimeout", "deny")
        replies = raw.get("replies") or {}
        self.footer: bool = bool(replies.get("footer", True))
        self.attach_after: int = int(replies.get("attachAfterMessages", DEFAULT_ATTACH_AFTER))
        notifications = raw.get("notifications") or {}
        self.mention_owner: bool = bool(notifications.get("mentionOwner", True))
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
        cwd = _norm_path(cwd)
        best: Project | None = None
        for project in self.projects():
            longer = best is None or len(project.path) > len(best.path)
            if longer and _contains(project.path, cwd):
                best = project
        return best


def load(path: str | None = None, env: dict | None = None) -> BridgeConfig:
    """Read and validate the config file (default ``$DISCORD_BRIDGE_HOME/config.json``)."""
    path = path or runtime.config_path(env)
    try:
        with open(path, "rb") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise ConfigError(
            ["file not found: create it from config.example.json (./install.sh does)"], path
        ) from None
    try:
        raw = fastjson.loads(text)
    except ValueError as err:
        raise ConfigError([f"not valid JSON: {err}"], path) from None
    return BridgeConfig(raw, path, env)  # type: ignore[arg-type]


def save_raw(path: str, raw: dict) -> None:
    """Atomically replace the config file with ``raw`` (mode 0600), after validating it."""
    problems = validate(raw)
    if problems:
        raise ConfigError(problems, path)
    import json

    data = (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode()
    runtime.write_atomic(path, data, 0o600)


# --- threads ----------------------------------------------------------------------------

THREAD_KEYS = ("model", "permission", "isolation")
# Read-modify-write of the config file by any bot; _thread is built in (hooks import this).
_APPEND_LOCK = _thread.allocate_lock()


def find_channel(server: Server, channel_id: int | str) -> tuple[Project, dict | None] | None:
    """A project's own channel → ``(project, None)``; a thread listed in a project's
    ``threads[]`` → ``(project, entry)``; anything else → None."""
    channel_id = str(channel_id)
    for project in server.projects:
        if project.channel_id == channel_id:
            return project, None
        for entry in project.threads:
            if entry.get("channelId") == channel_id:
                return project, entry
    return None


def thread_settings(project: Project, entry: dict | None) -> dict:
    """The 3-layer merge ``threads[i]`` → ``project.thread`` → project: model, permission,
    isolation (default ``"none"``) and projectPath (``threads[i]`` or the project's)."""
    entry = entry or {}
    layers = (
        entry,
        project.thread_defaults,
        {"model": project.model, "permission": project.permission},
    )
    merged: dict = {}
    for key in THREAD_KEYS:
        merged[key] = next((layer[key] for layer in layers if layer.get(key) is not None), None)
    merged["isolation"] = merged["isolation"] or "none"
    path = entry.get("projectPath")
    merged["projectPath"] = _norm_path(path) if isinstance(path, str) else project.path
    return merged


def remember_thread(project: Project, entry: dict) -> None:
    """Add ``entry`` to the loaded config's view of the project (after :func:`append_thread`)."""
    if not any(t.get("channelId") == entry.get("channelId") for t in project.threads):
        project.threads.append(entry)


def append_thread(path: str, server_index: int, project_name: str, entry: dict) -> bool:
    """Add ``entry`` to the project's ``threads[]`` in the file at ``path``, atomically.

    The file is read afresh (the user may have edited it since the bot loaded it) and every
    other key and its order is kept; nothing is written when the thread is already listed.
    Returns True when the file changed. Serialised within the process: every server's bot
    appends to the same file, from worker threads.
    """
    with _APPEND_LOCK:
        return _append_thread(path, server_index, project_name, entry)


def _append_thread(path: str, server_index: int, project_name: str, entry: dict) -> bool:
    with open(path, "rb") as handle:
        raw = fastjson.loads(handle.read())
    if not isinstance(raw, dict):
        raise ConfigError(["(top level): expected a JSON object"], path)
    try:
        server = raw["servers"][server_index]
        project = next(p for p in server["projects"] if p.get("name") == project_name)
    except (KeyError, IndexError, TypeError, StopIteration):
        raise ConfigError([f"project {project_name!r} is no longer in the file"], path) from None
    threads = project.setdefault("threads", [])
    if any(t.get("channelId") == entry.get("channelId") for t in threads):
        return False
    threads.append(entry)
    save_raw(path, raw)
    return True


# --- validation -------------------------------------------------------------------------


def validate(raw: object) -> list[str]:
    """Every problem in ``raw``, each as ``json.path: what is wrong and how to fix it``."""
    problems: list[str] = []
    if not isinstance(raw, dict):
        return ["(top level): expected a JSON object"]
    if raw.get("schemaVersion") != 2:
        problems.append('schemaVersion: expected 2 (add "schemaVersion": 2)')
    _check_optional_str(raw, "claudeCommand", "", problems)
    _check_str_list(raw, "claudeArgs", "", problems)
    _check_limits(raw.get("attachments"), problems)
    _check_sections(raw, problems)
    servers = raw.get("servers")
    if not isinstance(servers, list) or not servers:
        problems.append("servers: expected a non-empty array of server objects")
        return problems
    for i, server in enumerate(servers):
        _check_server(server, f"servers[{i}]", problems)
    if not problems:
        _check_unique_channels(servers, problems)
        _check_project_paths(servers, problems)
    return problems


def _check_server(server: object, where: str, problems: list[str]) -> None:
    if not isinstance(server, dict):
        problems.append(f"{where}: expected an object")
        return
    _check_optional_str(server, "name", where, problems)
    discord = server.get("discord")
    if not isinstance(discord, dict):
        problems.append(f"{where}.discord: expected an object with botToken and ownerUserId")
    else:
        token = discord.get("botToken")
        if not isinstance(token, str) or not token.strip():
            problems.append(f"{where}.discord.botToken: expected the bot token string")
        _check_snowflake(discord, "ownerUserId", f"{where}.discord", problems, required=True)
        _check_snowflake(discord, "guildId", f"{where}.discord", problems)
        ids = discord.get("allowedUserIds", [])
        if not isinstance(ids, list) or not all(_is_snowflake(x) for x in ids):
            problems.append(f"{where}.discord.allowedUserIds: expected an array of user id strings")
        _check_url(discord, "apiBaseUrl", ("http://", "https://"), f"{where}.discord", problems)
        _check_url(discord, "gatewayUrl", ("ws://", "wss://"), f"{where}.discord", problems)
        timeout = discord.get("guildReadyTimeout", 2.0)
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout < 0:
            problems.append(f"{where}.discord.guildReadyTimeout: expected seconds (a number)")
    tmux = server.get("tmux", {})
    if not isinstance(tmux, dict):
        problems.append(f'{where}.tmux: expected an object like {{"session": "bridge"}}')
    else:
        _check_name(tmux, "session", f"{where}.tmux", problems, required=False)
        _check_name(tmux, "socketName", f"{where}.tmux", problems, required=False)
    _check_str_list(server, "permissionTools", where, problems)
    _check_snowflake(server, "generalChannelId", where, problems)
    _check_optional_str(server, "claudeCommand", where, problems)
    _check_str_list(server, "claudeArgs", where, problems)
    projects = server.get("projects")
    if not isinstance(projects, list) or not projects:
        problems.append(f"{where}.projects: expected a non-empty array of projects")
        return
    names: set[str] = set()
    for j, project in enumerate(projects):
        _check_project(project, f"{where}.projects[{j}]", problems)
        name = project.get("name") if isinstance(project, dict) else None
        if isinstance(name, str):
            if name in names:
                problems.append(f"{where}.projects[{j}].name: '{name}' is used twice")
            names.add(name)


def _check_project(project: object, where: str, problems: list[str]) -> None:
    if not isinstance(project, dict):
        problems.append(f"{where}: expected an object")
        return
    _check_name(project, "name", where, problems, required=True)
    _check_snowflake(project, "channelId", where, problems, required=True)
    _check_path(project, "projectPath", where, problems, required=True)
    _check_optional_str(project, "model", where, problems)
    _check_bool(project, "startup", where, problems)
    _check_bool(project, "progress", where, problems)
    _check_choice(project, "permission", PERMISSION_MODES, where, problems)
    _check_optional_str(project, "claudeCommand", where, problems)
    _check_str_list(project, "claudeArgs", where, problems)
    defaults = project.get("thread", {})
    if not isinstance(defaults, dict):
        problems.append(f"{where}.thread: expected an object (model, permission, isolation)")
    else:
        _check_thread_settings(defaults, f"{where}.thread", problems)
    threads = project.get("threads", [])
    if not isinstance(threads, list):
        problems.append(f"{where}.threads: expected an array")
        return
    for k, thread in enumerate(threads):
        twhere = f"{where}.threads[{k}]"
        if not isinstance(thread, dict):
            problems.append(f"{twhere}: expected an object")
            continue
        _check_optional_str(thread, "name", twhere, problems)
        _check_snowflake(thread, "channelId", twhere, problems, required=True)
        _check_path(thread, "projectPath", twhere, problems, required=False)
        _check_bool(thread, "startup", twhere, problems)
        _check_thread_settings(thread, twhere, problems)


def _check_thread_settings(obj: dict, where: str, problems: list[str]) -> None:
    _check_optional_str(obj, "model", where, problems)
    _check_choice(obj, "permission", PERMISSION_MODES, where, problems)
    _check_choice(obj, "isolation", ISOLATION_MODES, where, problems)


def _check_limits(limits: object, problems: list[str]) -> None:
    if limits is None:
        return
    if not isinstance(limits, dict):
        problems.append("attachments: expected an object with maxDownloadBytes / maxUploadBytes")
        return
    for key in ("maxDownloadBytes", "maxUploadBytes"):
        if key not in limits:
            continue
        value = limits[key]
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            problems.append(f"attachments.{key}: expected a positive number of bytes")


def _check_sections(raw: dict, problems: list[str]) -> None:
    """``prompts``, ``replies`` and ``notifications``: optional objects of known keys."""
    for section, hint in (
        ("prompts", "timeoutSeconds, onTimeout"),
        ("replies", "footer, attachAfterMessages"),
        ("notifications", "mentionOwner"),
    ):
        value = raw.get(section)
        if value is not None and not isinstance(value, dict):
            problems.append(f"{section}: expected an object ({hint})")
    prompts = raw.get("prompts")
    if isinstance(prompts, dict):
        timeout = prompts.get("timeoutSeconds", DEFAULT_PROMPT_TIMEOUT)
        if not _is_number(timeout) or not 10 <= timeout <= 86400:
            problems.append("prompts.timeoutSeconds: expected seconds between 10 and 86400")
        _check_choice(prompts, "onTimeout", PROMPT_TIMEOUT_OUTCOMES, "prompts", problems)
    replies = raw.get("replies")
    if isinstance(replies, dict):
        _check_bool(replies, "footer", "replies", problems)
        after = replies.get("attachAfterMessages", DEFAULT_ATTACH_AFTER)
        if not isinstance(after, int) or isinstance(after, bool) or after < 1:
            problems.append("replies.attachAfterMessages: expected a whole number of messages ≥ 1")
    notifications = raw.get("notifications")
    if isinstance(notifications, dict):
        _check_bool(notifications, "mentionOwner", "notifications", problems)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_unique_channels(servers: list, problems: list[str]) -> None:
    seen: dict[str, str] = {}

    def see(channel: object, where: str) -> None:
        if not isinstance(channel, str):
            return
        if channel in seen:
            problems.append(f"{where}: channel {channel} is already used by {seen[channel]}")
        else:
            seen[channel] = where

    for i, server in enumerate(servers):
        see(server.get("generalChannelId"), f"servers[{i}].generalChannelId")
        for j, project in enumerate(server["projects"]):
            see(project.get("channelId"), f"servers[{i}].projects[{j}].channelId")
            for k, thread in enumerate(project.get("threads", [])):
                see(thread.get("channelId"), f"servers[{i}].projects[{j}].threads[{k}].channelId")


def _check_project_paths(servers: list, problems: list[str]) -> None:
    """Two projects may not share or nest directories: a hook could not tell them apart."""
    paths: list[tuple[str, str]] = []
    for i, server in enumerate(servers):
        for j, project in enumerate(server["projects"]):
            paths.append((_norm_path(project["projectPath"]), f"servers[{i}].projects[{j}]"))
    for a, (path_a, where_a) in enumerate(paths):
        for path_b, where_b in paths[a + 1 :]:
            if _contains(path_a, path_b) or _contains(path_b, path_a):
                problems.append(
                    f"{where_b}.projectPath: {path_b} overlaps {where_a}.projectPath ({path_a}); "
                    "give each project its own directory"
                )


def _is_snowflake(value: object) -> bool:
    return isinstance(value, str) and value.isascii() and value.isdigit() and 15 <= len(value) <= 21


def _check_snowflake(obj: dict, key: str, where: str, problems: list, required=False) -> None:
    if key not in obj or obj[key] is None:
        if required:
            problems.append(f"{where}.{key}: missing; expected a snowflake string of digits")
        return
    if not _is_snowflake(obj[key]):
        problems.append(
            f"{where}.{key}: expected a snowflake string of digits (got {obj[key]!r}); "
            "copy the id with Discord's developer mode and quote it"
        )


def _check_name(obj: dict, key: str, where: str, problems: list, required: bool) -> None:
    value = obj.get(key)
    if value is None and not required:
        return
    # tmux reads ':' and '.' in targets, ';' as a command separator, tabs split our listings.
    ok = isinstance(value, str) and value.strip() and not any(c in value for c in FORBIDDEN)
    if not ok:
        problems.append(
            f"{where}.{key}: expected a non-empty name without : . ; quotes, tabs or newlines"
        )


def _check_path(obj: dict, key: str, where: str, problems: list, required: bool) -> None:
    value = obj.get(key)
    if value is None and not required:
        return
    if not isinstance(value, str) or not os.path.isabs(os.path.expanduser(value)):
        problems.append(f"{where}.{key}: expected an absolute directory path (got {value!r})")


def _check_optional_str(obj: dict, key: str, where: str, problems: list) -> None:
    if key not in obj:
        return
    value = obj[key]
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{_join(where, key)}: expected a non-empty string")


def _check_str_list(obj: dict, key: str, where: str, problems: list) -> None:
    if key not in obj:
        return
    value = obj[key]
    if not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
        problems.append(f"{_join(where, key)}: expected an array of strings")


def _check_bool(obj: dict, key: str, where: str, problems: list) -> None:
    if key in obj and not isinstance(obj[key], bool):
        problems.append(f"{where}.{key}: expected true or false")


def _check_choice(obj: dict, key: str, choices: tuple, where: str, problems: list) -> None:
    if key in obj and obj[key] not in choices:
        problems.append(f"{where}.{key}: expected one of {', '.join(choices)} (got {obj[key]!r})")


def _check_url(obj: dict, key: str, schemes: tuple, where: str, problems: list) -> None:
    value = obj.get(key)
    if value is not None and not (isinstance(value, str) and value.startswith(schemes)):
        problems.append(f"{where}.{key}: expected a URL starting with {' or '.join(schemes)}")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _norm_path(path: str) -> str:
    return os.path.normpath(os.path.expanduser(path))


def _contains(parent: str, child: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")
