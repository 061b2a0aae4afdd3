"""The bridge's private directories: where they are, that they are safe, atomic file I/O.

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

Only the standard library's ``os`` is used: hooks import this module on their fast path.
"""

from __future__ import annotations

import os
import stat

ENV_HOME = "DISCORD_BRIDGE_HOME"
ENV_CONFIG = "DISCORD_BRIDGE_CONFIG"  # set by `run --config` on the panes it starts
ENV_RUNTIME_DIR = "DISCORD_BRIDGE_RUNTIME_DIR"
ENV_STATE_DIR = "DISCORD_BRIDGE_STATE_DIR"
ENV_CHANNEL = "DISCORD_BRIDGE_CHANNEL_ID"  # on panes the bot starts: the project's channel
ENV_THREAD = "DISCORD_BRIDGE_THREAD_ID"  # and, for a thread's session, the thread

DURABLE = ("uploads", "outputs", "outbox", "sessions", "state", "logs", "usage")  # survive a reboot
VOLATILE = ("prompts", "progress", "waits", "status", "receipts", "screens", "turns", "tools")
SUBDIRS = DURABLE + VOLATILE

# A hook cannot trust its environment (a project's .claude/settings.json sets it): it takes
# the bridge home, runtime and state dirs from its command line, written by `hooks install`.
HOOK_FLAGS = (
    ("--home", ENV_HOME),
    ("--runtime-dir", ENV_RUNTIME_DIR),
    ("--state-dir", ENV_STATE_DIR),
)
RUN_CONFIGS = "run-configs"  # in the bridge home: config files `run --config` was given
LOCATIONS = "locations.json"  # in the bridge home: the runtime and state dirs the bot uses
# In the bridge home: registered configs whose bot uses dirs of its own (`discord-bridge try`)
CONFIG_LOCATIONS = "config-locations.json"
# In a hook's locations: the runtime dir it was given but refused (not private and ours)
REFUSED_RUNTIME_DIR = "refused_runtime_dir"
UNCLAIMED_RUNTIME_DIR = "unclaimed_runtime_dir"  # and one that was missing (not created yet)


class UnsafeRuntimeDir(Exception):
    """The runtime directory is a symlink, someone else's, or readable by others."""


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


