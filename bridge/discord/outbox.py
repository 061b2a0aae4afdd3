"""The outbox: messages that could not be posted yet, spooled on disk until Discord answers.

Hooks write here when Discord, the network or the bot's token is unavailable; the bot (and
the next hook of the same channel) drains it. Entries of one channel are delivered strictly
in order: a channel's directory is locked (``flock``) while it is drained, and draining stops
at the first entry that still cannot be delivered. Every entry carries a ``nonce`` with
``enforce_nonce``, so an entry that was delivered but not yet removed (a crash between the two)
is not posted twice.

Layout: ``outbox/<channel_id>/<sortable name>.json`` plus ``<name>.files/`` for attachments.
"""

from __future__ import annotations

import fcntl
import os
import time

from bridge import fastjson
from bridge.discord.post import DeliveryError, Post
from bridge.state import private_files, runtime

TYPE_CHECKING = False  # the Stop hook imports this module: no typing (~4 ms)
if TYPE_CHECKING:
    from collections.abc import Callable, Generator

_sequence = 0
MAX_AGE = 24 * 3600.0  # seconds an entry may wait; older ones are dropped and the channel told
MAX_ENTRY_BYTES = 1 << 20  # an entry is a payload of at most a few KiB
# A prompt handed to the bot that it has not posted by then is dropped: its hook posts it
# itself (same nonce) or gives up and leaves the decision to the terminal.
PROMPT_HANDOFF_LIFETIME = 2.5


