"""The bridge's only contact with tmux: find or start a project's window, type into it, read it.

A thin layer over libtmux. Windows are found by a window option (``@discord-bridge-channel``)
holding their Discord channel id, so a renamed window is still found and an unrelated window
that happens to share a project's name is never touched. Every call blocks on a ``tmux``
subprocess; the bot calls this module through ``asyncio.to_thread``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import libtmux
from libtmux.exc import LibTmuxException

from bridge.sessions.typed_text import chunk_for_typing

CHANNEL_OPTION = "@discord-bridge-channel"
TYPE_CHUNK = 100  # characters per send-keys: a longer burst is taken for a paste
TYPE_PAUSE = 0.03  # seconds between chunks, for the same reason
ECHO_EVERY = 3  # chunks typed between checks that the CLI has taken them in
SUBMIT_CHECK = 0.3  # seconds after Enter before looking whether the prompt left the box
SUBMIT_RETRIES = 3
CLEAR_ROUNDS = 20  # C-u clears one line of a multi-line leftover per round
# Dim hint text Claude Code shows in an empty box (measured in 2.1.330).
PLACEHOLDERS = ("Press up to edit queued messages",)
RULE = "────"


class TmuxError(RuntimeError):
    """tmux refused a command, or a pane died before it was ready."""


class NoInputBox(TmuxError):
    """Claude Code shows a dialog (permission, question, plan) instead of its input box."""


class PaneInfo:
    __slots__ = ("channel_id", "dead", "pane_id", "window_id", "window_name")

    def __init__(self, fields: list[str]) -> None:
        self.window_id, self.window_name, self.channel_id, self.pane_id, dead = fields
        self.dead = dead == "1"

    def __repr__(self) -> str:
        return f"<Pane {self.pane_id} {self.window_name} #{self.channel_id}>"


class TmuxSessions:
    """One tmux session (one Discord server) on one tmux server (socket)."""

    def __init__(self, session_name: str, socket_name: str | None = None) -> None:
        self.session_name = session_name
        self.server = libtmux.Server(socket_name=socket_name)
        self._start_lock = threading.Lock()

    # --- finding ---------------------------------------------------------------------

    def panes(self) -> list[PaneInfo]:
        """Every bridge pane of this session (windows without the channel option are skipped)."""
        if not self._has_session():
            return []
        fields = ("window_id", "window_name", CHANNEL_OPTION, "pane_id", "pane_dead")
        fmt = "\t".join("#{" + field + "}" for field in fields)
        out = self._run("list-panes", "-s", "-t", self._target(), "-F", fmt)
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
        behind instead of racing the options.
        """
        command = ["env", *(f"{key}={value}" for key, value in env.items()), *argv]
        with self._start_lock:  # window indexes and the session are shared by all channels
            if self._has_session():
                target = ["-t", f"{self._target()}:{self._free_index()}"]
                create = ["new-window", "-d", *target, "-n", literal(window_name)]
            else:
                target = []  # the new session's only window is the sequence's current one
                create = ["new-session", "-d", "-s", self.session_name, "-n", literal(window_name)]
                create += ["-x", "200", "-y", "50"]
            self._run(
                *create, "-c", literal(cwd), *map(literal, command),
                ";", "set-option", "-w", *target, CHANNEL_OPTION, channel_id,
                ";", "set-option", "-w", *target, "remain-on-exit", "on",
            )  # fmt: skip
        pane = self.find(channel_id)
        if pane is None:
            raise TmuxError(f"window {window_name} vanished right after it was created")
        return pane

    def kill(self, pane_id: str) -> None:
        self._run("kill-pane", "-t", pane_id)

    # --- input and output ------------------------------------------------------------

    def type_text(self, pane_id: str, text: str, chunk: int = TYPE_CHUNK) -> None:
        """Type ``text`` literally in pieces of ``chunk`` characters, then press Enter.

        Claude Code takes input that arrives in one large read for a paste and hands it to
        the model as untrusted ``<pasted_content>``. Pieces of 100 characters 30 ms apart
        avoid that; and every few pieces we wait until the text so far shows on the screen,
        so a busy machine that stalls the CLI cannot let several pieces pile up into one read.

        Before every piece the input box must still be on screen: a dialog that opens while
        we type (Claude was busy and asks for permission) would take digits as choices and
        Enter as "Yes", so we stop with :class:`NoInputBox` instead.

        Newlines inside ``-l`` text arrive as Ctrl+J, which Claude Code's input box takes as
        a line break, so a multi-line message stays one prompt. A typed Tab would be taken as
        a key (completion), so pieces holding tabs go in as a bracketed paste instead: small
        pastes are inserted as plain text. Pieces never split an emoji or a combining mark.
        """
        typed = ""
        for index, piece in enumerate(chunk_for_typing(text, chunk)):
            if index:
                time.sleep(TYPE_PAUSE)
            if index and index % ECHO_EVERY == 0:
                self._wait_echo(pane_id, typed)
            self._require_input_box(pane_id)
            typed += piece
            if "\t" in piece:
                self._paste(pane_id, piece)
            else:
                self._run("send-keys", "-t", pane_id, "-l", "--", literal(piece))
        self._submit(pane_id, text)

    def _submit(self, pane_id: str, text: str) -> None:
        """Press Enter, and again while the text is still in the input box.

        Claude Code 2.1.330 sometimes swallows an Enter (measured: the first prompt of a
        fresh session, or one right after a typed file path, stays in the box; a second Enter
        sends it). We first wait for the text to show: until then an empty box would read as
        "submitted", and an Enter that races the echo is the one that gets dropped.
        """
        self._wait_echo(pane_id, text)
        try:  # a redraw (a session starting next to others, the status line) can hide the box
            self.wait_for(pane_id, lambda screen: box_holds(screen, text), 2.0)
        except TmuxError:
            raise NoInputBox(
                "The input box changed while your message was typed (a dialog opened?); it "
                "was not sent. Check the terminal."
            ) from None
        self._run("send-keys", "-t", pane_id, "Enter")
        for _ in range(SUBMIT_RETRIES):
            time.sleep(SUBMIT_CHECK)
            if not box_holds(self.capture(pane_id), text):
                return
            self._run("send-keys", "-t", pane_id, "Enter")

    def _require_input_box(self, pane_id: str) -> None:
        if input_box(self.capture(pane_id)) is None:
            raise NoInputBox(
                "A dialog opened in the terminal while your message was typed; it was not "
                "sent. Answer the dialog, then send the message again."
            )

    def _wait_echo(self, pane_id: str, typed: str, timeout: float = 2.0) -> None:
        """Best effort: wait until the end of ``typed`` is on screen (whitespace ignored, as
        the input box wraps and indents)."""
        tail = _signature(typed)[-12:]
        if not tail:
            return
        try:
            self.wait_for(pane_id, lambda screen: tail in _signature(screen), timeout)
        except TmuxError:
            pass  # the screen may not show it (scrolled, wrapped oddly): checked before Enter

    def _paste(self, pane_id: str, piece: str) -> None:
        buffer = f"discord-bridge-{pane_id.lstrip('%')}"
        self._run("set-buffer", "-b", buffer, "--", literal(piece))
        self._run("paste-buffer", "-p", "-d", "-b", buffer, "-t", pane_id)

    def capture(self, pane_id: str, history: int = 0) -> str:
        """The pane's screen as plain text (no escape sequences), plus ``history`` lines of
        scrollback above it."""
        extra = ["-S", str(-history)] if history > 0 else []
        return "\n".join(self._run("capture-pane", "-p", *extra, "-t", pane_id))

    def press(self, pane_id: str, *keys: str) -> None:
        """Send tmux key names (``Escape``, ``Enter``, ``BTab``, ``C-u``…), not text."""
        self._run("send-keys", "-t", pane_id, *keys)

    def type_literal(self, pane_id: str, text: str) -> None:
        """Send ``text`` as literal characters, without Enter and without checks (``/keys``)."""
        self._run("send-keys", "-t", pane_id, "-l", "--", literal(text))

    def current_path(self, pane_id: str) -> str:
        out = self._run("display-message", "-p", "-t", pane_id, "#{pane_current_path}")
        return out[0] if out else ""

    def clear_input(self, pane_id: str, timeout: float = 2.0) -> None:
        """Make sure the input box is on screen and empty before typing a prompt.

        A dialog on screen raises :class:`NoInputBox`: typed text would pick its options and
        Enter would confirm the highlighted one. Text left in the box (typed at the terminal,
        or put back by an interrupt) is cleared so it does not merge with the new prompt.
        """
        try:
            screen = self.wait_for(pane_id, lambda s: input_box(s) is not None, timeout)
        except TmuxError:
            raise NoInputBox(
                "Claude Code is showing a dialog in the terminal (permission, question or plan);"
                " answer it first. Your message was not typed."
            ) from None
        for _ in range(CLEAR_ROUNDS):
            if not input_box(screen):
                return
            self._run("send-keys", "-t", pane_id, "C-e", "C-u")
            if input_box(self.capture(pane_id)):  # an emptied line of a multi-line leftover
                self._run("send-keys", "-t", pane_id, "BSpace")
            time.sleep(0.05)
            screen = self.capture(pane_id)

    def wait_ready(self, pane_id: str, timeout: float = 30.0, poll: float = 0.05) -> None:
        """Wait until Claude Code shows its empty prompt box (``❯`` between two rules).

        The folder-trust dialog of a directory Claude Code has not seen is a question only
        the owner may answer, at the terminal: stop at once and say so.
        """
        screen = self.wait_for(pane_id, lambda s: is_prompt_ready(s) or asks_trust(s), timeout)
        if asks_trust(screen):
            raise TmuxError(
                "Claude Code asks whether to trust this folder; answer it once in the terminal "
                f"(tmux attach, window {pane_id}), then send your message again"
            )

    def wait_for(
        self, pane_id: str, check: Callable[[str], bool], timeout: float, poll: float = 0.05
    ) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture(pane_id)
            if check(screen):
                return screen
            if self._pane_dead(pane_id):
                raise TmuxError(f"the pane exited before it was ready; last screen:\n{screen}")
            if time.monotonic() > deadline:
                raise TmuxError(f"timed out after {timeout:.0f} s; last screen:\n{screen}")
            time.sleep(poll)

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

    def _pane_dead(self, pane_id: str) -> bool:
        try:
            out = self._run("display-message", "-p", "-t", pane_id, "#{pane_dead}")
        except TmuxError:
            return True
        return out[:1] == ["1"]

    def _run(self, *args: str) -> list[str]:
        try:
            result = self.server.cmd(*args)
        except LibTmuxException as err:
            raise TmuxError(str(err)) from err
        if result.returncode != 0:
            raise TmuxError(f"tmux {args[0]}: {' '.join(result.stderr) or result.returncode}")
        return result.stdout


