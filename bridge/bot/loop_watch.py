"""The event loop's lag, logged with what held it.

Every message, click and status edit of the bot waits on one event loop: a callback that blocks
it (a durable write's fsync on a disk busy flushing, a tmux call made in place of a thread)
stalls them all. A beat on the loop (every :data:`BEAT` seconds) measures how late it wakes; a
thread looks at the beat meanwhile and, while the loop is late, reads the loop thread's stack,
so the warning names the code that was running, not only the delay:

``event loop lag 812 ms (over 250 ms, 3 ms of CPU); it was running at 300 ms: write_atomic …``

The process's CPU time over the lag tells who held it: code of ours computing (CPU about the
lag), a call that blocks (a stack caught in it, little CPU), or the process not running at all
(stopped, or starved of a CPU on a loaded machine: little CPU, and the stack seen only once
the process ran again, late in the lag, or "not caught" at all). "at N ms" says how late the
loop was when its stack was read: early in the lag, the process ran and the loop was held.
The e2e rig (``bridge_testkit.rig``) reads these lines at teardown and fails a test whose
bot's loop was held more than 2 s by the bot itself.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback

from bridge.bot.metrics import LOOP_LAG

log = logging.getLogger(__name__)

BEAT = 0.1  # seconds between two beats of the loop
LAG_LOGGED = 0.25  # seconds late: logged with the stack that held the loop
FRAMES = 6  # of that stack, innermost first


class LoopWatch:
    """One per process: ``asyncio.create_task(LoopWatch().run())`` on the loop it watches."""

    def __init__(self, threshold: float = LAG_LOGGED) -> None:
        self.threshold = threshold
        self._beat_at = time.monotonic()  # when the loop last beat
        self._held_by = ""  # the loop thread's stack, read while the loop was late
        self._held_seen = 0.0  # how late the loop was when that stack was read
        self._stop = threading.Event()

    async def run(self) -> None:
        loop_thread = threading.get_ident()
        sampler = threading.Thread(
            target=self._sample, args=(loop_thread,), name="loop-watch", daemon=True
        )
        sampler.start()
        try:
            while True:
                self._beat_at = before = time.monotonic()
                cpu_before = time.process_time()
                await asyncio.sleep(BEAT)
                lag = time.monotonic() - before - BEAT
                LOOP_LAG.observe(max(0.0, lag))
                if lag > self.threshold:
                    cpu = time.process_time() - cpu_before
                    held = (
                        f"at {self._held_seen * 1000:.0f} ms: {self._held_by}"
                        if self._held_by
                        else ": (not caught)"
                    )
                    log.warning(
                        "event loop lag %d ms (over %d ms, %d ms of CPU); it was running %s",
                        lag * 1000,
                        self.threshold * 1000,
                        cpu * 1000,
                        held,
                    )
                self._held_by = ""
        finally:
            self._stop.set()

    def _sample(self, loop_thread: int) -> None:
        """While the loop is late, the innermost frames it runs (the first look past the
        threshold: that is what held it, before whatever runs once it wakes)."""
        while not self._stop.wait(self.threshold / 2):
            late = time.monotonic() - self._beat_at - BEAT
            if late > self.threshold and not self._held_by:
                frame = sys._current_frames().get(loop_thread)
                if frame is not None:
                    self._held_by = describe(frame)
                    self._held_seen = late


def describe(frame: object) -> str:
    """``file.py:line function ← caller…``, innermost first."""
    stack = traceback.extract_stack(frame)[-FRAMES:]  # type: ignore[arg-type]
    return " ← ".join(
        f"{entry.filename.rsplit('/', 1)[-1]}:{entry.lineno} {entry.name}"
        for entry in reversed(stack)
    )
