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

tmux does not escape a command's output in control mode, and a pane can show any text,
protocol lines included: each command is followed by a ``display-message`` of a random token,
and its reply is what lies before that block (see ``ControlConnection._answer``). This costs
a second command per command: a 50-row capture went from 0.136 to 0.153 ms p50, a
``display-message`` from 0.050 to 0.065 ms (still far below a process's few ms).

Only commands whose arguments the bridge makes itself go this way (``CONTROL_COMMANDS``: pane
captures, ``display-message``, ``list-panes``, key names for ``send-keys``, and typed text as
``send-keys -H``: each byte as two hex digits, so the parser sees only ``[0-9a-f]``); anything
else carrying user text (``send-keys -l``, buffers) or creating windows keeps its own process,
so no message text ever passes tmux's command parser. An argument with a quote or a line break
is refused here too. Commands are pipelined (several in flight, each caller handed its own
reply: see ``ControlConnection``); when the connection is not there (no session yet, the
server died) the caller runs the command as a process instead.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections import deque

CONTROL_COMMANDS = frozenset(
    {"capture-pane", "display-message", "list-panes", "list-windows", "has-session", "send-keys"}
)
REPLY_TIMEOUT = 10.0  # seconds for tmux to answer one command before the connection is dropped
RECONNECT_PAUSE = 1.0  # seconds between attempts to connect while there is no session


class ControlLost(RuntimeError):
    """The connection died with a command in flight: whether it ran is unknown."""


class _Reply:
    """One command in flight: the lines read for it so far, then its ``(ok, lines)`` or the
    reason it got none. ``token``: what the block after it shows (see :func:`_reply_of`);
    empty for the attach's own block."""

    __slots__ = ("done", "error", "lines", "result", "token")

    def __init__(self, token: str) -> None:
        self.token = token
        self.lines: list[str] = []
        self.done = threading.Event()
        self.result: tuple[bool, list[str]] = (False, [])
        self.error = ""

    def settle(self, result: tuple[bool, list[str]] | None = None, error: str = "") -> None:
        if result is not None:
            self.result = result
        self.error = error
        self.done.set()


class ControlConnection:
    """Commands are pipelined: each caller writes its command (with its token) under a short
    lock and waits for its own reply, which a reader thread hands over as soon as it is read;
    tmux answers a client's commands in the order it wrote them. With one command at a time
    (the lock held from the write until the reply was read) 20 busy sessions queued their
    box checks and typing behind each other's round trips, each a wake-up of tmux, of the
    reader and of the caller on a loaded machine: a command waited 0–160 ms for the lock
    while the lock was held (command to reply) about a fifth of the time (bench/scale.py,
    the bot's log, 2 cores at load 20)."""

    def __init__(self, socket_name: str | None, session_name: str) -> None:
        self.base = ["tmux", *(["-L", socket_name] if socket_name else [])]
        self.session_name = session_name
        self._lock = threading.Lock()  # the connection, its writes and the replies' order
        self._proc: subprocess.Popen | None = None
        self._waiting: deque[_Reply] = deque()  # written, not answered: in tmux's order
        self._next_attempt = 0.0

    @staticmethod
    def takes(args: tuple[str, ...]) -> bool:
        """Whether ``args`` may go over the connection (see the module docstring)."""
        if not args or args[0] not in CONTROL_COMMANDS:
            return False
        if args[0] == "send-keys" and ("-l" in args or "--" in args):
            return False  # literal text: never through the parser
        if args[0] == "send-keys" and "-H" in args:  # typed text: hex bytes, nothing else
            return (
                args[1:3] == ("-H", "-t")
                and len(args) > 4
                and _plain(args[3])
                and all(map(_is_hex_byte, args[4:]))
            )
        return all(map(_plain, args))

    def run(self, args: tuple[str, ...]) -> tuple[bool, list[str]] | None:
        """``(ok, output lines)``, or None when there is no connection (run it as a process).
        Raises :class:`ControlLost` when the connection died after the command was sent."""
        with self._lock:
            if not self._connected():
                return None
            proc = self._proc
            try:
                reply = self._send(args)
            except OSError:
                self._drop()
                return None  # never reached tmux
        try:
            return self._wait(reply)
        except ControlLost:
            with self._lock:
                if self._proc is proc:  # not reconnected meanwhile by another command
                    self._drop()
            raise

    def close(self) -> None:
        with self._lock:
            self._drop()

    # --- plumbing --------------------------------------------------------------------

    def _connected(self) -> bool:
        """(Under the lock.) Whether the connection is up, connecting it when it is not."""
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
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            errors="backslashreplace",
            bufsize=1,
        )
        waiting: deque[_Reply] = deque()
        # Wait for the attach's own block before sending anything: a command read before the
        # attach is done fails with "no current client" (measured with tmux 3.3a: about one
        # connection in three when written at once). A failed attach ends the client (%exit).
        # Then: no %output notifications of busy panes, and a check that we are attached.
        attach = _Reply("")
        waiting.append(attach)
        threading.Thread(target=_read_replies, args=(proc, waiting), daemon=True).start()
        self._proc, self._waiting = proc, waiting
        try:
            attached, _ = self._wait(attach)
            filtered, _ = self._wait(self._send(("refresh-client", "-f", "no-output")))
            named, name = self._wait(self._send(("display-message", "-p", "#{session_name}")))
        except (OSError, ControlLost):
            attached = filtered = named = False
            name = []
        if not (attached and filtered and named and name == [self.session_name]):
            self._drop()
            return False
        return True

    def _send(self, args: tuple[str, ...]) -> _Reply:
        """(Under the lock.) Write the command, then a ``display-message`` of a fresh random
        token: its block marks where the command's reply ends (see :func:`_reply_of`). The
        reply is queued before the write, so the reader never reads one it does not expect."""
        assert self._proc is not None and self._proc.stdin is not None
        reply = _Reply(os.urandom(16).hex())
        line = " ".join("'" + a + "'" for a in args)
        self._waiting.append(reply)
        try:
            self._proc.stdin.write(f"{line}\ndisplay-message -p '{reply.token}'\n")
            self._proc.stdin.flush()
        except OSError:
            self._waiting.remove(reply)
            raise
        return reply

    @staticmethod
    def _wait(reply: _Reply) -> tuple[bool, list[str]]:
        """The reply, once the reader has it (:class:`ControlLost` when it does not come
        within ``REPLY_TIMEOUT`` or cannot be read: the caller drops the connection)."""
        if not reply.done.wait(REPLY_TIMEOUT):
            raise ControlLost("tmux did not answer")
        if reply.error:
            raise ControlLost(reply.error)
        return reply.result

    def _drop(self) -> None:
        """(Under the lock.) End the connection; every command still waiting for its reply
        gets :class:`ControlLost` from the reader once it reads the end, or its timeout. The
        tmux server writes a control client's output to the client's stdout itself: a reply
        can still come after the client is killed (a key sent may still be pressed, once)."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            if self._proc.stdin is not None:  # stdout ends on its own: the reader sees EOF
                try:
                    self._proc.stdin.close()
                except OSError:
                    pass
        self._proc = None


def _plain(arg: str) -> bool:
    """An argument that cannot leave its quotes or its line: no quote, no line break."""
    return not ("'" in arg or "\n" in arg or "\r" in arg)


def _is_hex_byte(arg: str) -> bool:
    return len(arg) == 2 and all(ch in "0123456789abcdef" for ch in arg)


def _closes_block(line: str) -> bool:
    """An ``%end``/``%error`` line of a command this client sent (flags 1; 0 is a block tmux
    runs on its own for the client, such as the attach's)."""
    return line.startswith(("%end ", "%error ")) and line.endswith(" 1")


def _same_block(begin: str, end: str) -> bool:
    """``%begin <time> <number> <flags>`` and the ``%end`` (or ``%error``) closing it."""
    if not begin.startswith("%begin "):
        return False
    guard = begin[len("%begin ") :]
    return end in (f"%end {guard}", f"%error {guard}")


def _read_replies(proc: subprocess.Popen, waiting: deque[_Reply]) -> None:
    """The connection's reader: each line goes to the oldest command still waiting (tmux
    answers in order), which is handed its reply once the block after it shows its token.
    Lines while nothing waits are notifications. At the end every waiting command learns
    that no reply will come."""
    assert proc.stdout is not None
    try:
        for raw in proc.stdout:
            if not waiting:
                continue
            reply = waiting[0]
            reply.lines.append(raw.rstrip("\n"))
            result = _attach_of(reply.lines) if not reply.token else _reply_of(reply)
            if result is None:
                continue
            waiting.popleft()
            if isinstance(result, str):
                reply.settle(error=result)
                proc.kill()  # a reply we cannot read: the ones after it cannot be trusted
            else:
                reply.settle(result)
    except (OSError, ValueError):
        pass
    while waiting:
        waiting.popleft().settle(error="the control connection closed")


def _reply_of(reply: _Reply) -> tuple[bool, list[str]] | str | None:
    """The reply to a command from the lines read since the one before it: ``(ok, lines)``,
    an error text when the lines cannot be its reply, or None while its token is not in.

    tmux does not escape the output of a command in control mode, so a pane's text can hold
    any line, ``%end <time> <number> 1`` and whole ``%begin … %end`` blocks included (time and
    number are guessable): reading up to the first ``%end`` that looks right cut a capture
    short and left the rest to be taken as the next command's reply. So the reply is read up
    to the block that shows the token, which no pane can (it is random, new for each command
    and never on a screen): the command's own block ends on the last ``%end``/``%error`` line
    before that one (only notifications can follow it, and none starts that way), and begins
    at the first ``%begin`` line with its time, number and flags (only notifications come
    before it, never pane text)."""
    lines = reply.lines
    if not (len(lines) >= 3 and lines[-2] == reply.token and _same_block(*lines[-3::2])):
        return None
    head = lines[:-3]
    ends = [i for i, line in enumerate(head) if _closes_block(line)]
    if not ends:
        return "tmux sent no reply for the command"
    end = ends[-1]
    guard = head[end].split(" ", 1)[1]
    if f"%begin {guard}" not in head:
        return "tmux's reply did not start as it ended"
    out = head[head.index(f"%begin {guard}") + 1 : end]
    while out and out[-1] == "":
        out.pop()
    return head[end].startswith("%end "), out


def _attach_of(lines: list[str]) -> tuple[bool, list[str]] | str | None:
    """The attach's own block (flags 0, before anything was sent): ``(True, [])`` when it
    ended with ``%end``; a failed attach ends the client (``%exit``)."""
    line = lines[-1]
    begins = [x for x in lines if x.startswith("%begin ") and x.endswith(" 0")]
    if not begins:
        return "the control connection closed" if line.startswith("%exit") else None
    begin = begins[0][len("%begin ") :]
    if line in (f"%end {begin}", f"%error {begin}"):
        return line.startswith("%end"), []
    return None
