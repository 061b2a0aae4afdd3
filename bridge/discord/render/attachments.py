"""Outgoing attachments: ``[DISCORD_ATTACH: name]`` markers in Claude's reply.

The marker text is model output, and model output can be steered by prompt
injection, so a marker is treated as an untrusted request to upload a file.
Only regular files inside the outputs folder qualify, and only with a single
link: a hard link in the folder to a file elsewhere is refused.  The file is opened
component by component relative to a descriptor of that folder with
``O_NOFOLLOW``, then checked with ``fstat`` and read through the same
descriptor: there is no window between check and read in which a path could be
swapped for a symlink (the TOCTOU hole of realpath-then-open jails).

The outputs folder itself must be a real directory (not a symlink) owned by this
user and not writable by group or others; otherwise anyone who could plant or
redirect it would choose what gets uploaded.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata

from bridge.sizes import format_size

TYPE_CHECKING = False  # the Stop hook imports this module: no typing, re or dataclasses (~4 ms)
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Sequence

__all__ = [
    "DISCORD_FILES_PER_MESSAGE",
    "DISCORD_FILE_LIMIT",
    "DISCORD_REQUEST_LIMIT",
    "OutputFile",
    "Refused",
    "extract_markers",
    "format_refusals",
    "plan_uploads",
    "resolve_output_file",
    "safe_upload_name",
]

DISCORD_FILE_LIMIT = 10 * 1024 * 1024  # default per-file upload limit
DISCORD_FILES_PER_MESSAGE = 10
DISCORD_REQUEST_LIMIT = 25 * 1024 * 1024
# Leave room for payload_json and multipart framing in a single request.
_BATCH_BYTES = DISCORD_REQUEST_LIMIT - 512 * 1024

# Patterns for ``re``, imported where a reply has a marker or a file (``re`` caches them).
_MARKER = r"[ \t]*\[DISCORD_ATTACH:[ \t]*([^\]\n]*)\][ \t]*"
_UNSAFE_NAME_CHARS = r"[^A-Za-z0-9._-]+"
_ALNUM = r"[A-Za-z0-9]"
_MAX_UPLOAD_NAME = 100
_MAX_EXTENSION = 16
_MAX_SHOWN_NAME = 80
_MAX_REFUSAL_LINES = 10
_READ_CHUNK = 1024 * 1024


class OutputFile:
    """A file approved for upload, already read (so nothing can swap it later).

    ``name`` is the path as Claude wrote it; ``upload_name`` is the filename to
    send to Discord. A value: compared by its fields, never changed in place.
    """

    __slots__ = ("data", "name", "upload_name")

    def __init__(self, name: str, upload_name: str, data: bytes) -> None:
        self.name = name
        self.upload_name = upload_name
        self.data = data

    @property
    def size(self) -> int:
        return len(self.data)

    def renamed(self, upload_name: str) -> OutputFile:
        return OutputFile(self.name, upload_name, self.data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OutputFile):
            return NotImplemented
        return (self.name, self.upload_name, self.data) == (
            other.name, other.upload_name, other.data
        )  # fmt: skip

    __hash__ = None  # type: ignore[assignment]  # as a dataclass with eq

    def __repr__(self) -> str:
        return f"<OutputFile {self.name!r} as {self.upload_name!r}, {self.size} bytes>"


class Refused:
    """A marker that was not honoured, with a short reason for a Discord note."""

    __slots__ = ("name", "reason")

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Refused):
            return NotImplemented
        return (self.name, self.reason) == (other.name, other.reason)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Refused(name={self.name!r}, reason={self.reason!r})"


# --- markers ---------------------------------------------------------------------


def extract_markers(text: str) -> tuple[str, list[str]]:
    """Remove attachment markers; return the cleaned text and the names in order.

    Names are stripped and de-duplicated (first occurrence wins); empty markers
    are removed but ignored.  A line holding only markers disappears, without
    leaving a double blank line behind.
    """
    names: list[str] = []
    kept: list[str] = []
    dropped_line = False
    for line in text.split("\n"):
        if "[DISCORD_ATTACH:" in line:
            import re

            line = re.sub(_MARKER, lambda m: _take_marker(m, names), line)
            if not line.strip():
                dropped_line = True
                continue
        if dropped_line and not line.strip() and (not kept or not kept[-1].strip()):
            continue  # a blank line that would now double the previous one
        kept.append(line)
        dropped_line = False
    return "\n".join(kept).lstrip("\n").rstrip(), names


def _take_marker(match: re.Match[str], names: list[str]) -> str:
    """Record the marker's name; keep one space if it sat between two words."""
    name = match.group(1).strip()
    if name and name not in names:
        names.append(name)
    line, start, end = match.string, match.start(), match.end()
    between_words = start > 0 and end < len(line)
    had_space = match.group(0) != match.group(0).strip()
    return " " if between_words and had_space else ""


