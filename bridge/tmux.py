"""The bridge's only contact with tmux: find or start a project's window, type into it, read it.

A thin layer over libtmux. Windows are found by a window option (``@discord-bridge-channel``)
holding their Discord channel id, so a renamed window is still found and an unrelated window
that happens to share a project's name is never touched. Every call blocks: on the bot's one
control-mode connection (``bridge/tmux_control.py``) for captures, queries and key names, on a
``tmux`` subprocess for the rest; the bot calls this module through ``asyncio.to_thread``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import libtmux
from libtmux.exc import LibTmuxException

from bridge.tmux_control import ControlConnection, ControlLost

CHANNEL_OPTION = "@discord-bridge-channel"
DEAD_CHECK = 0.5  # seconds between "did the pane die?" checks while waiting for a screen
DEAD_HISTORY = 100  # scrollback lines captured with a dead pane's screen (see _exited)
STATUS_WAIT = 0.2  # seconds a dead pane's exit status may take to be known (see _exited)
HEX_KEYS_PER_COMMAND = 2048  # bytes per send-keys -H: a tmux client refuses a longer command
# ("command too long", measured with tmux 3.3a at 20 KB as a process); a typed piece of 100
# characters is one command
ADDRESS_SEP = "@"  # a pane address on another tmux server: ``%12@/tmp/tmux-1000/work``


def pane_address(socket_path: str, pane_id: str) -> str:
    """The address of pane ``pane_id`` of the tmux server listening on ``socket_path``: what
    :class:`TmuxSessions` takes wherever it takes a pane id, for a pane the bridge did not
    start (an adopted session, ``bridge/sessions/adoption.py``). tmux pane ids are ``%<n>``,
    so the separator never occurs in one; a bare id is a pane of the bridge's own server."""
    return f"{pane_id}{ADDRESS_SEP}{socket_path}"


def split_address(address: str) -> tuple[str | None, str]:
    """(socket path or None for the bridge's own server, pane id) of a pane address."""
    pane_id, sep, socket_path = address.partition(ADDRESS_SEP)
    return (socket_path, pane_id) if sep and socket_path.startswith("/") else (None, address)


class TmuxError(RuntimeError):
    """tmux refused a command, or a pane died before it was ready."""


class PaneExited(TmuxError):
    """The pane's command ended before the screen we waited for: ``screen`` is what the pane
    showed once it had died (its final words), ``status`` its exit status (None: unknown)."""

    def __init__(self, pane_id: str, screen: str, status: int | None) -> None:
        shown = f" (status {status})" if status is not None else ""
        super().__init__(f"the pane exited{shown} before it was ready; last screen:\n{screen}")
        self.pane_id, self.screen, self.status = pane_id, screen, status


class PaneInfo:
    __slots__ = ("channel_id", "dead", "pane_id", "window_id", "window_name")

    def __init__(self, fields: list[str]) -> None:
        self.window_id, self.window_name, self.channel_id, self.pane_id, dead = fields
        self.dead = dead == "1"

    def __repr__(self) -> str:
        return f"<Pane {self.pane_id} {self.window_name} #{self.channel_id}>"


