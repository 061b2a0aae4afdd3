"""The repository's index, copied and read entry by entry for a turn snapshot.

Its own module because reading git's index format (``Documentation/gitformat-index.txt``,
versions 2 and 3) is one job, apart from opening working-tree files
(``bridge/sessions/snapshot_files.py``): :func:`copy_index` copies the index (a regular file
under :data:`MAX_INDEX`, read against the deadline), :func:`read_index` splits its entries
into those the stat test must compare and those that must be read anyway.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import struct
import tempfile
import time

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
