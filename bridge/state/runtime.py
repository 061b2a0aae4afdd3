"""The bridge's private directories: where they are and that they are safe.

State is split by lifetime. What a user would miss after a reboot lives in the **state
directory** on disk; what only matters while the machine is up lives in the **runtime
directory** (often a tmpfs the OS empties at reboot or logout). Both are 0700, files 0600::

    $DISCORD_BRIDGE_STATE_DIR/ (durable; default $XDG_STATE_HOME/discord-bridge,
                                else ~/.local/state/discord-bridge)
      uploads/<channel>/      files downloaded from Discord messages (Claude reads them)
      outputs/<channel>/      files Claude wants to send ([DISCORD_ATTACH: name] resolves here)
      outbox/                 messages a hook could not deliver; the bot drains them in order
      sessions/<channel>.json what a session's SessionStart hook reported (what --resume needs)
      state/<channel>.json    the bot's record per channel/thread: pane, worktree, wanted state
      state/panel-<ch>.json   the control panel's message id
      logs/hooks.log          errors and notes from hook processes
      schedules/<id>.json     scheduled prompts (bridge.state.schedules)
      away/                   usage-limit waits, reached budgets and their raises (state/away.py)
      audit/audit.jsonl       who did what, append-only, rotated (state/audit.py)

    $DISCORD_BRIDGE_RUNTIME_DIR/ (volatile; default $XDG_RUNTIME_DIR/discord-bridge,
                                  else /tmp/discord-bridge-<uid>)
      prompts/                open Discord prompts and their decisions
      progress/               turn events for the status messages
      waits/                  "the owner was pinged for this wait"
      status/<session>.json   model, context and cost the statusLine command last saw (footer)
      receipts/               message ids of handed-off posts (bridge.discord.handoff)
      bot.sock                the running bot's wake-up socket (hooks hand messages to it)
      screens/<channel>.json  messages held back while a Claude Code screen waits for an answer
      tools/<channel>.<call>  a tool call that has not ended (its mtime: when it started)
      hook-figures            the hooks' figures for the bot's metrics (state/hook_figures.py)

Files in them are written and read through ``bridge.state.private_files`` (atomic, never
following a link); hook processes find these directories through ``bridge.state.locations``.
Only the standard library's ``os`` and ``stat`` at import: hooks import this module on their
fast path.
"""

from __future__ import annotations

import os
import stat

from bridge.state import private_files

ENV_HOME = "DISCORD_BRIDGE_HOME"
ENV_CONFIG = "DISCORD_BRIDGE_CONFIG"  # set by `run --config` on the panes it starts
ENV_RUNTIME_DIR = "DISCORD_BRIDGE_RUNTIME_DIR"
ENV_STATE_DIR = "DISCORD_BRIDGE_STATE_DIR"
ENV_CHANNEL = "DISCORD_BRIDGE_CHANNEL_ID"  # on panes the bot starts: the project's channel
ENV_THREAD = "DISCORD_BRIDGE_THREAD_ID"  # and, for a thread's session, the thread

DURABLE = (
    "uploads", "outputs", "outbox", "sessions", "state", "logs", "usage", "schedules", "away",
    "adopted", "audit",
)  # fmt: skip  # survive a reboot
VOLATILE = ("prompts", "progress", "waits", "status", "receipts", "screens", "turns", "tools")
SUBDIRS = DURABLE + VOLATILE


class UnsafeRuntimeDir(Exception):
    """The runtime directory is a symlink, someone else's, or readable by others."""


# The shared temp dir every local user can write to. Not ``tempfile.gettempdir()``: that follows
# ``$TMPDIR``, which the bot's service and Claude Code's panes may not share; bot and hooks must
# compute the same path.
SHARED_TMP = "/tmp"


