"""What a turn snapshot takes from the working tree, read without following anything.

git never reads a working-tree file for a snapshot (``bridge/sessions/changes.py`` says why).
The index is read by ``bridge/sessions/git_index.py``; this module runs the stat test
against its entries (:func:`stale`: every entry of a small index; of a large one, only those
git's own test, ``diff-files``, cannot vouch for), and opens the changed files and the
untracked ones ``git ls-files --others`` names
(:func:`scan`):

- every folder is opened relative to its parent with ``O_NOFOLLOW | O_DIRECTORY`` (a folder
  swapped for a symlink reads as gone: nothing outside the tree is reached, not even by a
  race), every file relative to its folder with ``O_NOFOLLOW | O_NONBLOCK``;
- only regular files and symlinks are content (a symlink's blob is its target, as git stores
  it); a FIFO, socket or device is never opened for reading;
- the open descriptors go to ``git hash-object --no-filters`` as ``/proc/self/fd/N`` (git reads
  the very file that was checked, whatever happens to the name meanwhile); a symlink's target
  goes the same way in a ``memfd``;
- the bridge's own folders and files (``private``: its home, config, runtime and state dirs)
  are never read: a tracked entry there keeps what the index holds, an untracked one is left
  out;
- untracked files over :data:`MAX_UNTRACKED_FILE` or beyond :data:`MAX_UNTRACKED` of them are
  left out and named.
"""

from __future__ import annotations

import os
import stat
import time

