"""Validation of a parsed config: each problem as ``json.path: what is wrong, how to fix it``."""

from __future__ import annotations

import os

from bridge.config.defaults import (
    AGENTS,
    DEFAULT_ATTACH_AFTER,
    DEFAULT_CATCH_UP_MINUTES,
    DEFAULT_PROMPT_TIMEOUT,
    DEFAULT_QUEUE_PREFIX,
    DEFAULT_RETRY_WAIT,
    DEFAULT_STALL_MINUTES,
    FORBIDDEN,
    ISOLATION_MODES,
    MAX_RETRY_WAIT,
    MAX_VOICE_SECONDS,
    PERMISSION_MODES,
    PROMPT_TIMEOUT_OUTCOMES,
    VOICE_ENGINES,
    VOICE_REPLIES,
    norm_path,
)
from bridge.config.roles import check_roles


def validate(raw: object) -> list[str]:
    """Every problem in ``raw``, each as ``json.path: what is wrong and how to fix it``."""
    problems: list[str] = []
    if not isinstance(raw, dict):
        return ["(top level): expected a JSON object"]
    _check_values(raw, problems)
    if problems:
        return problems
    if raw.get("schemaVersion") != 2:
        problems.append('schemaVersion: expected 2 (add "schemaVersion": 2)')
    _check_commands(raw, "", problems)
    _check_nice(raw, "", problems)
    _check_limits(raw.get("attachments"), problems)
    _check_sections(raw, problems)
    _check_away(raw, problems)
    if raw.get("metrics") is not None:  # (its checks are loaded only for a config that has it)
        from bridge.config.metrics_settings import check_metrics

        check_metrics(raw["metrics"], problems)
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


MAX_DEPTH = 64  # the bridge's own keys nest 5 deep; more is a mistake or an attack