def hook_args(env: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """What ``hooks install`` writes on each hook's command line: always the bridge home (the
    hooks must find the same config as the bot), and the runtime and state dirs given by
    ``DISCORD_BRIDGE_RUNTIME_DIR`` / ``DISCORD_BRIDGE_STATE_DIR`` when it ran."""
    env = os.environ if env is None else env
    args = ["--home", os.path.abspath(bridge_home(env))]
    for flag, name in HOOK_FLAGS[1:]:
        if env.get(name):
            args += [flag, os.path.abspath(env[name])]
    return args


def record_locations(rt: Runtime, env: dict[str, str] | os._Environ[str] | None = None) -> None:
    """The bot tells the hooks which runtime and state dirs it uses (hooks installed without
    ``--runtime-dir`` / ``--state-dir`` read them here, not from their environment)."""
    from bridge import fastjson

    home = ensure_private_dir(bridge_home(env))
    record = {"runtime_dir": os.path.abspath(rt.root), "state_dir": os.path.abspath(rt.state_root)}
    path = os.path.join(home, LOCATIONS)
    if read_json(path, 1 << 12) != record:
        write_atomic(path, fastjson.dumps(record).encode())


def hook_locations(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The locations a hook process may trust, as an env dict for :func:`config_path`,
    :func:`runtime_dir_path` and :func:`bridge_home`.

    The bridge home, runtime and state dirs come from the hook's own command line
    (``--home``, ``--runtime-dir``, ``--state-dir``), else from what the bot recorded in the
    bridge home when it started (``locations.json``), else the defaults, with ``~`` from the
    password database; ``$DISCORD_BRIDGE_CONFIG`` only when it names a file that
    ``run --config`` registered in that bridge home. Nothing else is read from the
    environment (a project's settings, or Claude itself, can set it).

    A runtime dir found that way that is not a private directory of ours (after a reboot
    another user may have created ``/tmp/discord-bridge-<uid>`` first) is refused: the hooks
    use :func:`tmp_fallback_path` instead, as the bot does, and ``refused_runtime_dir`` says
    which was refused. One that is missing is left to :func:`claim_runtime_dir`.
    """
    env = {"HOME": user_home()}
    for flag, name in HOOK_FLAGS:
        if flag in argv[:-1]:
            env[name] = argv[argv.index(flag) + 1]
    # Not $XDG_RUNTIME_DIR / $XDG_STATE_HOME either: the dirs the running bot recorded, so the
    # hooks' decision files, hand-off socket and records are the ones the bot reads.
    recorded = read_json(os.path.join(bridge_home(env), LOCATIONS), 1 << 12) or {}
    for key, name in (("runtime_dir", ENV_RUNTIME_DIR), ("state_dir", ENV_STATE_DIR)):
        value = recorded.get(key)
        if name not in env and isinstance(value, str) and os.path.isabs(value):
            env[name] = value
    wanted = environ.get(ENV_CONFIG)
    if wanted and os.path.abspath(wanted) in registered_configs(env):
        env[ENV_CONFIG] = os.path.abspath(wanted)
        # A bot with its own dirs for this config (`try`) recorded them: they win.
        mapping = read_json(os.path.join(bridge_home(env), CONFIG_LOCATIONS), 1 << 16) or {}
        own = mapping.get(env[ENV_CONFIG])
        for key, name in (("runtime_dir", ENV_RUNTIME_DIR), ("state_dir", ENV_STATE_DIR)):
            value = own.get(key) if isinstance(own, dict) else None
            if isinstance(value, str) and os.path.isabs(value):
                env[name] = value
    chosen = env.get(ENV_RUNTIME_DIR)
    found = _private_dir(chosen) if chosen else True
    if (
        found is None and chosen
    ):  # gone (a reboot): claim_runtime_dir() creates it, if the hook has work
        env[UNCLAIMED_RUNTIME_DIR] = chosen
    elif not found:
        _refuse_runtime_dir(env)
    return env


def claim_runtime_dir(env: dict[str, str]) -> None:
    """Create the hook's runtime dir (private) if :func:`hook_locations` found it missing,
    before another local user can take the name; if one did meanwhile, refuse it."""
    path = env.pop(UNCLAIMED_RUNTIME_DIR, None)
    if path is None:
        return
    try:
        os.mkdir(path, 0o700)
    except FileNotFoundError:  # no parent either: Runtime.ensure() creates both, private
        pass
    except OSError:  # taken meanwhile (or cannot be created here): whose is it now?
        if not _private_dir(path):
            _refuse_runtime_dir(env)


def _private_dir(path: str) -> bool | None:
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


def _refuse_runtime_dir(env: dict[str, str]) -> None:
    # Someone else's (a reboot emptied /tmp and another user created the name first), open to
    # others, or a link: tool command lines, assistant text and hand-off wake-ups must not go
    # there. The private fallback is where the bot goes too when it starts.
    env[REFUSED_RUNTIME_DIR] = env[ENV_RUNTIME_DIR]
    env[ENV_RUNTIME_DIR] = tmp_fallback_path(env)


def record_config_locations(
    config: str, rt: Runtime, env: dict[str, str] | os._Environ[str] | None = None
) -> None:
    """A bot that keeps its runtime and state apart from the bridge home's bot (``discord-bridge
    try``) records its dirs for its own config, instead of :func:`record_locations`: hooks of
    the sessions it starts (``$DISCORD_BRIDGE_CONFIG``, registered) use them; every other
    hook keeps using the home's."""
    from bridge import fastjson

    home = ensure_private_dir(bridge_home(env))
    path = os.path.join(home, CONFIG_LOCATIONS)
    mapping = read_json(path, 1 << 16) or {}
    mine = {"runtime_dir": os.path.abspath(rt.root), "state_dir": os.path.abspath(rt.state_root)}
    if mapping.get(os.path.abspath(config)) != mine:
        mapping[os.path.abspath(config)] = mine
        write_atomic(path, fastjson.dumps(mapping).encode())


def registered_configs(env: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """Config files the bot was started with (``run --config``), listed in the bridge home."""
    try:
        data = read_private(os.path.join(bridge_home(env), RUN_CONFIGS), 1 << 16)
    except OSError:
        return []
    return [line for line in data.decode(errors="replace").splitlines() if line]


def register_config(path: str, env: dict[str, str] | os._Environ[str] | None = None) -> None:
    """Let the hooks of this bridge home read ``path`` (``run --config``); no-op for the
    default config. The list is private and written atomically."""
    path = os.path.abspath(path)
    default = os.path.abspath(config_path({**(env or os.environ), ENV_CONFIG: ""}))
    if "\n" in path or path == default:
        return
    known = registered_configs(env)
    if path in known:
        return
    home = bridge_home(env)
    os.makedirs(home, 0o700, exist_ok=True)
    lines = [*known, path][-100:]
    write_atomic(os.path.join(home, RUN_CONFIGS), ("\n".join(lines) + "\n").encode())


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
    shared = f"/tmp/discord-bridge-{os.getuid()}"
    return shared if _usable(shared) else tmp_fallback_path(env)


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


def _usable(path: str) -> bool:
    """Missing (we will create it), or a private directory of ours (not a symlink)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    private = not info.st_mode & 0o077 and info.st_uid == os.geteuid()
    return stat.S_ISDIR(info.st_mode) and private


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
                data = read_private(old, 1 << 30)  # never follows a link, regular files only
            except OSError:
                continue
            write_atomic(new, data)
            moved.append(new)
    shutil.rmtree(source, ignore_errors=True)
    return moved


_counter = 0


def write_atomic(path: str, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    The temporary file is created exclusively and without following symlinks, so a planted
    link cannot redirect the write; the rename replaces a link at ``path`` itself, never
    its target.
    """
    global _counter
    _counter += 1
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{_counter}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(tmp, path)
        _sync_directory(directory)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _sync_directory(directory: str) -> None:
    """Make the rename itself durable: a crash right after must not bring the old file back."""
    fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_private(path: str, max_bytes: int = 16 << 20) -> bytes:
    """Read a regular file without following a symlink at ``path``."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > max_bytes:
            raise OSError(f"{path} is larger than {max_bytes} bytes")
        return handle.read(max_bytes + 1)[:max_bytes]


def read_json(path: str, max_bytes: int = 16 << 20) -> dict | None:
    """A private JSON object file, or None when it is missing, unreadable or not an object."""
    from bridge import fastjson

    try:
        record = fastjson.loads(read_private(path, max_bytes))
    except (OSError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def append_log(path: str, line: str, max_bytes: int = 1 << 20) -> None:
    """Append a timestamped line to a private log file, starting afresh past ``max_bytes``."""
    import time

    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        if os.fstat(fd).st_size > max_bytes:
            os.ftruncate(fd, 0)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        os.write(fd, f"{stamp} [{os.getpid()}] {line.rstrip()}\n".encode())
    finally:
        os.close(fd)
