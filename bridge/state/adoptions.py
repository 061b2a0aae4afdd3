"""Which adopted Claude Code session posts where: one record per Claude ``session_id``.

A session the bridge did not start (``/sessions`` → Adopt: ``bridge/sessions/adoption.py``)
carries none of the bridge's env markers, so its hooks cannot tell whose they are from their
environment, and guessing from the cwd would send a stranger's session to a channel. At
adoption the bot records the conversation's ``session_id`` here (``adopted/<id>.json`` in the
private state dir: written atomically, read without following links); every hook event
carries that id (``bridge/handlers/context.py``). Release keeps the record, marked released:
from then on that session's hooks post nowhere, as before it was adopted, even in a project's
directory. Only the standard library's ``os`` at import: hooks read this on their fast path.

A hand-started session's hooks take the bridge home's config and dirs (``locations.py``), so
the record of a bot with a config of its own (``discord-bridge try``, ``run --config``) is not
where they look. That bot also routes the session to itself in the bridge home
(``adopted-sessions.json``: session id → its config file and its process), and a hook of a
session that has no pane marker follows that route (:func:`follow_route`) while the bot runs:
to its config, only if registered (``run-configs``), and that config's own dirs, where the
record above decides. Release removes the route, and so does the bot when it stops; a route
left by a bot that was killed (its pid gone, or another process's now) is ignored: a session
the user started by hand is the user's again once the bot that adopted it is gone (``try``'s
own panes, by contrast, spool for its next run), and a restarted bot routes it again. The
file is written by the bot only and read only when it is a private regular file of this user:
nothing a repository or the model sets (env, cwd, ``settings.json``) names the config or the
dirs a hook goes to.
"""

from __future__ import annotations

import os

from bridge.state import locations, private_files, runtime
from bridge.state.runtime import ENV_CONFIG, ENV_RUNTIME_DIR

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeGuard

ROUTES = "adopted-sessions.json"  # in the bridge home: adopted session id → the adopting bot


def is_session_id(value: object) -> TypeGuard[str]:
    """A Claude session id as the CLI makes them (a UUID): safe as a file name."""
    return (
        isinstance(value, str)
        and 8 <= len(value) <= 64
        and value.isascii()
        and all(c.isalnum() or c == "-" for c in value)
    )


def record_path(rt: runtime.Runtime, session_id: str) -> str:
    if not is_session_id(session_id):
        raise ValueError(f"not a Claude session id: {session_id[:70]!r}")
    return os.path.join(rt.path("adopted"), f"{session_id}.json")


def lookup(rt: runtime.Runtime, session_id: object) -> dict | None:
    """The adoption of ``session_id`` (``released`` set once given back), or None."""
    if not isinstance(session_id, str) or not is_session_id(session_id):
        return None
    return private_files.read_json(record_path(rt, session_id), 1 << 14)


def adopt(rt: runtime.Runtime, session_id: str, key: str, project: str, parent_id: str) -> dict:
    """Route ``session_id``'s hooks to thread ``key`` of ``project`` (channel ``parent_id``)."""
    from bridge import fastjson

    record = {"session_id": session_id, "key": key, "project": project, "parent_id": parent_id}
    os.makedirs(rt.path("adopted"), 0o700, exist_ok=True)
    private_files.write_atomic(record_path(rt, session_id), fastjson.dumps(record).encode())
    return record


def release(rt: runtime.Runtime, session_id: str) -> None:
    """Its hooks post nowhere from now on (the record stays, so the cwd does not route them)."""
    from bridge import fastjson

    record = lookup(rt, session_id) or {"session_id": session_id}
    record["released"] = True
    private_files.write_atomic(record_path(rt, session_id), fastjson.dumps(record).encode())


# --- routes: sessions adopted by a bot with a config of its own --------------------------


