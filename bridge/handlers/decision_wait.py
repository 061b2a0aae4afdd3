"""How a hook waits for the owner's decision, and what else ends the wait: the decision file
(watched with watchfiles, not a sleep loop), the deadline, the Claude Code that runs the hook
gone (:class:`Lineage`), an interrupt in the transcript, or a signal Claude Code stops the hook
with (:class:`CancelledBySignals`). Its own module: only a hook that asks loads it (deferred
from ``permission``), never the PreToolUse hook every tool call runs.
"""

from __future__ import annotations

import os
import time

from bridge.state import decisions, runtime
from bridge.state.decisions import Decision, Request

POLL_MS = 1000  # wake-up interval to check the deadline and that Claude Code is still there


class Cancelled(Exception):
    pass


class CancelledBySignals:
    """Catch SIGTERM/SIGHUP/SIGINT, so a hook Claude Code stops closes its Discord prompt on
    the way out instead of leaving live buttons behind. While armed (the wait), the first
    signal raises :class:`Cancelled`; otherwise signals are only recorded, and :meth:`arm`
    raises at once for one that came before it. Only one signal ever raises."""

    SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")

    def __init__(self) -> None:
        self.armed = False
        self.pending = False
        self.raised = False
        self.previous: dict = {}

    def __enter__(self) -> CancelledBySignals:
        import signal

        for name in self.SIGNALS:
            number = getattr(signal, name)
            self.previous[number] = signal.signal(number, self._on_signal)
        return self

    def _on_signal(self, _signum: int, _frame: object) -> None:
        self.pending = True
        if self.armed and not self.raised:
            self.armed = False
            self.raised = True
            raise Cancelled

    def arm(self) -> None:
        """From now on a signal cancels; one that already came cancels at once."""
        if self.pending and not self.raised:
            self.raised = True
            raise Cancelled
        self.armed = not self.raised

    def disarm(self) -> None:
        self.armed = False

    def __exit__(self, *_: object) -> None:
        import signal

        for number, handler in self.previous.items():
            signal.signal(number, handler)


def wait_for_decision(rt: runtime.Runtime, request: Request) -> Decision:
    """Block until the decision file exists (watchfiles, not a sleep loop), the deadline
    passes, Claude Code goes away, or the transcript shows the turn was interrupted."""
    from bridge.discord.rest import load_site_packages

    load_site_packages()
    import watchfiles

    transcript = _Transcript(request.transcript_path, request.transcript_offset)
    parent = Lineage()
    paths = [rt.prompts, *transcript.watch_paths()]
    watcher = watchfiles.watch(
        *paths, debounce=100, step=10, rust_timeout=POLL_MS, yield_on_timeout=True
    )
    try:
        while True:
            decision = _settled(rt, request, transcript, parent)
            if decision is not None:
                return decision
            next(watcher)
    finally:
        watcher.close()


class Lineage:
    """Whether the Claude Code that runs this hook is still there. Our parent is not enough:
    Claude Code (2.1.330, measured) runs the command through a shell that is a child of init
    from the start and stays in between, so when Claude Code dies nothing changes above us.
    What does change is the other end of our stdout, which Claude Code reads the answer
    from: it hangs up. The parent and grandparent are watched too (a direct child, an
    older CLI; the grandparent from ``/proc`` where there is one)."""

    def __init__(self) -> None:
        self.parent = os.getppid()
        self.grandparent = parent_of(self.parent)

    def gone(self) -> bool:
        if os.getppid() != self.parent or reader_hung_up(1):
            return True
        if self.grandparent in (None, 1):
            return False
        now = parent_of(self.parent)  # None: unreadable this time, not evidence of an end
        return now is not None and now != self.grandparent


def reader_hung_up(fd: int) -> bool:
    """The reading end of ``fd`` (a pipe or socket we write to) is closed."""
    import select

    try:
        poller = select.poll()
        poller.register(fd, 0)  # no events asked: hang-up and error are always reported
        return any(events & (select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no poll() (Windows): cannot tell
        return False


def parent_of(pid: int) -> int | None:
    """``pid``'s parent from ``/proc/<pid>/stat`` (None when unreadable: gone, or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[1])  # after "(comm)": state, ppid
    except (OSError, ValueError, IndexError):
        return None


def _settled(
    rt: runtime.Runtime, request: Request, transcript: _Transcript, parent: Lineage
) -> Decision | None:
    request_id = request.id
    decision = decisions.read_decision(rt, request_id)
    if decision is not None:
        return decision
    stale = None
    if parent.gone():
        stale = Decision(outcome=decisions.ANSWERED_ELSEWHERE, event="session ended")
    elif transcript.interrupted():
        stale = Decision(outcome=decisions.ANSWERED_ELSEWHERE, event="interrupted")
    elif time.time() >= request.deadline:
        left = request.on_timeout == "terminal"
        stale = Decision(outcome=decisions.TIMED_OUT, left_to_terminal=left)
    if stale is None:
        return None
    decisions.decide(rt, request_id, stale)  # loses to a click that landed just now
    return decisions.read_decision(rt, request_id) or stale


class _Transcript:
    """Watches the session transcript for an interrupt written after the prompt opened."""

    def __init__(self, path: object, offset: object = None) -> None:
        # Kept even when the file is not there yet: Claude Code 2.1.197 creates the transcript
        # lazily (seen after the first prompt's permission dialog); it is then read each poll.
        self.path = path if isinstance(path, str) and path else None
        if not isinstance(offset, int):
            offset = transcript_size(self.path)
        self.offset = offset

    def watch_paths(self) -> list[str]:
        return [self.path] if self.path and os.path.isfile(self.path) else []

    def interrupted(self) -> bool:
        from bridge.claude.transcript import interrupted_since

        return interrupted_since(self.path, self.offset)


def transcript_size(path: object) -> int:
    from bridge.claude.transcript import size

    return size(path)
