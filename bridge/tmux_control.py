"""One persistent tmux control-mode connection (``tmux -C``) for the bot's frequent commands.

The bot uses it (``tmux.controlMode``, on by default). Each libtmux command is a ``tmux``
process: a few ms on an idle machine, but 270 ms p50 / 830 ms p95 once 20 Claude Code sessions
keep both cores busy (``bench/scale.py``), and a typed message takes about ten of them. Over a
control-mode connection a command is one line written to a pipe and a ``%begin``/``%end``
block read back, with no process to start: 0.1 ms, and the 20-session relay p95 went from 7.4 s
to 2.3 s in one run. (An earlier version stalled under that load: it wrote its first command
before the attach was done, tmux then answers "no current client" or answers in the other
order, and the connection waited ``REPLY_TIMEOUT`` for a reply it had taken for the attach's,
every worker queued behind it, again on each reconnect. It now waits for the attach first.)
A reply that does not come within ``REPLY_TIMEOUT`` drops the connection; the command is then
run as a process, except a key press, which is never pressed twice.

Only commands whose arguments the bridge makes itself go this way (``CONTROL_COMMANDS``: pane
captures, ``display-message``, ``list-panes``, key names for ``send-keys``); anything carrying
user text (``send-keys -l``, buffers) or creating windows keeps its own process, so no message
text ever passes tmux's command parser. An argument with a quote or a line break is refused
here too. One command at a time (a lock); when the connection is not there (no session yet, the
server died) the caller runs the command as a process instead.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time

CONTROL_COMMANDS = frozenset(
    {"capture-pane", "display-message", "list-panes", "list-windows", "has-session", "send-keys"}
)
REPLY_TIMEOUT = 10.0  # seconds for tmux to answer one command before the connection is dropped
RECONNECT_PAUSE = 1.0  # seconds between attempts to connect while there is no session


class ControlLost(RuntimeError):
    """The connection died with a command in flight: whether it ran is unknown."""


class ControlConnection:
    def __init__(self, socket_name: str | None, session_name: str) -> None:
        self.base = ["tmux", *(["-L", socket_name] if socket_name else [])]
        self.session_name = session_name
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._next_attempt = 0.0

    @staticmethod
    def takes(args: tuple[str, ...]) -> bool:
        """Whether ``args`` may go over the connection (see the module docstring)."""
        if not args or args[0] not in CONTROL_COMMANDS:
            return False
        if args[0] == "send-keys" and ("-l" in args or "--" in args):
            return False  # literal text: always its own process
        return not any(("'" in a) or ("\n" in a) or ("\r" in a) for a in args)

    def run(self, args: tuple[str, ...]) -> tuple[bool, list[str]] | None:
        """``(ok, output lines)``, or None when there is no connection (run it as a process).
        Raises :class:`ControlLost` when the connection died after the command was sent."""
        line = " ".join("'" + a + "'" for a in args) + "\n"
        with self._lock:
            if not self._connected():
                return None
            assert self._proc is not None and self._proc.stdin is not None
            try:
                self._proc.stdin.write(line)
                self._proc.stdin.flush()
            except OSError:
                self._drop()
                return None  # never reached tmux
            try:
                return self._reply()
            except ControlLost:
                self._drop()
                raise

    def close(self) -> None:
        with self._lock:
            self._drop()

    # --- plumbing --------------------------------------------------------------------

    def _connected(self) -> bool:
        if self._proc is not None and self._proc.poll() is None:
            return True
        self._drop()
        now = time.monotonic()
        if now < self._next_attempt:
            return False
        self._next_attempt = now + RECONNECT_PAUSE
        proc = subprocess.Popen(
            # -N: attach-session would start a server when there is none, racing the bot's
            # own new-session; without a server this fails at once instead
            [*self.base, "-N", "-C", "attach-session", "-t", "=" + self.session_name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, encoding="utf-8", errors="backslashreplace", bufsize=1,
        )  # fmt: skip
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(proc, lines), daemon=True).start()
        self._proc, self._lines = proc, lines
        # Wait for the attach's own block before sending anything: a command read before the
        # attach is done fails with "no current client" (measured with tmux 3.3a: about one
        # connection in three when written at once). A failed attach ends the client (%exit).
        # Then: no %output notifications of busy panes, and a check that we are attached.
        try:
            assert proc.stdin is not None
            attached, _ = self._reply(flags="0")
            proc.stdin.write("refresh-client -f no-output\ndisplay-message -p '#{session_name}'\n")
            proc.stdin.flush()
            filtered, _ = self._reply()
            named, name = self._reply()
        except (OSError, ControlLost):
            attached = filtered = named = False
            name = []
        if not (attached and filtered and named and name == [self.session_name]):
            self._drop()
            return False
        return True

    def _reply(self, flags: str = "1") -> tuple[bool, list[str]]:
        """Skip notifications up to a ``%begin``, then collect lines up to the ``%end`` or
        ``%error`` carrying the same time, number and flags. Only a block with ``flags`` is
        the reply: 1 for a command this client sent, 0 for the attach's own block."""
        deadline = time.monotonic() + REPLY_TIMEOUT
        begin = None
        out: list[str] = []
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise ControlLost("tmux did not answer") from None
            if line is None or (begin is None and line.startswith("%exit")):
                raise ControlLost("the control connection closed")
            if begin is None:
                if line.startswith("%begin "):
                    begin = line[len("%begin ") :]
                continue
            if line in (f"%end {begin}", f"%error {begin}"):
                if not begin.endswith(" " + flags):
                    begin, out = None, []  # not a command of ours (flags 0): skip the block
                    continue
                while out and out[-1] == "":
                    out.pop()
                return line.startswith("%end"), out
            out.append(line)

    def _drop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            if self._proc.stdin is not None:  # stdout ends on its own: the pump sees EOF
                try:
                    self._proc.stdin.close()
                except OSError:
                    pass
        self._proc = None


def _pump(proc: subprocess.Popen, lines: queue.Queue[str | None]) -> None:
    """The connection's output, line by line, into ``lines`` (None at the end)."""
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
    except (OSError, ValueError):
        pass
    lines.put(None)