class Outbox:
    def __init__(self, root: str) -> None:
        self.root = root

    # --- writing ---------------------------------------------------------------------

    def enqueue(
        self,
        channel_id: str,
        server: str,
        post: Post,
        receipt: bool = False,
        durable: bool = True,
        claim: str | None = None,
    ) -> str:
        """Spool one post for ``channel_id``; returns the entry's path. ``receipt``: whoever
        posts it records the message's id for the hook that spooled it (a prompt).
        ``durable=False``: not on disk yet (a hand-off the bot takes within milliseconds
        does not wait for the disk: :meth:`make_durable` when it stays). ``claim``: the
        entry is not posted while that file exists (``bridge.discord.handoff.Claim``)."""
        directory = self._channel_dir(channel_id, create=True)
        name = _entry_name(self.pending(channel_id))
        files = []
        if post.files:
            files_dir = runtime.ensure_private_dir(os.path.join(directory, name + ".files"))
            for i, (filename, data) in enumerate(post.files):
                staged = os.path.join(files_dir, f"{i}")
                private_files.write_atomic(staged, data, durable=durable)
                files.append({"filename": filename, "path": f"{i}"})  # in the entry's own folder
        queued_at = time.time()
        entry: dict[str, object] = {
            "channel_id": channel_id,
            "server": server,
            "payload": post.payload,
            "files": files,
            "queued_at": queued_at,
        }
        if post.footer is not None:  # a reply whose footer the bot brings in once posted
            entry["footer"] = post.footer
        if post.speech:  # a reply the bot may also speak once it is posted
            entry["speech"] = post.speech
        if claim is not None:  # a Stop event's message: it waits for the bot's claim to go
            entry["claim"] = claim
        if receipt:  # a prompt: only worth posting while its hook still waits for it
            entry["receipt"] = True
            entry["not_after"] = queued_at + PROMPT_HANDOFF_LIFETIME
        path = os.path.join(directory, name + ".json")
        private_files.write_atomic(path, fastjson.dumps(entry).encode(), durable=durable)
        return path

    def make_durable(self, path: str) -> None:
        """Put an entry :meth:`enqueue` wrote with ``durable=False`` on disk, with its files
        (an entry posted and removed meanwhile is fine)."""
        files_dir = path[: -len(".json")] + ".files"
        try:
            staged = [os.path.join(files_dir, name) for name in os.listdir(files_dir)]
        except (FileNotFoundError, NotADirectoryError):
            staged = []
        for file in [*staged, path]:
            private_files.make_durable(file)

    # --- reading ---------------------------------------------------------------------

    def channels(self) -> list[str]:
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            return []
        return sorted(n for n in names if n.isdigit() and self.pending(n))

    def pending(self, channel_id: str) -> list[str]:
        """Entry paths of ``channel_id`` in delivery order."""
        directory = self._channel_dir(channel_id)
        try:
            names = os.listdir(directory)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [os.path.join(directory, n) for n in sorted(names) if n.endswith(".json")]

    def load(self, path: str) -> tuple[dict, Post]:
        """The entry and its post; ValueError for anything not shaped like what
        :meth:`enqueue` writes (the file may have been written by someone else)."""
        entry = self.read_entry(path)
        return entry, self.post_of(path, entry)

    def read_entry(self, path: str) -> dict:
        """The entry alone: a small read (at most :data:`MAX_ENTRY_BYTES`); ValueError as
        :meth:`load`."""
        entry = _valid_entry(
            fastjson.loads(private_files.read_private(path, MAX_ENTRY_BYTES)), path
        )
        _date_by_file(entry, os.lstat(path).st_ctime)
        return entry

    def post_of(self, path: str, entry: dict) -> Post:
        """The entry's post, its staged files read: up to 64 MiB each (the bot reads them in a
        thread, off its event loop)."""
        files_dir = path[: -len(".json")] + ".files"
        files = [
            (
                f["filename"],
                private_files.read_private(os.path.join(files_dir, f["path"]), 64 << 20),
            )
            for f in entry["files"]
        ]
        return Post(entry["payload"], files)

    def remove(self, path: str) -> None:
        import shutil  # here: a hook that hands its reply over never needs it (zlib, bz2, lzma…)

        shutil.rmtree(path[: -len(".json")] + ".files", ignore_errors=True)
        os.unlink(path)

    # --- draining --------------------------------------------------------------------

    def locked(self, channel_id: str, wait: bool = True, until: float | None = None) -> ChannelLock:
        """Hold the channel's lock: ``with outbox.locked(channel) as acquired``; False if it
        is taken and ``wait`` is off, or still taken at ``until`` (a ``time.monotonic()``
        deadline)."""
        directory = self._channel_dir(channel_id, create=True)
        return ChannelLock(os.path.join(directory, ".lock"), wait, until)

    def drain(
        self,
        channel_id: str,
        send: Callable[[dict, Post], None],
        until: float | None = None,
        max_age: float = MAX_AGE,
    ) -> bool:
        """Send the channel's entries in order (caller holds the lock). True when all went out.

        An entry that cannot be read, or that Discord refuses for good (e.g. the channel was
        deleted), is set aside as ``.failed`` with a note in ``logs/outbox.log``; so is one
        older than ``max_age`` seconds, and the channel is told what was dropped. Anything
        retryable, or reaching the ``until`` deadline, stops the drain so that order is kept.
        ``send`` blocks; the bot drives :meth:`drain_pass` on its event loop instead.
        """
        with self.drain_pass(channel_id, until, max_age) as steps:
            for path, entry in steps:
                steps.tell(self._sent(path, entry, send))
            return steps.all_out

    def _sent(self, path: str, entry: dict, send: Callable[[dict, Post], None]) -> Exception | None:
        """Post one entry with ``send``: None when it went out, else what stopped it."""
        try:
            post = self.post_of(path, entry)
        except (OSError, ValueError) as err:
            return err
        try:
            send(entry, post)
        except DeliveryError as err:
            return err
        return None

    def drain_pass(
        self, channel_id: str, until: float | None = None, max_age: float = MAX_AGE
    ) -> DrainPass:
        """One pass of :meth:`draining`'s decisions, to be driven by a sender: see
        :class:`DrainPass`."""
        return DrainPass(self.draining(channel_id, until, max_age))

    def draining(
        self, channel_id: str, until: float | None = None, max_age: float = MAX_AGE
    ) -> Generator[tuple[str, dict], Exception | None, bool]:
        """:meth:`drain`'s decisions without its I/O: yields each entry due, in order, as
        ``(path, entry)``; the caller reads its post (:meth:`post_of`), sends it, and sends
        back what came of it: None (posted), the :class:`DeliveryError`, or the error reading
        its files. Returns True when all went out. Close it when done: the channel's note
        about entries dropped for age is queued then (see :meth:`drain`). Driven through a
        :class:`DrainPass`, which keeps this protocol in one place.

        Exactly once and in order: the caller holds the channel's lock, so no one else posts
        these entries meanwhile; an entry leaves the outbox only after Discord took it, and the
        first one that must wait ends the pass, so nothing queued after it overtakes it. A crash
        between Discord taking an entry and its removal leaves it for the next pass, whose
        resend Discord answers with the original message (its nonce, ``enforce_nonce``).
        """
        expired: list[dict] = []
        try:
            for path in self.pending(channel_id):
                if until is not None and time.monotonic() > until:
                    return False
                try:
                    entry = self.read_entry(path)
                except (OSError, ValueError, RecursionError) as err:
                    self._quarantine(path, f"unreadable entry: {err}")
                    continue
                if _claimed(entry):  # not in the outbox yet, as far as posting goes
                    continue
                not_after = entry.get("not_after")
                if isinstance(not_after, int | float) and time.time() > not_after:
                    self.remove(path)  # a prompt whose hook no longer waits for this post
                    continue
                if time.time() - entry["queued_at"] > max_age:
                    self._quarantine(path, f"not delivered within {max_age / 3600:g} h")
                    expired.append(entry)
                    continue
                outcome = yield path, entry
                if isinstance(outcome, DeliveryError):
                    if outcome.retryable:
                        return False
                    self._quarantine(path, str(outcome))
                    continue
                if outcome is not None:  # its staged files could not be read
                    self._quarantine(path, f"unreadable entry: {outcome}")
                    continue
                self.remove(path)
            return True
        finally:
            if expired:
                self._tell_dropped(channel_id, expired, max_age)

    def drop_claimed(self, claim: str) -> int:
        """Remove the entries waiting for ``claim``, a Stop event's claim that a bot killed
        before releasing it left behind (the event runs again); how many there were."""
        dropped = 0
        for channel_id in self.channels():
            with self.locked(channel_id):  # a pass reading one must not find it gone
                for path in self.pending(channel_id):
                    try:
                        mine = self.read_entry(path).get("claim") == claim
                    except (OSError, ValueError, RecursionError):
                        continue  # the drain sets it aside
                    if mine:
                        self.remove(path)
                        dropped += 1
        return dropped

    def _tell_dropped(self, channel_id: str, expired: list[dict], max_age: float) -> None:
        """Queue a note for the channel about entries dropped for age (it goes out with the
        channel's next delivery, in order)."""
        from bridge.discord.post import message_payload

        since = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(expired[0]["queued_at"]))
        note = (
            f"⚠️ {len(expired)} message(s) queued since {since} could not be delivered within"
            f" {max_age / 3600:g} h and were dropped (kept as `.failed` in the bridge's outbox)."
        )
        self.enqueue(channel_id, expired[0]["server"], Post(message_payload(note)))

    # --- plumbing --------------------------------------------------------------------

    def _channel_dir(self, channel_id: str, create: bool = False) -> str:
        if not channel_id.isdigit():
            raise ValueError(f"not a channel id: {channel_id!r}")
        path = os.path.join(self.root, channel_id)
        return runtime.ensure_private_dir(path) if create else path

    def _quarantine(self, path: str, why: str) -> None:
        """Move an undeliverable entry aside (``.failed``) rather than lose it silently."""
        try:
            os.rename(path, path[: -len(".json")] + ".failed")
        except OSError:
            import shutil

            shutil.rmtree(path, ignore_errors=True)  # a directory named like an entry …
            if os.path.lexists(path):
                os.unlink(path)
        private_files.append_log(
            os.path.join(os.path.dirname(self.root), "logs", "outbox.log"),
            f"dropped {os.path.basename(path)}: {why}",
        )


