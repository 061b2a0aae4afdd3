"""``discord-bridge try``'s bot stopped and started again behind the page, the emulator running
on (its messages kept), to see what the bot does with the messages it missed.

Enter in ``try``'s terminal (or ``SIGUSR1`` to its process) stops the bot as ``run`` stops on
SIGTERM; messages sent on the page meanwhile wait in the emulator. Enter again (or
``SIGUSR1``) starts it, and it reads them from the channel's history (``bot/turn/catchup.py``).
Ctrl-C ends ``try`` either way.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TextIO

TOGGLE_SIGNAL = signal.SIGUSR1
STOPPED = (
    "discord-bridge try: the bot is stopped (the page and Claude Code run on). Messages you "
    "send now wait; Enter starts the bot again, and it reads them. Ctrl-C ends try.\n"
)
STARTING = "discord-bridge try: starting the bot again: it reads what was sent meanwhile\n"


class BotPause:
    """Whether the bot should be running, flipped by Enter or :data:`TOGGLE_SIGNAL`."""

    def __init__(self, stop: Callable[[], None] | None = None) -> None:
        """``stop``: how the running bot is stopped (default: SIGTERM to this process, which
        ``run_bridge`` takes as its signal to shut down)."""
        self.stop = stop or (lambda: os.kill(os.getpid(), signal.SIGTERM))
        self.paused = False  # the running bot was stopped to pause, not to end
        self._resume = threading.Event()
        self._running = True
        self._lock = threading.Lock()

    def install(self, stdin: TextIO | None = None) -> None:
        """Listen for the signal, and for Enter on ``stdin`` when it is a terminal (a pipe or
        /dev/null of a service or a test is never read)."""
        signal.signal(TOGGLE_SIGNAL, lambda *_: self.toggle())
        stdin = sys.stdin if stdin is None else stdin
        if stdin is not None and stdin.isatty():
            threading.Thread(target=self._read_lines, args=(stdin,), daemon=True).start()

    def toggle(self) -> None:
        """Stop the running bot (as SIGTERM does: ``run_bridge`` shuts down), or start the
        stopped one."""
        with self._lock:
            if self._running:
                self._running, self.paused = False, True
                self._resume.clear()
                self.stop()
            else:
                self._running = True
                self._resume.set()

    def wait_to_resume(self) -> None:
        """Block until the bot is to run again (Ctrl-C raises ``KeyboardInterrupt``)."""
        while not self._resume.wait(0.2):
            pass
        self.paused = False

    def _read_lines(self, stdin: TextIO) -> None:
        for _ in stdin:
            self.toggle()