def routes_needed(config: str, env: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """A hand-started session's hooks would not find ``config`` by themselves: it is not the
    bridge home's default (``try``'s, or ``run --config``'s)."""
    env = os.environ if env is None else env
    default = runtime.config_path({**env, ENV_CONFIG: ""})
    return os.path.abspath(config) != os.path.abspath(default)


def follow_route(env: dict[str, str], session_id: object) -> bool:
    """Point a hook's locations ``env`` at the config and dirs of the running bot that adopted
    ``session_id`` with a config of its own, if one did (one failed ``open`` when none did:
    the cost on every hook call of a session without a pane marker). True if it did."""
    if not is_session_id(session_id):
        return False
    route = _routes(runtime.bridge_home(env)).get(session_id)
    if not isinstance(route, dict) or not _running(route):
        return False
    config, before = route.get("config"), env.get(ENV_RUNTIME_DIR)
    if not isinstance(config, str) or not locations.use_config(env, config):
        return False
    if env.get(ENV_RUNTIME_DIR) != before:  # the bot's own (try's): checked as the home's was
        env.pop(locations.REFUSED_RUNTIME_DIR, None)
        locations.check_runtime_dir(env)
    return True


def routed_to(session_id: object, env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The config file of the running bot ``session_id`` is routed to, or ``""``."""
    route = _routes(runtime.bridge_home(env)).get(session_id) if is_session_id(session_id) else None
    if not isinstance(route, dict) or not _running(route):
        return ""
    return route["config"] if isinstance(route.get("config"), str) else ""


def route(
    session_id: str, config: str, env: dict[str, str] | os._Environ[str] | None = None
) -> None:
    """Route ``session_id``'s hooks to this bot process and its ``config`` (at adoption, and
    for the live adoptions when the bot starts)."""
    if not is_session_id(session_id):
        raise ValueError(f"not a Claude session id: {session_id[:70]!r}")
    mine = {"config": os.path.abspath(config), "pid": os.getpid(), "start": _start(os.getpid())}
    _update(env, lambda routes: routes.__setitem__(session_id, mine), adding=True)


def unroute(session_id: str, env: dict[str, str] | os._Environ[str] | None = None) -> None:
    """Release: ``session_id``'s hooks no longer go to this bot (if they did)."""
    _update(env, lambda routes: _drop(routes, {session_id}))


def unroute_all(env: dict[str, str] | os._Environ[str] | None = None) -> None:
    """This bot stops: none of its adopted sessions' hooks go to it any more."""
    _update(env, lambda routes: _drop(routes, None))


def _drop(routes: dict, only: set[str] | None) -> None:
    """Drop this process's routes (of ``only`` those sessions)."""
    for session_id, entry in list(routes.items()):
        if (only is None or session_id in only) and entry.get("pid") == os.getpid():
            del routes[session_id]


def _update(
    env: dict[str, str] | os._Environ[str] | None,
    change: Callable[[dict], None],
    adding: bool = False,
) -> None:
    """Read, change and write the routes (atomically, private, under the file's lock: two bots
    adopting at once would otherwise each write what they read, and one route be lost);
    routes of bots that are gone are dropped on the way, and the file with the last one.
    Only bots write this file. ``adding``: ``change`` may add a route."""
    from bridge import fastjson

    home = runtime.bridge_home(env)
    path = os.path.join(home, ROUTES)
    if not adding and not os.path.lexists(path):
        return  # nothing to drop (the home's bot, which routes nothing, on every stop)
    runtime.ensure_private_dir(home)
    with private_files.Lock(path):
        found = _routes(home)
        routes = {k: v for k, v in found.items() if isinstance(v, dict) and _running(v)}
        change(routes)
        if routes == found:
            return
        if routes:
            private_files.write_atomic(path, fastjson.dumps(routes).encode())
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def _routes(home: str) -> dict:
    """The routes, or nothing when the file is missing, not a private regular file of this
    user (a link, someone else's, open to others), too big or not a JSON object."""
    return private_files.read_json(os.path.join(home, ROUTES), 1 << 16, own=True) or {}


def _running(route: dict) -> bool:
    """The route's bot still runs: its pid is the same process (same start time)."""
    pid, start = route.get("pid"), route.get("start")
    return isinstance(pid, int) and pid > 0 and start is not None and _start(pid) == start


def _start(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat``: when the process started (a reused pid differs).
    As ``bridge.sessions.machine.proc_start``, which this layer may not import."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode(errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 and fields[0] not in ("Z", "X") else None