class DrainPass:
    """One pass of a channel's drain as a sender sees it: ``for path, entry in steps``, each
    entry due in order, and :meth:`tell` what came of posting it before the next; ``all_out``
    once the loop ends. The decisions (order, what is set aside, when the pass stops) are
    :meth:`Outbox.draining`'s: the two senders, the hooks' blocking :meth:`Outbox.drain` and
    the bot's on its event loop, only post. Used in a ``with`` block, which closes the pass
    (the channel's note about entries dropped for age is queued then)."""

    __slots__ = ("_outcome", "_over", "_steps", "_told", "all_out")

    def __init__(self, steps: Generator[tuple[str, dict], Exception | None, bool]) -> None:
        self._steps = steps
        self._outcome: Exception | None = None
        self._told = True  # nothing asked yet
        self._over = False
        self.all_out = False

    def __iter__(self) -> DrainPass:
        return self

    def __next__(self) -> tuple[str, dict]:
        if self._over:
            raise StopIteration
        if not self._told:  # an entry left untold would read as posted, and be removed
            raise RuntimeError("tell() what came of the last entry before asking for the next")
        self._told = False
        try:
            return self._steps.send(self._outcome)
        except StopIteration as done:
            self._over, self.all_out = True, done.value
            raise StopIteration from None

    def tell(self, outcome: Exception | None) -> None:
        """What came of the entry just given: None (posted), the :class:`DeliveryError`, or
        the error reading its staged files."""
        self._outcome, self._told = outcome, True

    def close(self) -> None:
        self._steps.close()

    def __enter__(self) -> DrainPass:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _claimed(entry: dict) -> bool:
    """A Stop event's message whose claim the bot has not released yet."""
    claim = entry.get("claim")
    return isinstance(claim, str) and os.path.lexists(claim)


