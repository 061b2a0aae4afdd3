"""What ``discord-bridge try`` is given and where it keeps its files, before anything starts.

Its arguments read (the project directory, ``--listen``/``--port``, ``--budget``) with a
:class:`TryError` the user can act on, the names and ids derived from the project's path (its
channel's slug, the emulator's seed), its private dirs and the lock that keeps one ``try`` per
bridge home. Its own module: all of it is plain checks and paths, read by ``try``, its page and
``selftest`` alike, with nothing started yet.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import IO

from bridge.state import runtime

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TMUX_SESSION = "discord-bridge-try"
PANEL_CHANNEL = "control-panel"
OWNER = "alice"  # the emulator's seeded user the page acts as: the config's owner
SECOND_USER = "bob"  # the page's switcher acts as bob too: a member whose role drives only
LOCK_NAME = "lock"


class TryError(Exception):
    """Something the user must fix before ``try`` can start: said in one sentence."""


# ----- arguments ---------------------------------------------------------------------------


def project_dir(path: str | None) -> str:
    """The absolute project directory (default: the current one); it must exist."""
    full = os.path.abspath(os.path.expanduser(path or os.getcwd()))
    if not os.path.exists(full):
        raise TryError(f"the project directory {full} does not exist")
    if not os.path.isdir(full):
        raise TryError(f"{full} is not a directory: give the project's directory")
    return full


def parse_listen(value: str | None, port: int | None) -> tuple[str, int]:
    """``--listen HOST`` or ``HOST:PORT`` (``[::]:8000`` for IPv6), ``--port`` otherwise."""
    host, chosen = DEFAULT_HOST, port
    if value:
        match = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?|([^:]+)(?::(\d+))?|([0-9a-fA-F:]+)", value)
        if not match:
            raise TryError(f"--listen {value!r}: give an address, e.g. 0.0.0.0 or 0.0.0.0:8765")
        host = match[1] or match[3] or match[5]
        given = match[2] or match[4]
        if given and chosen is None:
            chosen = int(given)
    chosen = DEFAULT_PORT if chosen is None else chosen
    if not 0 <= chosen <= 65535:
        raise TryError(f"port {chosen} is not a port number")
    return host, chosen


def parse_budget(value: str | None) -> float | None:
    """``--budget USD``: a session's spend budget, in dollars (``$`` allowed); None: none.
    Off by default: a newcomer is not stopped by a budget unless they ask for one."""
    if value is None:
        return None
    try:
        dollars = float(value.strip().removeprefix("$"))
    except ValueError:
        dollars = 0.0
    if not 0 < dollars <= 1e6:  # nan fails this too
        raise TryError(f"--budget {value!r}: give dollars a session may spend, e.g. 0.50")
    return dollars


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def slug(path: str) -> str:
    """A channel name for the project directory, as Discord would accept it (never the
    control panel's)."""
    name = re.sub(r"[^a-z0-9_-]+", "-", os.path.basename(path.rstrip("/")).lower()).strip("-")
    name = (name or "project")[:90]
    return f"{name}-project" if name == PANEL_CHANNEL else name


def seed_for(path: str, agent: str = "claude") -> int:
    """The emulator's seed: stable per project directory and agent, so its channel ids are
    too (the bot finds its Claude Code window and conversation again on the next ``try``), and
    different between directories. And between agents: the window a ``try`` leaves running is
    found by its channel's id, and ``try --agent codex`` must never type into the Claude Code
    that a plain ``try`` of the same directory left there (nor the other way round)."""
    named = path if agent == "claude" else f"{path}\0{agent}"
    return int(hashlib.sha256(named.encode()).hexdigest()[:8], 16) % 100_000


# ----- files -------------------------------------------------------------------------------


def try_root() -> str:
    return os.path.join(runtime.bridge_home(), "try")


def project_key(project: str) -> str:
    return f"{slug(project)}-{hashlib.sha256(project.encode()).hexdigest()[:8]}"


def work_dir(project: str) -> str:
    """The project's config and log: in the bridge home, with the home's config."""
    return os.path.join(try_root(), project_key(project))


def data_dir(project: str) -> str:
    """The project's runtime and state dirs: outside the bridge home, whose every file
    Claude's file tools are denied (the uploads Claude must read are in the state dir)."""
    return os.path.join(runtime.state_dir_path(), "try", project_key(project))


def private_dirs(*paths: str) -> None:
    """Each path created 0700 (its parent first, if missing) or checked private."""
    for path in paths:
        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        runtime.ensure_private_dir(path)


def take_lock(root: str) -> IO[str]:
    """One ``try`` at a time per bridge home: a second one says where the first one is."""
    import fcntl

    path = os.path.join(root, LOCK_NAME)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    handle = os.fdopen(fd, "r+")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read(4096).strip()
        handle.close()
        where = f" ({holder})" if holder else ""
        raise TryError(
            f"already running{where}: use that one, or stop it (Ctrl-C in its terminal) first"
        ) from None
    return handle


def note_holder(handle: IO[str], text: str) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(text)
    handle.flush()
