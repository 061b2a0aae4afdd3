"""What a turn snapshot takes from the working tree, read without following anything.

git never reads a working-tree file for a snapshot (``bridge/sessions/changes.py`` says why).
This module reads the index (a copy: a regular file under :data:`MAX_INDEX`, read against
the deadline, :func:`read_index`), runs the stat test against it (:func:`stale`: every entry
of a small index; of a large one, only those git's own test, ``diff-files``, cannot vouch
for), and opens the changed files and the untracked ones ``git ls-files --others`` names
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

import errno
import os
import re
import stat
import struct
import tempfile
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_UNTRACKED_FILE = 8 << 20  # bytes: larger untracked files are not snapshotted
MAX_UNTRACKED = 5000  # untracked files beyond this are not snapshotted
MAX_INDEX = 128 << 20  # bytes: a larger index is refused (400,000 files take about 40 MB)
# Up to this many entries the stat test runs here rather than in ``git diff-files``: a git
# process costs about 2 ms, the test here about 2.5 µs a file (2-core machine, 2000 files).
STAT_HERE = 1000
HERE_SHARE = 4  # ... and when one entry in this many needs the test here anyway
_CHUNK = 1 << 20
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
_BAD_PATH = re.compile(rb"(?:^|/)\.{0,2}(?:/|$)")  # an empty, "." or ".." part

# The index file (git's Documentation/gitformat-index.txt), versions 2 and 3: per entry ten
# 32-bit stat and mode fields, the object id, 16 bits of flags (3 and: 16 more), the path,
# NUL padding to a multiple of 8 bytes.
_STAT = struct.Struct(">10I")
_FLAGS = struct.Struct(">H")
_ASSUME_VALID, _EXTENDED, _NAME_MASK = 0x8000, 0x4000, 0x0FFF
_SKIP_WORKTREE, _INTENT_TO_ADD = 0x4000, 0x2000  # of the extended flags
_REGULAR, _EXECUTABLE, _SYMLINK, _GITLINK = 0o100644, 0o100755, 0o120000, 0o160000
# Extensions whose index cannot be read entry by entry here: a split index's entries are in
# another file, a sparse index has folder entries. ``git update-index --index-version 2``
# writes such an index (a copy) out whole first.
_NOT_WHOLE = (b"link", b"sdir")
_U32 = 0xFFFFFFFF
_NS = 1_000_000_000


class Refused(Exception):
    """The snapshot cannot be taken safely (or in time); the message says why."""


def copy_index(index: str, scratch: str, deadline: float | None) -> tuple[str, bytes, int]:
    """Copy the repository's index into ``scratch``: ``(the copy's path, its bytes, the
    index's mtime in ns)``. No index yet: a path git will create, ``b""`` and 0.
    :class:`Refused` for a symlink, a FIFO, a device, an index over :data:`MAX_INDEX`, or one
    that cannot be read before ``deadline``."""
    fd, copy = tempfile.mkstemp(prefix="index-", dir=scratch)
    try:
        try:
            source = os.open(index, _OPEN_FILE)
        except FileNotFoundError:
            os.close(fd)
            os.unlink(copy)  # a fresh repository: git starts an empty index
            return copy, b"", 0
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise Refused("the repository's index is a symlink: not followed") from err
            raise Refused(f"the repository's index cannot be read ({err.strerror})") from err
        try:
            info = os.fstat(source)
            if not stat.S_ISREG(info.st_mode):
                raise Refused("the repository's index is not a regular file")
            if info.st_size > MAX_INDEX:
                raise Refused(f"the repository's index is larger than {MAX_INDEX >> 20} MiB")
            chunks, left = [], info.st_size
            while left > 0:
                if deadline is not None and time.monotonic() > deadline:
                    raise Refused("no time left to copy the repository's index")
                chunk = os.read(source, min(_CHUNK, left))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
        finally:
            os.close(source)
        data = b"".join(chunks)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return copy, data, info.st_mtime_ns
    except BaseException:
        try:
            os.close(fd)
        except OSError:
            pass
        try:
            os.unlink(copy)
        except FileNotFoundError:
            pass
        raise


class IndexFacts:
    """What a snapshot needs from the index besides git's own listing: ``must_read`` (paths
    whose file is read whatever its stat data: racy, conflicted, intent-to-add entries),
    ``compare`` (entries' stat fields by path, for the stat test here: every other entry
    when ``whole``; else only those git's test, to the second, cannot vouch for, and ``git
    diff-files`` tests the rest) and ``tree`` (the tree the index records for its whole
    content, when its cache is valid: the snapshot when nothing changed)."""

    __slots__ = ("compare", "must_read", "tree", "whole")

    def __init__(
        self,
        must_read: list[bytes],
        compare: dict[bytes, tuple[int, ...]],
        whole: bool,
        tree: str | None,
    ) -> None:
        self.must_read, self.compare, self.whole, self.tree = must_read, compare, whole, tree


def read_index(
    data: bytes, hash_size: int, index_mtime_ns: int, all_here: bool | None = None
) -> IndexFacts | None:
    """Read an index of version 2 or 3 (``hash_size``: 20 or 32 bytes): None for one to write
    out whole first (version 4, split or sparse); :class:`Refused` when it is not an index.
    ``all_here``: the whole stat test here (default: for an index of up to ``STAT_HERE``
    entries, or one a quarter of which needs it here anyway).

    A racy entry is one modified no earlier than the index was written: a file changed again
    within the same tick of the clock keeps the recorded stat data, so it is hashed again
    (git re-reads such a file through its filters). git (as Debian builds it) compares
    seconds only: an entry modified in the second the index was written gets the stat test
    here, to the nanosecond. Entries marked assume-unchanged or skip-worktree, and
    submodules, are kept as the index has them, as ``git add -A`` keeps them."""
    if not data:
        return IndexFacts([], {}, True, None)
    if len(data) < 12 or data[:4] != b"DIRC":
        raise Refused("the repository's index is not an index")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3):
        return None
    whole = count <= STAT_HERE if all_here is None else all_here
    second, nanos = (index_mtime_ns // _NS) & _U32, index_mtime_ns % _NS
    fixed = 40 + hash_size  # the stat fields and the object id
    end = len(data) - hash_size
    offset = 12
    stat_of, flags_of = _STAT.unpack_from, _FLAGS.unpack_from
    must_read: list[bytes] = []
    compare: dict[bytes, tuple[int, ...]] = {}  # every settled entry, or git's doubtful ones
    settled = 0
    tree = None
    try:
        for _ in range(count):
            fields = stat_of(data, offset)
            (flags,) = flags_of(data, offset + fixed)
            header, extended = fixed + 2, 0
            if flags & _EXTENDED:
                (extended,) = flags_of(data, offset + header)
                header += 2
            start = offset + header
            length = flags & _NAME_MASK
            if length == _NAME_MASK:
                length = data.index(b"\0", start) - start
            offset += (header + length + 8) & ~7
            if offset > end:
                _broken()
            mode, mtime_s = fields[6], fields[2]
            if mode & 0o170000 == 0o040000:
                return None  # a sparse index's folder entry
            if flags & 0x3000 or extended & _INTENT_TO_ADD:  # conflicted, or intent-to-add
                must = True
            elif flags & _ASSUME_VALID or extended & _SKIP_WORKTREE or mode == _GITLINK:
                continue
            elif mtime_s > second or (mtime_s == second and fields[3] >= nanos):  # racy
                must = True
            else:
                settled += 1
                if not whole and mtime_s != second:
                    continue  # git's stat test vouches for it
                must = False
            path = data[start : start + length]
            if _BAD_PATH.search(path):
                continue  # an entry git itself would refuse: never read, left as it is
            if must:
                must_read.append(path)
                compare.pop(path, None)
            else:
                compare[path] = fields
        while offset + 8 <= end:  # the extensions
            name, size = data[offset : offset + 4], struct.unpack_from(">I", data, offset + 4)[0]
            if name in _NOT_WHOLE:
                return None
            if name == b"TREE":
                tree = _root_tree(data[offset + 8 : offset + 8 + size], hash_size)
            offset += 8 + size
    except (struct.error, ValueError):
        _broken()
    if not whole and all_here is None and len(compare) * HERE_SHARE >= settled:
        # (a fresh checkout: every file written in the second the index was)
        return read_index(data, hash_size, index_mtime_ns, all_here=True)
    return IndexFacts(must_read, compare, whole, tree)


def _root_tree(cache: bytes, hash_size: int) -> str | None:
    """The root's tree id in a cache-tree extension: ``"" NUL <entries> SP <subtrees> LF
    <id>``, the id only when the entry count is valid (not -1)."""
    if not cache.startswith(b"\0"):
        return None
    line_end = cache.find(b"\n")
    counts = cache[1:line_end].split(b" ")
    if line_end < 0 or len(counts) != 2 or counts[0].startswith(b"-"):
        return None
    oid = cache[line_end + 1 : line_end + 1 + hash_size]
    return oid.hex() if len(oid) == hash_size else None


def _broken() -> None:
    raise Refused("the repository's index is damaged")


def stale(
    root: str, compare: dict[bytes, tuple[int, ...]], private: set[tuple[int, int]],
    deadline: float | None,
) -> list[bytes]:  # fmt: skip
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
    items = sorted({**dict.fromkeys(untracked[:MAX_UNTRACKED], False),
                    **dict.fromkeys(changed, True)}.items())  # fmt: skip
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
