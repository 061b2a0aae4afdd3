"""The private runtime directory: where it is, that it is safe, and atomic file I/O inside it.

Layout (all 0700 directories, 0600 files)::

    $DISCORD_BRIDGE_RUNTIME_DIR/
      uploads/<channel>/      files downloaded from Discord messages (Claude reads them)
      outputs/<channel>/      files Claude wants to send ([DISCORD_ATTACH: name] resolves here)
      outbox/                 messages a hook could not deliver; the bot drains them in order
      sessions/<channel>.json what a session's SessionStart hook reported (session id, cwd)
      status/<session>.json   model, context and cost the statusLine command last saw (footer)
      state/<channel>.json    the bot's record per channel/thread: pane, worktree, wanted state
      state/panel-<ch>.json   the control panel's message id
      logs/hooks.log          errors and notes from hook processes

Only the standard library's ``os`` is used: hooks import this module on their fast path.
"""

from __future__ import annotations

import os
import stat

ENV_HOME = "DISCORD_BRIDGE_HOME"
ENV_CONFIG = "DISCORD_BRIDGE_CONFIG"  # set by `run --config` on the panes it starts
ENV_RUNTIME_DIR = "DISCORD_BRIDGE_RUNTIME_DIR"

SUBDIRS = (
    "uploads",
    "outputs",
    "outbox",
    "sessions",
    "prompts",
    "progress",
    "waits",
    "status",
    "state",
    "logs",
)


class UnsafeRuntimeDir(Exception):
    """The runtime directory is a symlink, someone else's, or readable by others."""


def bridge_home(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """``$DISCORD_BRIDGE_HOME``, default ``~/.discord-bridge``: config and long-lived state."""
    env = os.environ if env is None else env
    return env.get(ENV_HOME) or os.path.join(os.path.expanduser("~"), ".discord-bridge")


def config_path(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """``$DISCORD_BRIDGE_CONFIG``, else ``config.json`` in the bridge home."""
    env = os.environ if env is None else env
    return env.get(ENV_CONFIG) or os.path.join(bridge_home(env), "config.json")


def runtime_dir_path(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """Where the runtime directory lives; see the module docstring for the order."""
    env = os.environ if env is None else env
    if env.get(ENV_RUNTIME_DIR):
        return env[ENV_RUNTIME_DIR]
    if env.get("XDG_RUNTIME_DIR"):
        return os.path.join(env["XDG_RUNTIME_DIR"], "discord-bridge")
    return f"/tmp/discord-bridge-{os.getuid()}"


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
    """Paths inside the runtime directory. Call :meth:`ensure` before writing anything."""

    def __init__(self, root: str | None = None) -> None:
        self.root = root or runtime_dir_path()

    def ensure(self) -> Runtime:
        parent = os.path.dirname(self.root.rstrip("/"))
        if parent and not os.path.isdir(parent):
            os.makedirs(parent, 0o700, exist_ok=True)
        ensure_private_dir(self.root)
        for name in SUBDIRS:
            ensure_private_dir(os.path.join(self.root, name))
        return self

    def path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

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
