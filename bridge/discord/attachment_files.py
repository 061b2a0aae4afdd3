"""A ``[DISCORD_ATTACH: name]`` marker's file read from the outputs folder, or refused.

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

The file system's part of outgoing attachments, kept out of :mod:`bridge.discord.render`
(which is pure); the markers, upload names and batching are
:mod:`bridge.discord.render.attachments`'s. The Stop hook imports this module: no typing,
re or dataclasses.
"""

from __future__ import annotations

import errno
import os
import stat

from bridge.discord.render.attachments import OutputFile, Refused, safe_upload_name
from bridge.sizes import format_size

__all__ = ["resolve_output_file"]

_READ_CHUNK = 1024 * 1024


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