def bridge_home(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """``$DISCORD_BRIDGE_HOME``, default ``~/.discord-bridge``: config and long-lived state."""
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    return env.get(ENV_HOME) or os.path.join(home, ".discord-bridge")


def user_home() -> str:
    """The user's home directory from the password database, not from ``$HOME``."""
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return os.path.expanduser("~")


def is_private_dir(path: str) -> bool | None:
    """A private directory of ours (True), someone else's or open to others or a link (False),
    or missing (None). One ``lstat``: hooks pay this on every call."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    mine = info.st_uid == os.geteuid() and not info.st_mode & 0o077
    return stat.S_ISDIR(info.st_mode) and mine


def config_path(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """``$DISCORD_BRIDGE_CONFIG``, else ``config.json`` in the bridge home."""
    env = os.environ if env is None else env
    return env.get(ENV_CONFIG) or os.path.join(bridge_home(env), "config.json")


def runtime_dir_path(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """Where the runtime directory lives; see the module docstring for the order.

    Without ``XDG_RUNTIME_DIR`` the default is in the shared ``/tmp``, where another local user
    can create ``/tmp/discord-bridge-<uid>`` first: then (the name is taken by someone else or
    is not private) a private directory under the user's own home is used instead. The bot and
    every hook compute the same answer.
    """
    env = os.environ if env is None else env
    if env.get(ENV_RUNTIME_DIR):
        return env[ENV_RUNTIME_DIR]
    if env.get("XDG_RUNTIME_DIR"):
        return os.path.join(env["XDG_RUNTIME_DIR"], "discord-bridge")
    shared = shared_tmp_path()
    return shared if is_private_dir(shared) is not False else tmp_fallback_path(env)


def shared_tmp_path() -> str:
    """``/tmp/discord-bridge-<uid>``: the default in the shared temp dir (``SHARED_TMP``)."""
    return os.path.join(SHARED_TMP, f"discord-bridge-{os.getuid()}")


def tmp_fallback_path(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The runtime directory used when ``/tmp/discord-bridge-<uid>`` is someone else's."""
    return os.path.join(_home(env), ".cache", "discord-bridge", "runtime")


def state_dir_path(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """``$DISCORD_BRIDGE_STATE_DIR``, else ``$XDG_STATE_HOME/discord-bridge``, else
    ``~/.local/state/discord-bridge``: the state that must survive a reboot."""
    env = os.environ if env is None else env
    if env.get(ENV_STATE_DIR):
        return env[ENV_STATE_DIR]
    if env.get("XDG_STATE_HOME"):
        return os.path.join(env["XDG_STATE_HOME"], "discord-bridge")
    return os.path.join(_home(env), ".local", "state", "discord-bridge")


def _home(env: dict[str, str] | os._Environ[str] | None) -> str:
    """The home the default dirs are under: from the password database, like the hooks
    (``$HOME`` can differ between the bot's service and Claude Code's panes)."""
    return user_home()


def ensure_private_dir(path: str) -> str:
    """Create ``path`` (0700) if missing, then refuse it unless it is a real directory we own
    that nobody else can enter. Returns the path."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeRuntimeDir(f"{path} is a symlink; refusing to use it (remove it)")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeRuntimeDir(f"{path} is not a directory")
    if info.st_uid != os.geteuid():
        raise UnsafeRuntimeDir(f"{path} is owned by uid {info.st_uid}, not by you")
    if info.st_mode & 0o077:
        mode = oct(info.st_mode & 0o777)
        raise UnsafeRuntimeDir(f"{path} has mode {mode}; it must be private: chmod 700 {path}")
    return path


class Runtime:
    """Paths inside the runtime and state directories. Call :meth:`ensure` before writing.

    ``Runtime()`` uses the configured locations (environment, then defaults). ``Runtime(root)``
    alone keeps everything in ``root`` (tests, tools); ``Runtime(root, state_root)`` splits.
    """

    def __init__(self, root: str | None = None, state_root: str | None = None) -> None:
        self.root = root or runtime_dir_path()
        self.state_root = state_root or (self.root if root else state_dir_path())

    @classmethod
    def from_env(cls, env: dict[str, str] | os._Environ[str] | None = None) -> Runtime:
        return cls(runtime_dir_path(env), state_dir_path(env))

    def ensure(self) -> Runtime:
        for root in {self.root, self.state_root}:
            parent = os.path.dirname(root.rstrip("/"))
            if parent and not os.path.isdir(parent):
                os.makedirs(parent, 0o700, exist_ok=True)
            ensure_private_dir(root)
        for name in SUBDIRS:
            ensure_private_dir(self.path(name))
        return self

    def path(self, *parts: str) -> str:
        durable = bool(parts) and parts[0] in DURABLE
        return os.path.join(self.state_root if durable else self.root, *parts)

    def move_legacy_state(self) -> list[str]:
        """Durable files an older bridge kept in the runtime directory move to the state
        directory (once: the old folders are gone afterwards). Returns what was moved."""
        if os.path.realpath(self.root) == os.path.realpath(self.state_root):
            return []
        moved = []
        for name in DURABLE:
            old = os.path.join(self.root, name)
            if os.path.isdir(old) and not os.path.islink(old):
                moved += _move_tree(old, self.path(name))
        return moved

    @property
    def uploads(self) -> str:
        return self.path("uploads")

    @property
    def outputs(self) -> str:
        return self.path("outputs")

    @property
    def outbox(self) -> str:
        return self.path("outbox")

    @property
    def sessions(self) -> str:
        return self.path("sessions")

    @property
    def prompts(self) -> str:
        return self.path("prompts")

    @property
    def progress(self) -> str:
        return self.path("progress")

    @property
    def waits(self) -> str:
        return self.path("waits")

    @property
    def status(self) -> str:
        return self.path("status")

    @property
    def state(self) -> str:
        return self.path("state")

    @property
    def hook_log(self) -> str:
        return self.path("logs", "hooks.log")

    @property
    def hook_figures(self) -> str:
        """The hooks' figures for the metrics (``state/hook_figures.py``)."""
        return self.path("hook-figures")

    def channel_dir(self, kind: str, channel_id: str) -> str:
        """``uploads/<channel>`` or ``outputs/<channel>``, created private."""
        if not (channel_id.isascii() and channel_id.isdigit()):
            raise ValueError(f"not a channel id: {channel_id!r}")
        return ensure_private_dir(self.path(kind, channel_id))


def _move_tree(source: str, target: str) -> list[str]:
    """Move every regular file under ``source`` into ``target`` (across file systems: copied
    to a temporary name, synced, renamed, then the original removed), keeping files already
    at ``target``; then remove ``source``. Symlinks are dropped, never followed."""
    import shutil

    moved = []
    # Bottom-up: an outbox entry's .files/ arrive before its .json, so a hook draining the new
    # outbox meanwhile never finds an entry without its files.
    for folder, _dirs, files in os.walk(source, topdown=False):
        relative = os.path.relpath(folder, source)
        destination = os.path.normpath(os.path.join(target, relative))
        os.makedirs(destination, 0o700, exist_ok=True)
        for name in files:
            old, new = os.path.join(folder, name), os.path.join(destination, name)
            if os.path.lexists(new):
                continue
            try:
                data = private_files.read_private(
                    old, 1 << 30
                )  # never follows a link, regular files only
            except OSError:
                continue
            private_files.write_atomic(new, data)
            moved.append(new)
    shutil.rmtree(source, ignore_errors=True)
    return moved