class TmuxSessions:
    """One tmux session (one Discord server) on one tmux server (socket)."""

    def __init__(
        self, session_name: str, socket_name: str | None = None, control: bool = False
    ) -> None:
        """``control``: send the frequent bridge-made commands over one persistent control-mode
        connection (``bridge/tmux_control.py``) instead of a process each; call :meth:`close`."""
        self.session_name = session_name
        self.server = libtmux.Server(socket_name=socket_name)
        self._others: dict[str, libtmux.Server] = {}  # other servers, by socket path
        self._start_lock = threading.Lock()
        self._control = ControlConnection(socket_name, session_name) if control else None

    def close(self) -> None:
        if self._control is not None:
            self._control.close()

    # --- finding ---------------------------------------------------------------------

    def panes(self) -> list[PaneInfo]:
        """Every bridge pane of this session (windows without the channel option are skipped).

        One tmux command when the session exists (the relay asks before every message);
        only when it fails do we ask whether the session is there at all (another thread may
        have just started the server and the session: then ask again)."""
        fields = ("window_id", "window_name", CHANNEL_OPTION, "pane_id", "pane_dead")
        fmt = "\t".join("#{" + field + "}" for field in fields)
        command = ("list-panes", "-s", "-t", self._target(), "-F", fmt)
        try:
            out = self._run(*command)
        except TmuxError:
            if not self._has_session():
                return []
            out = self._run(*command)
        panes = [PaneInfo(line.split("\t")) for line in out if line.count("\t") == 4]
        return [p for p in panes if p.channel_id]

    def find(self, channel_id: str) -> PaneInfo | None:
        for pane in self.panes():
            if pane.channel_id == channel_id:
                return pane
        return None

    # --- starting and stopping -------------------------------------------------------

    def start(
        self, channel_id: str, window_name: str, cwd: str, argv: list[str], env: dict[str, str]
    ) -> PaneInfo:
        """Start ``argv`` as the command of a new window (no shell in between to type into).

        tmux runs a command given as several arguments directly, so nothing is re-parsed by
        the user's shell; ``env`` sets the marker variables (``new-session -e`` needs tmux
        3.2, and tmux would override PATH/TERM given that way). The window is tagged with its
        channel and set to remain on exit in the same tmux command sequence that creates it:
        a command that dies at once (a wrong ``claudeCommand``) then leaves its last screen
        behind instead of racing the options. tmux expands formats in the session and window
        names and the ``-c`` directory (``#(cmd)`` runs a shell command, ``#{pane_id}`` is
        replaced): those go through :func:`no_format`; the command's own arguments are taken
        as they are (measured with tmux 3.3a).
        """
        command = ["env", *(f"{key}={value}" for key, value in env.items()), *argv]
        with self._start_lock:  # window indexes and the session are shared by all channels
            if self._has_session():
                target = ["-t", f"{self._target()}:{self._free_index()}"]
                create = ["new-window", "-d", *target, "-n", no_format(window_name)]
            else:
                target = []  # the new session's only window is the sequence's current one
                create = ["new-session", "-d", "-s", no_format(self.session_name)]
                create += ["-n", no_format(window_name)]
                create += ["-x", "200", "-y", "50"]
            self._run(
                *create,
                "-c",
                no_format(cwd),
                *map(literal, command),
                ";",
                "set-option",
                "-w",
                *target,
                CHANNEL_OPTION,
                channel_id,
                ";",
                "set-option",
                "-w",
                *target,
                "remain-on-exit",
                "on",
            )
        pane = self.find(channel_id)
        if pane is None:
            raise TmuxError(f"window {window_name} vanished right after it was created")
        return pane

    def kill(self, pane_id: str) -> None:
        self._on(pane_id, "kill-pane", "-t")

    # --- input and output ------------------------------------------------------------

    def paste(self, pane_id: str, piece: str) -> None:
        """Insert ``piece`` as a bracketed paste (tabs stay text, not key presses)."""
        socket_path, pane = split_address(pane_id)
        buffer = f"discord-bridge-{pane.lstrip('%')}"
        self._run("set-buffer", "-b", buffer, "--", literal(piece), socket=socket_path)
        self._run("paste-buffer", "-p", "-d", "-b", buffer, "-t", pane, socket=socket_path)

    def capture(self, pane_id: str, history: int = 0) -> str:
        """The pane's screen as plain text (no escape sequences), plus ``history`` lines of
        scrollback above it."""
        extra = ["-S", str(-history)] if history > 0 else []
        return "\n".join(self._on(pane_id, "capture-pane", "-p", *extra, "-t"))

    def press(self, pane_id: str, *keys: str) -> None:
        """Send tmux key names (``Escape``, ``Enter``, ``BTab``, ``C-u``…), not text."""
        self._on(pane_id, "send-keys", "-t", after=keys)

    def type_literal(self, pane_id: str, text: str) -> None:
        """Send ``text`` as literal characters, without Enter and without checks.

        As ``send-keys -H``: each byte of the text in hex, which tmux writes to the pane as
        it is (the very bytes ``send-keys -l`` writes, measured with tmux 3.3a for quotes,
        ``;``, ``#{}``, newlines, tabs, control characters and emoji sequences). Nothing of
        the text can reach tmux's command parser that way, so it goes over the control
        connection too: no ``tmux`` process per piece waiting for a CPU under load."""
        data = text.encode()
        for start in range(0, len(data), HEX_KEYS_PER_COMMAND):
            hexed = tuple(f"{b:02x}" for b in data[start : start + HEX_KEYS_PER_COMMAND])
            self._on(pane_id, "send-keys", "-H", "-t", after=hexed)

    def current_path(self, pane_id: str) -> str:
        out = self._on(pane_id, "display-message", "-p", "-t", after=("#{pane_current_path}",))
        return out[0] if out else ""

    def pane_size(self, pane_id: str) -> tuple[int, int]:
        """The pane's width and height in cells (what its screen shows now: a client attached
        with a smaller terminal makes it smaller)."""
        out = self._on(
            pane_id, "display-message", "-p", "-t", after=("#{pane_width} #{pane_height}",)
        )
        width, _, height = (out[0] if out else "").partition(" ")
        if not (width.isdigit() and height.isdigit()):
            raise TmuxError(f"tmux gave no size for {pane_id}: {out!r}")
        return int(width), int(height)

    def wait_for(
        self, pane_id: str, check: Callable[[str], bool], timeout: float, poll: float = 0.05
    ) -> str:
        """Capture the pane every ``poll`` seconds until ``check(screen)``; the screen then.
        Whether the pane died is asked every ``DEAD_CHECK`` seconds (and at the end), not
        after every capture: each is a tmux command, and 20 busy sessions poll at once."""
        now = time.monotonic()
        deadline, next_dead_check = now + timeout, now + DEAD_CHECK
        while True:
            screen = self.capture(pane_id)
            if check(screen):
                return screen
            now = time.monotonic()
            if now > deadline or now >= next_dead_check:
                if self.pane_dead(pane_id):
                    raise self._exited(pane_id, screen)
                if now > deadline:
                    raise TmuxError(f"timed out after {timeout:.0f} s; last screen:\n{screen}")
                next_dead_check = now + DEAD_CHECK
            time.sleep(poll)

    def _exited(self, pane_id: str, seen: str) -> PaneExited:
        """What a dead pane left: its screen captured now that nothing redraws it (the one
        seen while waiting may be up to ``DEAD_CHECK`` older than the CLI's last words), and
        its exit status. The capture reaches into the scrollback: tmux writes its "Pane is
        dead" line below the cursor, which can scroll the last words off the screen (a short
        ``echo`` before exit: all of it). tmux marks a pane dead when its terminal closes and
        learns the status when it reaps the process: ``pane_dead_status`` can be empty for
        ~20 ms, so it is asked again for up to ``STATUS_WAIT``; and some deaths never get
        one (tmux 3.3a, measured: 2 of 40 ``false`` panes, 7 of 24 shells that lived 0.3 s,
        still empty 0.6 s later; nor is the "Pane is dead" line written then). A command
        that dies within milliseconds (a wrong ``claudeCommand``) may also show no word."""
        deadline = time.monotonic() + STATUS_WAIT
        try:
            while True:
                out = self._on(
                    pane_id, "display-message", "-p", "-t", after=("#{pane_dead_status}",)
                )
                status = out[0] if out else ""
                if status.isdigit() or time.monotonic() >= deadline:
                    break
                time.sleep(0.02)
            screen = self.capture(pane_id, history=DEAD_HISTORY)
        except TmuxError:  # the window is gone too: what we saw is all there is
            return PaneExited(pane_id, seen, None)
        return PaneExited(pane_id, screen or seen, int(status) if status.isdigit() else None)

    # --- plumbing --------------------------------------------------------------------

    def _target(self) -> str:
        return "=" + self.session_name  # '=' asks tmux for an exact name match

    def _has_session(self) -> bool:
        try:
            self._run("has-session", "-t", self._target())
        except TmuxError:
            return False
        return True

    def _free_index(self) -> int:
        out = self._run("list-windows", "-t", self._target(), "-F", "#{window_index}")
        return max((int(index) for index in out if index.isdigit()), default=0) + 1

    def pane_pid(self, pane_id: str) -> int:
        """The process the pane runs (its shell, or Claude Code itself)."""
        out = self._on(pane_id, "display-message", "-p", "-t", after=("#{pane_pid}",))
        if not (out and out[0].isdigit()):
            raise TmuxError(f"tmux gave no process for {pane_id}: {out!r}")
        return int(out[0])

    def pane_dead(self, pane_id: str) -> bool:
        try:
            out = self._on(pane_id, "display-message", "-p", "-t", after=("#{pane_dead}",))
        except TmuxError:
            return True
        return out[:1] == ["1"]

    def _on(self, pane_id: str, *args: str, after: tuple[str, ...] = ()) -> list[str]:
        """Run ``args`` followed by the pane (``-t`` last in ``args``) and ``after``, on the
        server the pane address names (:func:`split_address`)."""
        socket_path, pane = split_address(pane_id)
        return self._run(*args, pane, *after, socket=socket_path)

    def _run(self, *args: str, socket: str | None = None) -> list[str]:
        if socket is not None:  # a pane of another server: a process each, no control mode
            return self._run_process(self._other(socket), args)
        if self._control is not None and self._control.takes(args):
            try:
                reply = self._control.run(args)
            except ControlLost as err:
                if args[0] == "send-keys":  # it may have been pressed: never press it twice
                    raise TmuxError(f"tmux {args[0]}: {err}") from err
                reply = None  # a read: ask again, as a process
            if reply is not None:
                ok, out = reply
                if not ok:
                    raise TmuxError(f"tmux {args[0]}: {' '.join(out) or 'failed'}")
                return out
        return self._run_process(self.server, args)

    def _other(self, socket_path: str) -> libtmux.Server:
        server = self._others.get(socket_path)
        if server is None:
            server = self._others[socket_path] = libtmux.Server(socket_path=socket_path)
        return server

    @staticmethod
    def _run_process(server: libtmux.Server, args: tuple[str, ...]) -> list[str]:
        try:
            result = server.cmd(*args)
        except LibTmuxException as err:
            raise TmuxError(str(err)) from err
        if result.returncode != 0:
            raise TmuxError(f"tmux {args[0]}: {' '.join(result.stderr) or result.returncode}")
        return result.stdout


def literal(argument: str) -> str:
    """tmux takes an argument ending in ``;`` as a command separator and drops the ``;``;
    ``\\;`` keeps it literal (measured with tmux 3.3a)."""
    return argument[:-1] + "\\;" if argument.endswith(";") else argument


def no_format(argument: str) -> str:
    """An argument tmux expands as a format (``new-session -s``, ``new-window -n``, ``-c``),
    made literal: ``##`` is tmux's escape for a ``#``, so ``#(cmd)`` never runs and
    ``#{…}`` is never replaced (measured with tmux 3.3a). Also :func:`literal`."""
    return literal(argument.replace("#", "##"))
