"""Adding and removing a project while the bot runs (``/project add``, ``/project remove``).

The checks a new mapping must pass (:func:`check_directory`, :func:`project_name`,
:func:`check_new`), the edit of the config file (:func:`add_project`, :func:`remove_project`:
read afresh, atomic, other keys kept, serialised with every other writer), and the same
change to the loaded config the running bot uses (:func:`map_live`, :func:`unmap_live`), so
the relay, the session manager, the panel and the hooks all see it without a restart.

Not imported by the hooks.
"""

from __future__ import annotations

import os

from bridge.config.defaults import ConfigError, contains, norm_path
from bridge.config.files import edit_server
from bridge.config.model import BridgeConfig, Project, Server

NAME_MAX = 100  # Discord's limit for a channel name; tmux has none worth meeting


class Refused(ValueError):
    """The request cannot be done as asked; the message says why and what to do."""


def check_directory(path: str) -> str:
    """The real path of the directory ``path`` names (``~`` allowed), or :class:`Refused`.

    Only the file system is asked (``os.path``): nothing typed on Discord reaches a shell."""
    path = path.strip()
    if not path or "\0" in path or any(not c.isprintable() for c in path):
        raise Refused("Give the directory as an absolute path, e.g. `/home/you/code/app`.")
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        raise Refused(f"`{path}` is not an absolute path; give it from `/` (or `~/…`).")
    real = os.path.realpath(expanded)
    if not os.path.exists(real):
        raise Refused(f"`{path}` does not exist on this machine.")
    if not os.path.isdir(real):
        raise Refused(f"`{path}` is not a directory.")
    return real


def check_not_private(real_path: str, private: list[str]) -> None:
    """:class:`Refused` for a directory inside the bridge's own (its home with the config and
    tokens, the runtime and state directories): not a place for a Claude Code session."""
    for directory in private:
        if contains(os.path.realpath(directory), real_path):
            raise Refused(f"`{real_path}` is inside the bridge's own directory `{directory}`.")


def project_name(text: str) -> str:
    """``text`` as a project name that is both a Discord text channel name and a tmux window
    name: lower case letters (any script), digits, ``-`` and ``_``; anything else (spaces,
    ``: . ; #``, quotes, control characters) becomes ``-``; at most 100 characters."""
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in text.strip().lower())
    name = "-".join(part for part in name.split("-") if part)[:NAME_MAX].strip("-")
    return name


def mapped_to(cfg: BridgeConfig, real_path: str) -> Project | None:
    """The project already mapped to this directory (its configured or its real path)."""
    for project in cfg.projects():
        if real_path in (project.path, os.path.realpath(project.path)):
            return project
    return None


def channel_in_use(cfg: BridgeConfig, channel_id: str) -> str | None:
    """What the channel already is for this bridge (a project, a thread, a panel), if anything."""
    for server in cfg.servers:
        if server.general_channel_id == channel_id:
            return "the control panel's channel"
        for project in server.projects:
            if project.channel_id == channel_id:
                return f"project **{project.name}**'s channel"
            if any(t.channel_id == channel_id for t in project.threads):
                return f"a thread of project **{project.name}**"
    return None


def check_new(cfg: BridgeConfig, server: Server, real_path: str, name: str) -> None:
    """:class:`Refused` when the directory is mapped already or the name is taken. Nesting is
    allowed (a hook then posts to the longest path that holds its directory)."""
    taken = mapped_to(cfg, real_path)
    if taken is not None:
        raise Refused(f"`{real_path}` is already project **{taken.name}** (<#{taken.channel_id}>).")
    if not name:
        raise Refused("Give the project a name of letters or digits (`name:`).")
    if any(p.name == name for p in server.projects):
        raise Refused(f"A project is already named **{name}**; give another with `name:`.")


def new_entry(name: str, channel_id: str, real_path: str) -> dict:
    return {"name": name, "channelId": channel_id, "projectPath": real_path}


def add_project(path: str, server_index: int, entry: dict, token: str | None = None) -> None:
    """Append ``entry`` to ``servers[server_index].projects`` of the file (atomic, validated,
    every other key kept). :class:`ConfigError` when the file has it mapped meanwhile."""

    def add(server: dict) -> bool:
        projects = server.setdefault("projects", [])
        for other in projects if isinstance(projects, list) else []:
            other_path = other.get("projectPath") if isinstance(other, dict) else None
            if isinstance(other_path, str) and entry["projectPath"] in (
                norm_path(other_path),
                os.path.realpath(norm_path(other_path)),
            ):
                raise ConfigError([f"{entry['projectPath']} is already mapped in the file"])
            if isinstance(other, dict) and other.get("name") == entry["name"]:
                raise ConfigError([f"a project named {entry['name']!r} is already in the file"])
        projects.append(entry)
        return True

    edit_server(path, server_index, add, token)


def remove_project(path: str, server_index: int, channel_id: str, token: str | None = None) -> bool:
    """Take the project of ``channel_id`` (and its ``threads[]``) out of the file. False when
    it was no longer there. :class:`ConfigError` for the last project of a server (a server
    needs one)."""

    def remove(server: dict) -> bool:
        projects = server.get("projects")
        if not isinstance(projects, list):
            return False
        kept = [p for p in projects if not _is_channel(p, channel_id)]
        if len(kept) == len(projects):
            return False
        if not kept:
            raise ConfigError(["a bot needs at least one project: add another one first"])
        server["projects"] = kept
        return True

    return edit_server(path, server_index, remove, token)


def _is_channel(project: object, channel_id: str) -> bool:
    return isinstance(project, dict) and project.get("channelId") == channel_id


def map_live(cfg: BridgeConfig, server: Server, entry: dict) -> Project:
    """The new project in the loaded config (what the relay, sessions, panel and commands
    read), as it is now in the file."""
    project = Project(server, entry, cfg.raw)
    server.projects.append(project)
    server.raw.setdefault("projects", []).append(entry)
    return project


def unmap_live(server: Server, project: Project) -> None:
    server.projects[:] = [p for p in server.projects if p is not project]
    raw_projects = server.raw.get("projects") or []
    raw_projects[:] = [p for p in raw_projects if p is not project.raw]