def _valid_entry(entry: object, path: str) -> dict:
    """``entry`` if it has the shape :meth:`Outbox.enqueue` writes, else ValueError. Staged
    files must lie in the entry's own ``.files`` folder: an entry names no other file."""
    if not isinstance(entry, dict):
        raise ValueError(f"not an object but {type(entry).__name__}")
    channel = os.path.basename(os.path.dirname(path))
    if entry.get("channel_id") != channel:
        raise ValueError("channel_id does not match the entry's folder")
    if not isinstance(entry.get("server"), str) or not isinstance(entry.get("payload"), dict):
        raise ValueError("server or payload missing")
    queued_at = entry.get("queued_at")
    if not isinstance(queued_at, int | float) or isinstance(queued_at, bool):
        raise ValueError("queued_at missing")
    files_dir = path[: -len(".json")] + ".files"
    files = entry.get("files")
    if not isinstance(files, list) or len(files) > 10:
        raise ValueError("files is not a list of at most 10")
    for f in files:
        if not isinstance(f, dict) or not isinstance(f.get("filename"), str):
            raise ValueError("a file without a name")
        staged = f.get("path")
        if isinstance(staged, str) and "/" in staged:  # an older bridge's absolute path: only
            folder, staged = os.path.split(staged)  # the name counts, in the entry's own folder
            if os.path.basename(folder) != os.path.basename(files_dir):
                raise ValueError("a file outside the entry's own folder")
            f["path"] = staged
        if not isinstance(staged, str) or not staged.isdigit():
            raise ValueError("a file outside the entry's own folder")
    return entry


def _date_by_file(entry: dict, written: float) -> None:
    """Age an entry from when its file was put in place (``written``: its ctime, which the
    kernel sets and no process can) when it claims a later time: an entry dated in the future
    (a wrong clock, another process) would otherwise never age out, nor a prompt's hand-over
    ever expire, and would hold its channel's queue for good."""
    entry["queued_at"] = min(entry["queued_at"], written)
    not_after = entry.get("not_after")
    if isinstance(not_after, int | float):
        entry["not_after"] = min(not_after, entry["queued_at"] + PROMPT_HANDOFF_LIFETIME)


class ChannelLock:
    """The ``flock`` of one channel's outbox folder while in a ``with`` block, which gets
    whether it was acquired. (A class: ``contextlib`` costs a hook that hands its reply to
    the bot ``collections`` and ``functools``, ~1 ms, for a lock it never takes.)"""

    __slots__ = ("fd", "path", "until", "wait")

    def __init__(self, path: str, wait: bool, until: float | None) -> None:
        self.path, self.wait, self.until = path, wait, until
        self.fd = -1

    def __enter__(self) -> bool:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        self.fd = os.open(self.path, flags, 0o600)
        try:
            return _acquire(self.fd, self.wait, self.until)
        except BaseException:
            os.close(self.fd)
            raise

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)  # closing releases the lock


def _acquire(fd: int, wait: bool, until: float | None) -> bool:
    if wait and until is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if not wait or until is None or time.monotonic() >= until:
                return False
            time.sleep(0.05)


def _entry_name(pending: list[str]) -> str:
    """Sorts in creation order across processes: time, then pid, then a counter. Never
    before the newest pending entry, so a clock stepping back cannot reorder a channel."""
    global _sequence
    _sequence += 1
    stamp = time.time_ns()
    if pending:
        newest = os.path.basename(pending[-1]).split("-", 1)[0]
        if newest.isdigit():
            stamp = max(stamp, int(newest) + 1)
    return f"{stamp:020d}-{os.getpid():07d}-{_sequence:04d}"
