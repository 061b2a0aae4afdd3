"""Reading and writing ``config.json``: load, atomic save, and editing one server's entry
(adding a thread; ``bridge/config/projects.py`` adds and removes projects).

Writes are atomic and keep every key the bridge does not know (and their order).
"""

from __future__ import annotations

import _thread
import os

from bridge import fastjson
from bridge.config.defaults import ConfigError
from bridge.config.model import BridgeConfig, Project, Server, ThreadEntry
from bridge.config.validate import validate
from bridge.state import private_files, runtime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable


def load(path: str | None = None, env: dict | None = None) -> BridgeConfig:
    """Read and validate the config file (default ``$DISCORD_BRIDGE_HOME/config.json``)."""
    path = path or runtime.config_path(env)
    text = _read(path)
    try:
        raw = fastjson.loads(text)
    except ValueError as err:
        raise ConfigError([f"not valid JSON: {err}"], path) from None
    except RecursionError:
        raise ConfigError(["not valid JSON: nested too deeply"], path) from None
    return BridgeConfig(raw, path, env)


MAX_CONFIG_BYTES = 16 << 20


def _read(path: str) -> bytes:
    """The file's bytes, or a :class:`ConfigError` that says what is wrong with the path."""
    if "\0" in path:
        raise ConfigError(["the config path contains a NUL character"], repr(path))
    try:
        with open(path, "rb") as handle:
            import stat

            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
                raise ConfigError([f"is {kind}: give the path of the config.json file"], path)
            if info.st_size > MAX_CONFIG_BYTES:
                raise ConfigError([f"larger than {MAX_CONFIG_BYTES >> 20} MiB"], path)
            return handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(
            ["file not found: create it from config.example.json (./install.sh does)"], path
        ) from None
    except IsADirectoryError:
        raise ConfigError(["is a directory: give the path of the config.json file"], path) from None
    except OSError as err:
        raise ConfigError([f"cannot read it: {err.strerror or err}"], path) from None


