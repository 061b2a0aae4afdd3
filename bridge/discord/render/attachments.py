"""Outgoing attachments: ``[DISCORD_ATTACH: name]`` markers in Claude's reply, the names the
files are uploaded under, how they are grouped into messages and what the user is told of a
marker that was not honoured. Pure: reading a marker's file is
:mod:`bridge.discord.attachment_files`'s, which hands back the :class:`OutputFile` or
:class:`Refused` defined here.
"""

from __future__ import annotations

import unicodedata

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
            other.name,
            other.upload_name,
            other.data,
        )

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