def input_box(screen: str) -> str | None:
    """The text in Claude Code's input box, or None when no input box is on screen.

    The box is the last region between two ``────`` rules whose first line starts with
    ``❯``. Dialogs (permission, question, plan) replace the box: their ``❯ 1. Yes`` line does
    not sit right below a rule, so a dialog reads as "no box" and nothing gets typed into it.
    """
    lines = [line.strip() for line in screen.splitlines()]
    rules = [i for i, line in enumerate(lines) if line.startswith(RULE)]
    if len(rules) < 2:
        return None
    top, bottom = rules[-2], rules[-1]
    body = lines[top + 1 : bottom]
    if not body or not body[0].startswith("❯"):
        return None
    body[0] = body[0][1:]
    text = "\n".join(line.strip() for line in body).strip()
    return "" if text in PLACEHOLDERS else text


BUSY_MARKER = "esc to interrupt"  # Claude Code's footer while a turn runs
# Footer text of each permission mode (2.1.330; "manual" is what hooks call "default").
MODE_MARKERS = (
    ("manual mode on", "default"),
    ("accept edits on", "acceptEdits"),
    ("plan mode on", "plan"),
    ("auto mode on", "auto"),
    ("bypass permissions on", "bypassPermissions"),
    ("don't ask mode on", "dontAsk"),
)