def save_raw(path: str, raw: dict) -> None:
    """Atomically replace the config file with ``raw`` (mode 0600), after validating it."""
    problems = validate(raw)
    if problems:
        raise ConfigError(problems, path)
    import json

    data = (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode()
    # A config.json that is a symlink (dotfile managers) stays one: the file it points to is
    # replaced, atomically, in its own directory.
    private_files.write_atomic(os.path.realpath(path), data, 0o600)


# --- threads ----------------------------------------------------------------------------

THREAD_KEYS = ("model", "permission", "isolation", "agent")
# Read-modify-write of the config file by any bot (threads, projects); _thread is built in
# (hooks import this).
_WRITE_LOCK = _thread.allocate_lock()


def find_channel(
    server: Server, channel_id: int | str
) -> tuple[Project, ThreadEntry | None] | None:
    """A project's own channel → ``(project, None)``; a thread listed in a project's
    ``threads[]`` → ``(project, entry)``; anything else → None."""
    channel_id = str(channel_id)
    for project in server.projects:
        if project.channel_id == channel_id:
            return project, None
        for entry in project.threads:
            if entry.channel_id == channel_id:
                return project, entry
    return None


def thread_settings(project: Project, entry: ThreadEntry | None) -> dict:
    """The 3-layer merge ``threads[i]`` → ``project.thread`` → project: model, permission,
    agent, isolation (default ``"none"``) and projectPath (``threads[i]`` or the project's)."""
    own = {key: getattr(entry, key) for key in THREAD_KEYS} if entry is not None else {}
    layers = (
        own,
        project.thread_defaults,
        {"model": project.model, "permission": project.permission, "agent": project.agent},
    )
    merged: dict = {}
    for key in THREAD_KEYS:
        merged[key] = next((layer[key] for layer in layers if layer.get(key) is not None), None)
    merged["isolation"] = merged["isolation"] or "none"
    own_path = entry.path if entry is not None else None
    merged["projectPath"] = own_path if own_path is not None else project.path
    return merged


def remember_thread(project: Project, entry: dict) -> None:
    """Add ``entry`` to the loaded config's view of the project (after :func:`append_thread`)."""
    if not any(t.channel_id == entry["channelId"] for t in project.threads):
        project.threads.append(ThreadEntry(entry))


def append_thread(
    path: str, server_index: int, project_name: str, entry: dict, token: str | None = None
) -> bool:
    """Add ``entry`` to the project's ``threads[]`` in the file at ``path``, atomically.

    The file is read afresh (the user may have edited it since the bot loaded it) and every
    other key and its order is kept; nothing is written when the thread is already listed.
    Returns True when the file changed.
    """

    def add(server: dict) -> bool:
        try:
            project = next(p for p in server["projects"] if p.get("name") == project_name)
        except (KeyError, TypeError, StopIteration):
            raise ConfigError([f"project {project_name!r} is no longer in the file"]) from None
        threads = project.setdefault("threads", [])
        if any(t.get("channelId") == entry.get("channelId") for t in threads):
            return False
        threads.append(entry)
        return True

    return edit_server(path, server_index, add, token)


def edit_server(
    path: str, server_index: int, change: Callable[[dict], bool], token: str | None = None
) -> bool:
    """Apply ``change`` to ``servers[server_index]`` of the file at ``path`` and write it back,
    validated and atomically; ``change`` returns False when there is nothing to write.

    The file is read afresh (the user may have edited it since the bot loaded it); every
    other key and its order is kept; a schemaVersion 1 file is written back as v2 (its
    original kept). Serialised within the process: every server's bot edits the same file,
    from worker threads. A :class:`ConfigError` raised by ``change`` names the file.
    ``token``: the running bot's; an entry at ``server_index`` with another token (the file's
    servers were reordered or edited since the bot loaded it) is refused, never edited.
    """
    with _WRITE_LOCK:
        original = _read(path)
        try:
            raw = fastjson.loads(original)
        except (ValueError, RecursionError) as err:
            raise ConfigError([f"not valid JSON: {err}"], path) from None
        if not isinstance(raw, dict):
            raise ConfigError(["(top level): expected a JSON object"], path)
        from bridge.config import legacy

        old_format = legacy.is_v1(raw)
        raw = legacy.upgrade(raw)  # written back as schemaVersion 2
        try:
            server = raw["servers"][server_index]
        except (KeyError, IndexError, TypeError):
            raise ConfigError([f"servers[{server_index}] is no longer in the file"], path) from None
        if token is not None and _token_of(server) != token:
            raise ConfigError(
                [
                    f"servers[{server_index}] is another bot's entry since the bot "
                    "started (servers reordered or edited?): restart it to load "
                    "the file as it is now"
                ],
                path,
            ) from None
        try:
            if not change(server):
                return False
        except ConfigError as err:
            raise ConfigError(err.problems, path) from None
        if old_format:
            _keep_v1_original(path, original, raw)
        save_raw(path, raw)
        return True


def _token_of(server: object) -> object:
    discord = server.get("discord") if isinstance(server, dict) else None
    return discord.get("botToken") if isinstance(discord, dict) else None


def _keep_v1_original(path: str, original: bytes, upgraded: dict) -> None:
    """Before a schemaVersion 1 file is rewritten as v2: keep its bytes as a backup, and say so
    in the log."""
    import logging

    from bridge.config import legacy

    problems = validate(upgraded)
    if problems:
        raise ConfigError(problems, path)  # nothing is written, the backup neither
    backup = legacy.backup_path(path)
    private_files.write_atomic(backup, original, 0o600)
    logging.getLogger(__name__).warning(
        "%s was a schemaVersion 1 config: rewrote it as schemaVersion 2 to save a change; "
        "the original is kept as %s",
        path,
        backup,
    )