# --- resolving files -----------------------------------------------------------------


class _Refusal(Exception):
    """Internal: abort resolution with a user-facing reason."""


def resolve_output_file(outputs_dir: str, name: str, max_bytes: int) -> OutputFile | Refused:
    """Open ``name`` inside ``outputs_dir`` without following any symlink.

    Returns the file's bytes as an :class:`OutputFile`, or a :class:`Refused`
    explaining why not (bad name, missing, symlink, not a regular file, too big).
    """
    try:
        parts = _path_parts(name)
        data = _read_inside(outputs_dir, parts, max_bytes)
    except _Refusal as refusal:
        return Refused(name, str(refusal))
    return OutputFile(name=name, upload_name=safe_upload_name(name), data=data)


def _path_parts(name: str) -> list[str]:
    """Validate a marker name and split it into path components."""
    if not name.strip():
        raise _Refusal("empty file name")
    if "\x00" in name:
        raise _Refusal("NUL bytes are not allowed")
    if name.startswith("/"):
        raise _Refusal("absolute paths are not allowed")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _Refusal("'..' is not allowed")
    if not parts:
        raise _Refusal("not a regular file")
    return parts


def _read_inside(outputs_dir: str, parts: list[str], max_bytes: int) -> bytes:
    """Walk ``parts`` from the outputs folder's descriptor and read the file."""
    fd = _open_outputs_dir(outputs_dir)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            extra = os.O_NONBLOCK | os.O_NOCTTY if last else os.O_DIRECTORY
            next_fd = _open_at(fd, part, extra)
            os.close(fd)
            fd = next_fd
        return _read_regular(fd, max_bytes)
    finally:
        os.close(fd)


def _open_outputs_dir(outputs_dir: str) -> int:
    """Open the outputs folder, refusing one that others could have planted."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(outputs_dir, flags)
    except OSError as exc:
        raise _Refusal("the outputs folder is missing or not a real folder") from exc
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        os.close(fd)
        raise _Refusal("the outputs folder is not private")
    return fd


def _open_at(dir_fd: int, part: str, extra_flags: int) -> int:
    """Open one path component relative to ``dir_fd`` without following symlinks."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | extra_flags
    try:
        return os.open(part, flags, dir_fd=dir_fd)
    except OSError as exc:
        # Linux reports ENOTDIR, not ELOOP, for O_DIRECTORY on a symlink.
        code = errno.ELOOP if _is_symlink(dir_fd, part) else exc.errno
        raise _Refusal(_open_error_reason(code, extra_flags)) from exc