def is_busy(screen: str) -> bool:
    """A turn is running: the footer offers to interrupt it."""
    return BUSY_MARKER in screen


def mode_on_screen(screen: str) -> str | None:
    """The permission mode Claude Code's footer shows, as hooks name it, or None."""
    tail = "\n".join(screen.splitlines()[-4:]).lower()
    for marker, mode in MODE_MARKERS:
        if marker in tail:
            return mode
    return None


def asks_trust(screen: str) -> bool:
    """Claude Code's folder-trust dialog (2.1.330: "Is this a project you created or one you
    trust?"; older versions: "Do you trust the files in this folder?")."""
    return "one you trust" in screen or "trust the files in this folder" in screen


def is_prompt_ready(screen: str) -> bool:
    """Claude Code shows its input box, empty."""
    return input_box(screen) == ""


def box_holds(screen: str, text: str) -> bool:
    """Whether the input box holds ``text``. Compared on ASCII letters and digits only: the
    box wraps and indents lines, expands tabs, and drops characters it deems invisible."""
    box = input_box(screen)
    if not box:
        return False
    wanted = _signature(text)[:40]
    return _signature(box).startswith(wanted) if wanted else True


def _signature(text: str) -> str:
    return "".join(c for c in text if c.isascii() and c.isalnum())


def literal(argument: str) -> str:
    """tmux takes an argument ending in ``;`` as a command separator and drops the ``;``;
    ``\\;`` keeps it literal (measured with tmux 3.3a)."""
    return argument[:-1] + "\\;" if argument.endswith(";") else argument
