"""``hook-figures`` (runtime dir): what the hooks tell the metrics, one line per figure.

A hook process cannot reach the bot's metrics, and must not pay for a client library: it
appends one short line here (``hook Stop 0.142``: an event's handler took 142 ms; ``post
direct 2``: two messages posted with the hook's own REST client) and the bot reads the lines
at each scrape. The file exists only while a bot serves metrics: a hook opens it without
``O_CREAT``, so with metrics off (or no bot) the append is one failed ``open`` and nothing
piles up. The bot reads what is new since its last look and starts a fresh file past
:data:`ROTATE_BYTES` (a hook appending in the microseconds between the last read and the
rename loses its figure: metrics, not a ledger).

What the bot reads is parsed strictly: a known kind, a name of letters, a bounded number.
The hooks append with ``private_files.append_if_there`` (no import of this module on their
fast path); this module is the format and the bot's reader.
"""

from __future__ import annotations

import os

ROTATE_BYTES = 256 << 10
POST_WAYS = ("handoff", "direct", "spooled")
MAX_NAME = 40


class FigureReader:
    """The bot's side: :meth:`start` makes the file (hooks begin to append), :meth:`read`
    returns the figures appended since, :meth:`stop` removes it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._offset = 0

    def start(self) -> None:
        self.stop()  # a previous bot's leftover: its figures are not this process's
        self._create()

    def stop(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def read(self) -> list[tuple[str, str, float]]:
        """The figures appended since the last read, each ``(kind, name, value)``."""
        data = self._read_from(self.path, self._offset)
        if self._offset + len(data) > ROTATE_BYTES:  # a fresh file; the old one's tail read
            old, offset = self.path + ".old", self._offset
            os.rename(self.path, old)
            self._create()
            data = self._read_from(old, offset)
            os.unlink(old)
        else:
            data = data[: data.rfind(b"\n") + 1]  # a line being written is read next time
            self._offset += len(data)
        return [figure for line in data.splitlines() if (figure := parse(line))]

    def _create(self) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        os.close(os.open(self.path, flags, 0o600))
        self._offset = 0

    @staticmethod
    def _read_from(file: str, offset: int) -> bytes:
        try:
            fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return b""
        try:
            os.lseek(fd, offset, os.SEEK_SET)
            chunks = []
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)


def parse(line: bytes) -> tuple[str, str, float] | None:
    """``(kind, name, value)`` of a well-formed line, else None."""
    parts = line.decode("ascii", "replace").split(" ")
    if len(parts) != 3:
        return None
    kind, name, number = parts
    if not (name.isascii() and name.isalpha() and len(name) <= MAX_NAME):
        return None
    if kind == "post" and name not in POST_WAYS:
        return None
    if kind not in ("hook", "post"):
        return None
    try:
        value = float(number)
    except ValueError:
        return None
    return (kind, name, value) if 0 <= value < 1e6 else None