def _is_symlink(dir_fd: int, part: str) -> bool:
    """Only for wording the refusal; the open itself never follows links."""
    try:
        return stat.S_ISLNK(os.stat(part, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_error_reason(code: int | None, extra_flags: int) -> str:
    """Translate an ``open`` failure into words for the Discord note."""
    in_middle = bool(extra_flags & os.O_DIRECTORY)
    if code == errno.ELOOP:
        return "the path goes through a symlink" if in_middle else "is a symlink"
    if code == errno.ENOENT:
        return "not found in outputs"
    if code == errno.ENOTDIR:
        return "not found in outputs" if in_middle else "not a regular file"
    if code in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if code == errno.ENXIO:
        return "not a regular file"
    if code == errno.ENAMETOOLONG:
        return "name too long"
    return f"cannot open ({os.strerror(code or 0)})"


def _read_regular(fd: int, max_bytes: int) -> bytes:
    """Read a regular file through ``fd``, never more than ``max_bytes``."""
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        raise _Refusal("is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise _Refusal("not a regular file")
    if st.st_nlink > 1:
        # A hard link made inside outputs/ to a file elsewhere would upload that file.
        raise _Refusal("has other hard links, so it may be a file from outside outputs")
    if st.st_size > max_bytes:
        raise _Refusal(_too_large(st.st_size, max_bytes))
    chunks: list[bytes] = []
    total = 0
    while total <= max_bytes:  # the file may still be growing: cap the read
        block = os.read(fd, min(_READ_CHUNK, max_bytes + 1 - total))
        if not block:
            break
        chunks.append(block)
        total += len(block)
    if total > max_bytes:
        raise _Refusal(_too_large(total, max_bytes, grew=True))
    return b"".join(chunks)


def _too_large(size: int, max_bytes: int, grew: bool = False) -> str:
    shown = "still growing" if grew else format_size(size)
    return f"larger than the {format_size(max_bytes)} upload limit ({shown})"


# --- names -------------------------------------------------------------------------


def safe_upload_name(name: str) -> str:
    """Reduce a path to a filename safe for a multipart header and for Discord.

    Keeps the basename's ASCII letters, digits and ``._-`` (accents are folded
    first, so ``résumé.pdf`` becomes ``resume.pdf``); other runs become ``_``.
    Never empty, never a dotfile, at most 100 characters with the extension kept.
    """
    import re

    base = name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    folded = unicodedata.normalize("NFKD", base)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    safe = re.sub(_UNSAFE_NAME_CHARS, "_", folded)
    stem, dot, ext = safe.rpartition(".")
    if not re.search(_ALNUM, stem if dot else safe):
        # Nothing readable left of the name (".env", "日本語.txt"): give it one.
        safe = f"file.{ext}" if dot and re.search(_ALNUM, ext) else "file"
    return _shorten(safe, _MAX_UPLOAD_NAME)


def _shorten(name: str, limit: int) -> str:
    """Cut ``name`` to ``limit`` characters, keeping a short extension."""
    if len(name) <= limit:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or len(ext) > _MAX_EXTENSION:
        return name[:limit]
    return stem[: limit - len(ext) - 1] + "." + ext


# --- batching and notes ----------------------------------------------------------------


def plan_uploads(
    files: Iterable[OutputFile],
    max_per_message: int = DISCORD_FILES_PER_MESSAGE,
    max_bytes_per_message: int = _BATCH_BYTES,
) -> list[list[OutputFile]]:
    """Group files into messages of at most ``max_per_message`` files and bytes.

    Upload names are made unique across the whole plan (``a.txt``, ``a-2.txt``)
    so attachments stay distinguishable.  Order is preserved.
    """
    batches: list[list[OutputFile]] = []
    batch_bytes = 0
    for file in _unique_names(files):
        full = bool(batches) and (
            len(batches[-1]) >= max_per_message or batch_bytes + file.size > max_bytes_per_message
        )
        if not batches or full:
            batches.append([])
            batch_bytes = 0
        batches[-1].append(file)
        batch_bytes += file.size
    return batches


def _unique_names(files: Iterable[OutputFile]) -> list[OutputFile]:
    """Rename later duplicates of an upload name with a ``-N`` suffix."""
    seen: set[str] = set()
    out: list[OutputFile] = []
    for file in files:
        candidate, n = file.upload_name, 1
        while candidate.lower() in seen:
            n += 1
            stem, dot, ext = file.upload_name.rpartition(".")
            base = f"{stem}-{n}.{ext}" if dot and stem else f"{file.upload_name}-{n}"
            candidate = _shorten(base, _MAX_UPLOAD_NAME)
        seen.add(candidate.lower())
        out.append(file if candidate == file.upload_name else file.renamed(candidate))
    return out


def format_refusals(refusals: Sequence[Refused]) -> str:
    """One short warning line per refused marker (empty string if none)."""
    lines = [
        f"⚠️ Not attached: `{_shown_name(r.name)}` ({r.reason})"
        for r in refusals[:_MAX_REFUSAL_LINES]
    ]
    extra = len(refusals) - _MAX_REFUSAL_LINES
    if extra > 0:
        lines.append(f"⚠️ …and {extra} more not attached")
    return "\n".join(lines)


def _shown_name(name: str) -> str:
    """Make a name safe inside an inline code span.

    Backslash escapes do not work inside Discord code spans, so backticks are
    replaced with a look-alike (U+02CB); control characters become ``?``.
    """
    shown = "".join("?" if unicodedata.category(ch) == "Cc" else ch for ch in name)
    shown = shown.replace("`", "ˋ")
    if len(shown) > _MAX_SHOWN_NAME:
        shown = shown[: _MAX_SHOWN_NAME - 1] + "…"
    return shown or " "
