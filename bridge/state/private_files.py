"""Private file I/O: atomic writes, reads that never follow a symlink, one bounded log.

The files the bridge keeps in its private dirs (``bridge.state.runtime``) and in the bridge
home go through here, so that a link planted at a path redirects neither a write nor a read:
a write goes to an exclusively created temporary file renamed over the path, a read opens the
path itself with ``O_NOFOLLOW`` and takes a regular file only. Only the standard library's
``os``, ``stat`` and ``sys`` at import: hooks import this module on their fast path.

No fsync runs on an event loop's thread: the bot's loop carries every message, click and
status edit, and one fsync on a disk busy flushing held it ~40 s once in CI. A durable write
asked for there is written (and renamed) at once and put on disk by a worker thread a moment
later (:func:`write_atomic`), whichever state module asked for it.
"""

from __future__ import annotations

import os
import stat
import sys

_counter = 0


def write_atomic(path: str, data: bytes, mode: int = 0o600, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    The temporary file is created exclusively and without following symlinks, so a planted
    link cannot redirect the write; the rename replaces a link at ``path`` itself, never
    its target. ``durable``: also on disk when this returns (two fsyncs, 8 ms p50 on the
    shared 2-core machine's disk); without, a machine that loses power may lose the file,
    but no process sees it half written (:func:`make_durable` can finish the job later).
    Called on an event loop's thread, the fsyncs run in the loop's default executor instead,
    after this returns (readers see the new file at once all the same).
    """
    loop = _running_loop()
    if durable and loop is not None:
        _write(path, data, mode, durable=False)
        loop.run_in_executor(None, _make_durable_quietly, path)
        return
    _write(path, data, mode, durable)


def _running_loop():  # -> asyncio.AbstractEventLoop | None, without importing asyncio
    """The event loop running on this thread, if any (a hook process never imports asyncio)."""
    asyncio = sys.modules.get("asyncio")
    return asyncio._get_running_loop() if asyncio is not None else None


def _make_durable_quietly(path: str) -> None:
    try:
        make_durable(path)
    except OSError:  # its folder removed meanwhile: nothing left to keep
        pass


def _write(path: str, data: bytes, mode: int, durable: bool) -> None:
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
            if durable:
                os.fsync(handle.fileno())
        os.rename(tmp, path)
        if durable:
            _sync_directory(directory)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def make_durable(path: str) -> None:
    """Put a file :func:`write_atomic` wrote with ``durable=False`` (or a directory) on disk,
    with its name. A file that is gone meanwhile (taken by its reader) is fine."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    _sync_directory(os.path.dirname(path))


def _sync_directory(directory: str) -> None:
    """Make the rename itself durable: a crash right after must not bring the old file back."""
    fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Lock:
    """An exclusive lock across processes for a read-modify-write of ``path`` (``with
    Lock(path): read, change, write_atomic``): two bots updating a shared file at once would
    otherwise each write what they read, and one's entry be lost.

    The lock is taken (``flock``) on ``.<name>.lock`` beside ``path``, not on ``path`` itself,
    which each atomic write replaces (a lock on it would hold the old file). The lock file is
    opened without following a link and must be a private regular file of this user: a link
    or someone else's file planted there raises ``OSError`` rather than be locked or created
    through. The kernel drops the lock when its holder exits, killed or not. Blocking: hold it
    for one short update only (its writer's fsyncs, ~10 ms).
    """

    def __init__(self, path: str) -> None:
        directory, name = os.path.split(path)
        self.path = os.path.join(directory, f".{name}.lock")
        self._fd = -1

    def __enter__(self) -> Lock:
        import fcntl

        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        fd = os.open(self.path, flags, 0o600)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                raise OSError(f"{self.path} is not a regular file of this user")
            if info.st_mode & 0o077:
                raise OSError(f"{self.path} is open to other users")
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        fd, self._fd = self._fd, -1
        os.close(fd)  # releases the lock


def read_private(path: str, max_bytes: int = 16 << 20, own: bool = False) -> bytes:
    """Read a regular file without following a symlink at ``path``. ``own``: only a file of
    this user that nobody else may read or write (mode 0600 or less), as :func:`write_atomic`
    writes them: a file that decides where a hook goes is not taken from anyone else."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if own and (info.st_uid != os.geteuid() or info.st_mode & 0o077):
            raise OSError(f"{path} is not a private file of this user")
        if info.st_size > max_bytes:
            raise OSError(f"{path} is larger than {max_bytes} bytes")
        return handle.read(max_bytes + 1)[:max_bytes]


def read_json(path: str, max_bytes: int = 16 << 20, own: bool = False) -> dict | None:
    """A private JSON object file, or None when it is missing, unreadable or not an object
    (``own``: or not this user's private file, :func:`read_private`)."""
    from bridge import fastjson

    try:
        record = fastjson.loads(read_private(path, max_bytes, own))
    except (OSError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def append_if_there(path: str, line: str) -> None:
    """Append ``line`` to ``path`` only if the file exists (its reader made it), never through
    a link; never raises. The hooks' figures for the metrics (``state/hook_figures.py``): one
    failed ``open`` while no bot reads them."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(fd, line.encode())
    except OSError:
        pass
    finally:
        os.close(fd)


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