def _check_values(raw: dict, problems: list[str]) -> None:
    """Anywhere in the file: no NaN or infinite number (JSON has none; Python's parser takes
    them), no NUL character in a string (no path, name or argument can hold one), no
    nesting deeper than :data:`MAX_DEPTH`. Iterative: a deep file cannot exhaust the stack."""
    stack: list[tuple[object, str, int]] = [(raw, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, float) and (value != value or value in (_INF, -_INF)):
            problems.append(f"{where}: expected a finite number (got {value!r})")
        elif isinstance(value, str) and "\0" in value:
            problems.append(f"{where}: contains a NUL character")
        elif isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                problems.append(f"{where}: nested more than {MAX_DEPTH} levels deep")
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and "\0" in key:
                    problems.append(f"{_join(where, repr(key))}: the key contains a NUL character")
                path = f"{where}[{key}]" if isinstance(value, list) else _join(where, str(key))
                stack.append((item, path, depth + 1))


_INF = float("inf")


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
        if not isinstance(discord.get("hooksPostDirectly", True), bool):
            problems.append(f"{where}.discord.hooksPostDirectly: expected true or false")
    tmux = server.get("tmux", {})
    if not isinstance(tmux, dict):
        problems.append(f'{where}.tmux: expected an object like {{"session": "bridge"}}')
    else:
        _check_name(tmux, "session", f"{where}.tmux", problems, required=False)
        _check_name(tmux, "socketName", f"{where}.tmux", problems, required=False)
        if not isinstance(tmux.get("controlMode", False), bool):
            problems.append(f"{where}.tmux.controlMode: expected true or false")
    _check_str_list(server, "permissionTools", where, problems)
    check_roles(server, where, problems)
    _check_snowflake(server, "generalChannelId", where, problems)
    _check_commands(server, where, problems)
    _check_nice(server, where, problems)
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
    check_roles(project, where, problems)
    _check_commands(project, where, problems)
    _check_nice(project, where, problems)
    _check_choice(project, "agent", AGENTS, where, problems)
    _check_budget(project.get("budget"), _join(where, "budget"), problems)
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
    _check_choice(obj, "agent", AGENTS, where, problems)
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
        ("prompts", "timeoutSeconds, onTimeout, retryWaitSeconds"),
        ("replies", "footer, attachAfterMessages"),
        ("notifications", "mentionOwner, whenAttached, activeWithinSeconds"),
        ("queue", "prefix"),
        ("audit", "messageText"),
        ("voice", "engine, model, maxSeconds, language, replies, maxReplySeconds"),
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
        wait = prompts.get("retryWaitSeconds", DEFAULT_RETRY_WAIT)
        if not _is_number(wait) or not 0 <= wait <= MAX_RETRY_WAIT:
            problems.append(
                "prompts.retryWaitSeconds: expected seconds between 0 (no Retry button) and 3600"
            )
    replies = raw.get("replies")
    if isinstance(replies, dict):
        _check_bool(replies, "footer", "replies", problems)
        after = replies.get("attachAfterMessages", DEFAULT_ATTACH_AFTER)
        if not isinstance(after, int) or isinstance(after, bool) or after < 1:
            problems.append("replies.attachAfterMessages: expected a whole number of messages ≥ 1")
    notifications = raw.get("notifications")
    if isinstance(notifications, dict):
        _check_bool(notifications, "mentionOwner", "notifications", problems)
        _check_bool(notifications, "whenAttached", "notifications", problems)
        within = notifications.get("activeWithinSeconds", 60)
        if not _is_number(within) or not 0 <= within <= 86400:
            problems.append("notifications.activeWithinSeconds: expected seconds, 0 to 86400")
    if isinstance(raw.get("audit"), dict):
        _check_bool(raw["audit"], "messageText", "audit", problems)
    queue = raw.get("queue")
    if isinstance(queue, dict):
        prefix = queue.get("prefix", DEFAULT_QUEUE_PREFIX)
        if (
            not isinstance(prefix, str)
            or not 1 <= len(prefix.strip()) <= 10
            or prefix != prefix.strip()
        ):
            problems.append("queue.prefix: expected 1 to 10 characters without spaces around")
    stall = raw.get("stallMinutes", DEFAULT_STALL_MINUTES)
    if not _is_number(stall) or not 0 < stall <= 1440:
        problems.append("stallMinutes: expected minutes above 0 and up to 1440 (fractions allowed)")
    window = raw.get("catchUpWindowMinutes", DEFAULT_CATCH_UP_MINUTES)
    if not _is_number(window) or not 0 <= window <= 1440:
        problems.append("catchUpWindowMinutes: expected minutes from 0 to 1440 (fractions allowed)")
    voice = raw.get("voice")
    if isinstance(voice, dict):
        _check_choice(voice, "engine", VOICE_ENGINES, "voice", problems)
        _check_optional_str(voice, "model", "voice", problems)
        _check_optional_str(voice, "language", "voice", problems)
        _check_choice(voice, "replies", VOICE_REPLIES, "voice", problems)
        reply_seconds = voice.get("maxReplySeconds", 1)
        if not _is_number(reply_seconds) or not 1 <= reply_seconds <= MAX_VOICE_SECONDS:
            problems.append(
                f"voice.maxReplySeconds: expected seconds between 1 and {MAX_VOICE_SECONDS:.0f}"
            )
        seconds = voice.get("maxSeconds", 1)
        if not _is_number(seconds) or not 1 <= seconds <= MAX_VOICE_SECONDS:
            problems.append(
                f"voice.maxSeconds: expected seconds between 1 and {MAX_VOICE_SECONDS:.0f}"
            )


def _check_away(raw: dict, problems: list[str]) -> None:
    """``limits`` (autoResume, continuePrompt, resumeMarginSeconds) and ``budget``."""
    limits = raw.get("limits")
    if limits is not None and not isinstance(limits, dict):
        problems.append("limits: expected an object (autoResume, continuePrompt)")
    elif isinstance(limits, dict):
        _check_bool(limits, "autoResume", "limits", problems)
        prompt = limits.get("continuePrompt", "continue")
        if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > 2000:
            problems.append("limits.continuePrompt: expected the text to type (1-2000 characters)")
        margin = limits.get("resumeMarginSeconds", 0)
        if not _is_number(margin) or not 0 <= margin <= 3600:
            problems.append("limits.resumeMarginSeconds: expected seconds between 0 and 3600")
    _check_budget(raw.get("budget"), "budget", problems)


def _check_budget(budget: object, where: str, problems: list[str]) -> None:
    if budget is None:
        return
    if not isinstance(budget, dict):
        problems.append(f"{where}: expected an object (sessionUsd, dayUsd, continueUsd)")
        return
    for key in ("sessionUsd", "dayUsd", "continueUsd"):
        if key in budget and (not _is_number(budget[key]) or not 0 < budget[key] <= 1e6):
            problems.append(f"{where}.{key}: expected dollars, a number above 0 (e.g. 5)")


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
    """Two projects may not share a directory: a hook could not tell them apart. Nesting is
    allowed (gnsrtk's "global" project at ``~`` with projects inside it): a hook without the
    bridge's markers posts to the project whose path is the longest prefix of its cwd."""
    seen: dict[str, str] = {}
    for i, server in enumerate(servers):
        for j, project in enumerate(server["projects"]):
            path, where = norm_path(project["projectPath"]), f"servers[{i}].projects[{j}]"
            if path in seen:
                problems.append(
                    f"{where}.projectPath: {path} is also {seen[path]}.projectPath; "
                    "give each project its own directory"
                )
            else:
                seen[path] = where


def _is_snowflake(value: object) -> bool:
    return isinstance(value, str) and value.isascii() and value.isdigit() and 15 <= len(value) <= 21


def _check_snowflake(
    obj: dict, key: str, where: str, problems: list, required: bool = False
) -> None:
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
    # tmux reads ':' and '.' in targets, ';' as a command separator, '#' as a format (``#(cmd)``
    # runs a command); tabs split our listings.
    ok = isinstance(value, str) and value.strip() and not any(c in value for c in FORBIDDEN)
    if not ok:
        problems.append(
            f"{where}.{key}: expected a non-empty name without : . ; # quotes, tabs or newlines"
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


def _check_commands(obj: dict, where: str, problems: list) -> None:
    """Each agent's command and extra arguments: ``claudeCommand``, ``codexArgs``, …"""
    for agent in AGENTS:
        _check_optional_str(obj, f"{agent}Command", where, problems)
        _check_str_list(obj, f"{agent}Args", where, problems)


def _check_str_list(obj: dict, key: str, where: str, problems: list) -> None:
    if key not in obj:
        return
    value = obj[key]
    if not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
        problems.append(f"{_join(where, key)}: expected an array of strings")


def _check_nice(obj: dict, where: str, problems: list) -> None:
    value = obj.get("claudeNice", 0)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 19:
        path = f"{where}.claudeNice" if where else "claudeNice"
        problems.append(f"{path}: expected a niceness from 0 to 19 (a number)")


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