from bridge.sessions.git_index import (
    _BAD_PATH,
    _EXECUTABLE,
    _NS,
    _OPEN_DIR,
    _OPEN_FILE,
    _REGULAR,
    _SYMLINK,
    _U32,
    Refused,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_UNTRACKED_FILE = 8 << 20  # bytes: larger untracked files are not snapshotted
MAX_UNTRACKED = 5000  # untracked files beyond this are not snapshotted


def stale(
    root: str,
    compare: dict[bytes, tuple[int, ...]],
    private: set[tuple[int, int]],
    deadline: float | None,
) -> list[bytes]:
    """The paths of ``compare`` (in index order, so sorted) whose file fails the stat test
    against the index's fields: git's test, stricter (times to the nanosecond; an owner
    change moves ctime too). A file under a folder that is not a real one is gone. The
    loop is the hot path of a snapshot (2.5 µs a file): kept flat on purpose."""
    found: list[bytes] = []
    folders = _Folders(root, private)
    lstat, isreg, islnk, ixusr = os.stat, stat.S_ISREG, stat.S_ISLNK, stat.S_IXUSR
    last, folder, in_private = None, None, False
    try:
        for n, (path, fields) in enumerate(compare.items()):
            if n & 1023 == 0 and deadline is not None and time.monotonic() > deadline:
                raise Refused("no time left to read the working tree")
            parent, _, name = path.rpartition(b"/")
            if parent != last:
                folder, in_private = folders.at(parent)
                last = parent
            if in_private:
                continue
            if folder is None:  # its folder is gone, or is a symlink now
                found.append(path)
                continue
            try:
                info = lstat(name, dir_fd=folder, follow_symlinks=False)
            except OSError:
                found.append(path)
                continue
            mode = info.st_mode
            if isreg(mode):
                mode = _EXECUTABLE if mode & ixusr else _REGULAR
            elif islnk(mode):
                mode = _SYMLINK
            mtime, ctime = info.st_mtime_ns, info.st_ctime_ns
            if (
                fields[6] != mode
                or fields[3] != mtime % _NS
                or fields[2] != (mtime // _NS) & _U32
                or fields[9] != info.st_size & _U32
                or fields[1] != ctime % _NS
                or fields[0] != (ctime // _NS) & _U32
                or fields[5] != info.st_ino & _U32
            ) and (info.st_dev, info.st_ino) not in private:
                found.append(path)
    finally:
        folders.close()
    return found


def paths(out: bytes, name_status: bool = False) -> list[bytes]:
    """The paths of ``git ls-files -z`` (or, ``name_status``, ``git diff-files -z
    --name-status``) output. A folder listed with its slash (a repository of its own) is not
    listed."""
    fields = out.split(b"\0")
    if fields and not fields[-1]:
        fields.pop()
    if name_status:
        if len(fields) % 2:
            raise Refused("git diff-files printed something unexpected")
        fields = fields[1::2]
    return [p for p in fields if p and not p.endswith(b"/")]


def scan(
    root: str,
    changed: list[bytes],
    untracked: list[bytes],
    zero_oid: bytes,
    private: set[tuple[int, int]],
    hash_files: Callable[[list[int]], list[str]],
    batch: int,
    deadline: float | None,
) -> tuple[bytes, list[str]]:
    """Read the ``changed`` tracked paths and the ``untracked`` ones: ``(update-index -z
    --index-info input, skipped untracked files)``. ``private``: ``(st_dev, st_ino)`` of the
    bridge's folders and files; ``hash_files``: blob ids for open descriptors (``batch`` at
    most at a time)."""
    skipped = [os.fsdecode(p) for p in untracked[MAX_UNTRACKED:]]
    items = sorted(
        {**dict.fromkeys(untracked[:MAX_UNTRACKED], False), **dict.fromkeys(changed, True)}.items()
    )
    removed, added = bytearray(), bytearray()  # removals first: a file may replace a folder
    pending: list[tuple[int, bytes, int]] = []  # (mode, path, open descriptor)

    def flush() -> None:
        try:
            oids = hash_files([fd for _, _, fd in pending])
        finally:
            for _, _, fd in pending:
                os.close(fd)
        for (mode, path, _), oid in zip(pending, oids, strict=True):
            added.extend(b"%o %s\t%s\0" % (mode, oid.encode(), path))
        pending.clear()

    folders = _Folders(root, private)
    try:
        for n, (path, tracked) in enumerate(items):
            if n % 256 == 0 and deadline is not None and time.monotonic() > deadline:
                raise Refused("no time left to read the working tree")
            if _BAD_PATH.search(path):
                continue  # an index entry git itself would refuse: never read, left as it is
            parent, _, name = path.rpartition(b"/")
            folder, in_private = folders.at(parent)
            if not tracked:
                found = _untracked(folder, in_private, name, private, path, skipped)
            else:
                found = True if in_private else _tracked(folder, name, private)
                if found is False:
                    removed.extend(b"0 %s\t%s\0" % (zero_oid, path))
            if isinstance(found, tuple):
                pending.append((found[0], path, found[1]))
                if len(pending) >= batch:
                    flush()
        if pending:
            flush()
    finally:
        for _, _, fd in pending:
            os.close(fd)
        folders.close()
    return bytes(removed + added), sorted(skipped)


# What a path gives the snapshot: (mode, open descriptor) to hash; True: the index's entry
# as it is (tracked only); False: nothing (gone, or an untracked file left out).
Found = tuple[int, int] | bool


def _tracked(folder: int | None, name: bytes, private: set[tuple[int, int]]) -> Found:
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False) if folder is not None else None
    except OSError:
        info = None
    if info is None:
        return False
    if (info.st_dev, info.st_ino) in private:
        return True
    return _open_content(folder, name, info)


def _untracked(
    folder: int | None,
    in_private: bool,
    name: bytes,
    private: set[tuple[int, int]],
    path: bytes,
    skipped: list[str],
) -> Found:
    if in_private or folder is None:
        return False
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return False
    if (info.st_dev, info.st_ino) in private:
        return False
    if stat.S_ISREG(info.st_mode) and info.st_size > MAX_UNTRACKED_FILE:
        skipped.append(os.fsdecode(path))
        return False
    return _open_content(folder, name, info, MAX_UNTRACKED_FILE)


def _open_content(
    folder: int | None, name: bytes, info: os.stat_result, limit: int | None = None
) -> Found:
    """A regular file opened (never through a symlink, never blocking), or a symlink's target
    in a memfd; False for anything else (or a file that changed into one meanwhile)."""
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(name, dir_fd=folder)
        except OSError:
            return False
        fd = os.memfd_create("symlink", os.MFD_CLOEXEC)
        os.write(fd, target)
        return _SYMLINK, fd
    if not stat.S_ISREG(info.st_mode):
        return False
    try:
        fd = os.open(name, _OPEN_FILE, dir_fd=folder)
    except OSError:
        return False
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (limit is not None and opened.st_size > limit):
        os.close(fd)
        return False
    return (_EXECUTABLE if opened.st_mode & stat.S_IXUSR else _REGULAR), fd


class _Folders:
    """The open folders down to the current one (paths come sorted, so a stack): each opened
    relative to its parent without following a symlink. A folder that cannot be opened so
    reads as missing, and so does everything below it."""

    def __init__(self, root: str, private: set[tuple[int, int]]) -> None:
        self.private = private
        self.last: tuple[bytes, int | None, bool] | None = None
        self.stack: list[tuple[bytes, int | None, bool]] = [
            (b"", os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), False)
        ]

    def at(self, parent: bytes) -> tuple[int | None, bool]:
        """The descriptor of folder ``parent`` (relative to the root; None: not a real
        folder) and whether it is one of the bridge's own."""
        if self.last is not None and self.last[0] == parent:
            return self.last[1], self.last[2]
        while len(self.stack) > 1:
            top = self.stack[-1][0]
            if parent == top or parent.startswith(top + b"/"):
                break
            self._pop()
        prefix, fd, in_private = self.stack[-1]
        if prefix != parent:
            rest = parent[len(prefix) + 1 :] if prefix else parent
            for part in rest.split(b"/"):
                prefix = prefix + b"/" + part if prefix else part
                fd = self._open(fd, part)
                if fd is not None and not in_private:
                    info = os.fstat(fd)
                    in_private = (info.st_dev, info.st_ino) in self.private
                self.stack.append((prefix, fd, in_private))
        self.last = (parent, fd, in_private)
        return fd, in_private

    @staticmethod
    def _open(parent: int | None, name: bytes) -> int | None:
        if parent is None:
            return None
        try:
            return os.open(name, _OPEN_DIR, dir_fd=parent)
        except OSError:
            return None

    def _pop(self) -> None:
        self.last = None
        fd = self.stack.pop()[1]
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        while self.stack:
            self._pop()
