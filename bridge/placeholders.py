"""The example config's placeholder values, recognised before anything tries the network.

``install.sh`` copies ``config.example.json`` to ``~/.discord-bridge/config.json``. Its values
pass validation (the ids are well-formed snowflakes, the path is absolute), so without this a
first ``discord-bridge run`` would try to log in with ``PASTE-YOUR-BOT-TOKEN-HERE`` and fail
with a network error. :func:`find` names each placeholder left in a raw config by its JSON path
and says what to put there; ``run`` refuses to start and ``doctor`` reports them.
"""

from __future__ import annotations

import json
import re

from bridge.config import legacy

# config.example.json's ids are 1000000000000000NN: a 1, zeros and a counter, made up on
# purpose (a real snowflake's digits come from a timestamp and random-looking low bits).
_EXAMPLE_ID = re.compile(r"^10{14,16}\d{1,2}$")
# Words a template puts where the token goes; case-sensitive, so a real token (random
# base64url) practically never matches.
_TOKEN_WORDS = re.compile(r"PASTE[-_ ]|^YOUR[-_ ]|[-_ ]HERE$|^…$|^\.\.\.$|^<[^>]*>$")
_EXAMPLE_PATH = re.compile(r"^/home/you(/|$)|^/path/to(/|$)|^…$")

WHAT_TOKEN = (
    "your bot's token (discord.com/developers/applications → your application → Bot → Reset Token)"
)
WHAT_GUILD = "your Discord server's id (Developer Mode on, right-click the server → Copy Server ID)"
WHAT_OWNER = "your own user id (Developer Mode on, right-click your name → Copy User ID)"
WHAT_USER = "the user's id (right-click the user → Copy User ID), or remove the entry"
WHAT_GENERAL = "the id of the channel for the control panel (right-click it → Copy Channel ID)"
WHAT_PATH = "the absolute path of the project's directory on this machine (it must exist)"


def _what_channel(name: object) -> str:
    label = f" {name}" if isinstance(name, str) and name else ""
    return f"the id of the project{label}'s channel (right-click the channel → Copy Channel ID)"


def is_placeholder_id(value: object) -> bool:
    return isinstance(value, str) and (bool(_EXAMPLE_ID.match(value)) or value in ("…", "..."))


def is_placeholder_token(value: object) -> bool:
    return isinstance(value, str) and bool(_TOKEN_WORDS.search(value.strip()))


def is_placeholder_path(value: object) -> bool:
    return isinstance(value, str) and bool(_EXAMPLE_PATH.match(value))


def find(raw: object) -> list[tuple[str, str]]:
    """``(JSON path, what to put there)`` for each placeholder value left in ``raw``."""
    found: list[tuple[str, str]] = []
    if legacy.is_v1(raw):  # schemaVersion 1: one bot at the top level, named as it is written
        assert isinstance(raw, dict)
        upgraded = find(legacy.upgrade(raw))
        return [(where.removeprefix("servers[0]."), what) for where, what in upgraded]
    if not isinstance(raw, dict) or not isinstance(raw.get("servers"), list):
        return found
    for i, server in enumerate(raw["servers"]):
        if isinstance(server, dict):
            _server(server, f"servers[{i}]", found)
    return found


def _server(server: dict, where: str, found: list[tuple[str, str]]) -> None:
    discord = server.get("discord")
    if isinstance(discord, dict):
        if is_placeholder_token(discord.get("botToken")):
            found.append((f"{where}.discord.botToken", WHAT_TOKEN))
        if is_placeholder_id(discord.get("guildId")):
            found.append((f"{where}.discord.guildId", WHAT_GUILD))
        if is_placeholder_id(discord.get("ownerUserId")):
            found.append((f"{where}.discord.ownerUserId", WHAT_OWNER))
        users = discord.get("allowedUserIds")
        for j, user in enumerate(users if isinstance(users, list) else []):
            if is_placeholder_id(user):
                found.append((f"{where}.discord.allowedUserIds[{j}]", WHAT_USER))
    if is_placeholder_id(server.get("generalChannelId")):
        found.append((f"{where}.generalChannelId", WHAT_GENERAL))
    projects = server.get("projects")
    for j, project in enumerate(projects if isinstance(projects, list) else []):
        if isinstance(project, dict):
            _project(project, f"{where}.projects[{j}]", found)


def _project(project: dict, where: str, found: list[tuple[str, str]]) -> None:
    if is_placeholder_id(project.get("channelId")):
        found.append((f"{where}.channelId", _what_channel(project.get("name"))))
    if is_placeholder_path(project.get("projectPath")):
        found.append((f"{where}.projectPath", WHAT_PATH))
    threads = project.get("threads")
    for k, thread in enumerate(threads if isinstance(threads, list) else []):
        if isinstance(thread, dict):
            if is_placeholder_id(thread.get("channelId")):
                found.append((f"{where}.threads[{k}].channelId", "the thread's id, or remove it"))
            if is_placeholder_path(thread.get("projectPath")):
                found.append((f"{where}.threads[{k}].projectPath", WHAT_PATH))


def find_in_file(path: str) -> list[tuple[str, str]]:
    """:func:`find` on a config file; [] when it cannot be read or parsed (loading the config
    reports that, with the fix)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return find(json.load(handle))
    except (OSError, ValueError, RecursionError):
        return []


def explain(path: str, found: list[tuple[str, str]]) -> str:
    """The message ``run`` prints: which values to replace, one line each."""
    lines = [f"{path} still holds the example's placeholder values; replace them first:"]
    lines += [f"  {where}: put {what}" for where, what in found]
    lines.append("then check the file with: discord-bridge doctor")
    return "\n".join(lines)
