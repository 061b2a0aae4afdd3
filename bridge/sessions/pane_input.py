"""Typing a prompt into Claude Code's input box, safely, and waiting for the box.

Claude Code takes fast input for a paste (handed to the model as untrusted
``<pasted_content>``), swallows an Enter now and then, and replaces its input box with a dialog
whenever it asks something: this module types the way a person would and checks the screen
(``bridge.claude.screen``) before every piece, so nothing typed can answer a dialog. Every
piece and key goes through the session's key gate (``key_gate.SessionKeys``): nothing is typed
while a prompt of the session is open or a tool call's dialog may be on its way.
"""

from __future__ import annotations

import logging
import time

from bridge.agents import Agent, agent_for
from bridge.claude.screen import signature
from bridge.sessions.key_gate import DialogOnScreen, NoInputBox, SessionKeys
from bridge.sessions.typed_text import chunk_for_typing
from bridge.tmux import PaneExited, TmuxError, TmuxSessions

TYPE_CHUNK = 100  # characters per send-keys: a longer burst is taken for a paste
TYPE_PAUSE = 0.03  # seconds between chunks, for the same reason
SUBMIT_CHECK = 0.3  # seconds after Enter before pressing it again if the prompt is still there
SUBMIT_POLL = 0.025  # seconds between looks at the box after Enter
SUBMIT_RETRIES = 3
# Seconds typed text may take to show in the box while the box stays on screen (a dialog that
# takes it ends the wait at once). Was 6 s: a CI run at load 10–15 refused two first messages,
# to a Claude Code just started and to one just resumed, whose first read came later than that;
# nothing was wrong but the machine's load. Keys wait in the terminal meanwhile, so waiting
# longer loses nothing and types nothing twice.
BOX_WAIT = 30.0
ECHO_WAIT = BOX_WAIT  # the same, for a piece to show before the next is typed
# Seconds a prompt waits for the agent to send the messages of its own queue first (typed
# during a turn: sent at the next tool result or the turn's end). A fresh-clone run at load saw
# Claude Code leave its queue unsent for over 0.3 s after a turn ended.
QUEUE_WAIT = 30.0
CLEAR_ROUNDS = 20  # C-u clears one line of a multi-line leftover per round
DIALOG_SETTLE = 0.5  # seconds a dialog must stay on screen to count (and to take keys)

log = logging.getLogger(__name__)


def _dialog_error(keys: SessionKeys, screen: str, message: str) -> NoInputBox:
    found = keys.screen.read_dialog(screen)
    return DialogOnScreen(message, screen) if found else NoInputBox(message)


class Timings(dict[str, float]):
    """Milliseconds per phase of one typed prompt, for the log: where the time went."""

    def lap(self, phase: str, since: float) -> float:
        now = time.monotonic()
        self[phase] = self.get(phase, 0.0) + (now - since) * 1000
        return now

    def __str__(self) -> str:
        return ", ".join(f"{phase} {ms:.0f}" for phase, ms in self.items())


def type_into_box(keys: SessionKeys, text: str, since: float | None = None) -> Timings:
    """:func:`clear_input`, then :func:`type_prompt`, in one worker thread (one wait for a
    thread per message, not two: with 20 sessions busy each is a wait for a CPU). Returns
    where the time went; ``since``: when the caller asked (the box's time starts there)."""
    timings = Timings()
    mark = time.monotonic() if since is None else since
    clear_input(keys)
    timings.lap("box", mark)
    type_prompt(keys, text, TYPE_CHUNK, timings, box_seen=True)
    return timings


def type_prompt(
    keys: SessionKeys,
    text: str,
    chunk: int = TYPE_CHUNK,
    timings: Timings | None = None,
    box_seen: bool = False,
) -> None:
    """Type ``text`` literally in pieces of ``chunk`` characters, then press Enter.

    Claude Code takes input that arrives in one large read for a paste and hands it to
    the model as untrusted ``<pasted_content>``. Pieces of 100 characters 30 ms apart
    avoid that; and before every piece we wait until the text so far shows on the screen,
    so a busy machine that stalls the CLI cannot let several pieces pile up into one read.

    Before every piece the input box must still be on screen and the key gate open: a
    dialog that opens while we type (Claude was busy and asks for permission) would take
    digits as choices and Enter as "Yes", so we stop with :class:`NoInputBox` instead.

    Newlines inside ``-l`` text arrive as Ctrl+J, which Claude Code's input box takes as
    a line break, so a multi-line message stays one prompt. A typed Tab would be taken as
    a key (completion), so pieces holding tabs go in as a bracketed paste instead: small
    pastes are inserted as plain text. An agent that ``pastes_text`` (Codex, whose fast keys
    can lose a ``?`` to its shortcuts) gets every piece as a bracketed paste, each small
    enough to be inserted as typed. Pieces never split an emoji or a combining mark.

    ``box_seen``: the caller saw the empty input box just now (:func:`clear_input`, in the
    same thread), so the first piece needs no second capture of the screen, only the key
    gate: with 20 sessions busy a capture waits for the CPU (bench/scale.py).
    """
    timings = Timings() if timings is None else timings
    typed = ""
    mark = time.monotonic()
    for index, piece in enumerate(chunk_for_typing(text, chunk)):
        if index:
            time.sleep(TYPE_PAUSE)
        # Every piece in the box before the next, else a Claude Code that reads late (a
        # loaded machine) gets two in one read: a paste. On a quiet machine it costs little
        # (bench/long_prompt.py --flat: 5,000 characters typed in 2.1 s every third, 2.3 s).
        if index and not _wait_echo(keys, typed):
            _require_input_box(keys)  # a dialog took the box: say so
            raise NoInputBox(
                f"{keys.agent.label} did not show your message as it was typed (a busy machine?); "
                "it was not sent. Send it again."
            )
        if index == 0 and box_seen:
            keys.check("your message")
        else:
            _require_input_box(keys)
        typed += piece
        if "\t" in piece or keys.agent.pastes_text:
            keys.paste(piece)
        else:
            keys.type_literal(piece)
    _submit(keys, text, timings, timings.lap("type", mark))


def _submit(keys: SessionKeys, text: str, timings: Timings, mark: float) -> None:
    """Press Enter, and again while the text is still in the input box.

    Claude Code 2.1.330 sometimes swallows an Enter (measured: the first prompt of a
    fresh session, or one right after a typed file path, stays in the box; a second Enter
    sends it, pressed when the text is still there ``SUBMIT_CHECK`` later). We first wait
    for the text to show: until then an empty box would read as "submitted", and an Enter
    that races the echo is the one that gets dropped.
    """
    # all of it in the box (a redraw, a session starting next to others, can hide the box)
    if not _wait_echo(keys, text, BOX_WAIT):
        raise _dialog_error(
            keys,
            keys.capture(),
            "The input box changed while your message was typed (a dialog opened?); it "
            "was not sent. Check the terminal.",
        )
    mark = timings.lap("echo", mark)
    keys.press("Enter")
    for _ in range(SUBMIT_RETRIES):
        if _left_box(keys, text, SUBMIT_CHECK):
            timings.lap("enter", mark)
            return
        keys.press("Enter")
    timings.lap("enter", mark)


def _left_box(keys: SessionKeys, text: str, within: float) -> bool:
    """True as soon as ``text`` is no longer in the input box (submitted), False if it still
    is after ``within`` seconds: done is known in tens of milliseconds, not a fixed pause."""
    deadline = time.monotonic() + within
    while True:
        time.sleep(SUBMIT_POLL)
        if not keys.screen.box_holds(keys.capture(), text):
            return True
        if time.monotonic() >= deadline:
            return False


def _require_input_box(keys: SessionKeys) -> None:
    keys.check("your message")
    screen = keys.capture()
    if keys.screen.input_box(screen) is None:
        raise _dialog_error(
            keys,
            screen,
            "A dialog opened in the terminal while your message was typed; it was not "
            "sent. Answer the dialog, then send the message again.",
        )


def _wait_echo(keys: SessionKeys, typed: str, timeout: float = ECHO_WAIT) -> bool:
    """Wait until the input box holds all of ``typed`` (letters and digits compared: the
    box wraps and indents); False if it does not within ``timeout``.

    All of it, in the box: the last dozen letters found anywhere on screen (as this once
    looked) are often there before the piece is read, in a message that repeats itself
    (test_relay's long one; a run of one letter) or in the conversation above the box, and
    the next piece then joined the unread one in one read: a paste (the likeliest cause of
    the 1 typing in 12 that failed on a loaded machine; tests/unit/sessions/test_pane_input.py
    reproduces it with a program that reads late)."""
    wanted = signature(typed)
    if not wanted:
        return True
    box, read_dialog = keys.screen.input_box, keys.screen.read_dialog

    def shown_or_asked(screen: str) -> bool:
        held = box(screen)
        if held is None:
            return read_dialog(screen) is not None  # a dialog took the box: stop waiting
        return _box_signature(held).startswith(wanted)

    try:
        screen = keys.tmux.wait_for(keys.pane_id, shown_or_asked, timeout)
    except TmuxError:
        try:
            held = _box_signature(box(keys.capture()))
        except TmuxError:  # the pane is gone: the caller says so
            return False
        log.warning(
            "typed text not in the box after %.0f s: it shows %d of the %d letters typed%s",
            timeout,
            len(held),
            len(wanted),
            "" if wanted.startswith(held) else ", and others",
        )
        return False
    return box(screen) is not None


def _box_signature(box: str | None) -> str:
    return signature(box) if box else ""


def clear_input(keys: SessionKeys, timeout: float = 2.0) -> None:
    """Make sure the input box is on screen and empty before typing a prompt, and that the
    agent holds no message of its own queue that the new one could overtake.

    A dialog on screen raises :class:`NoInputBox`: typed text would pick its options and
    Enter would confirm the highlighted one. Text left in the box (typed at the terminal,
    or put back by an interrupt) is cleared so it does not merge with the new prompt.
    """
    screen = _empty_box(keys, timeout)
    if _wait_queue_sent(keys, screen):
        _empty_box(keys, timeout)  # the screen changed meanwhile: a dialog may have opened


def _wait_queue_sent(keys: SessionKeys, screen: str) -> bool:
    """Wait, up to :data:`QUEUE_WAIT`, while the agent holds messages typed during its turn
    that it has not sent yet (``Screen.holds_queued``); True if it did. An Enter pressed
    between the turn's end and the queue's sending sends the box first, out of order; once the
    queue is sent, what is typed during its turn queues behind it. Past the wait the prompt
    is typed anyway: into a turn still running, it queues behind them."""
    holds = keys.screen.holds_queued
    if holds is None or not holds(screen):
        return False
    try:
        keys.tmux.wait_for(keys.pane_id, lambda s: not holds(s), QUEUE_WAIT)
    except PaneExited:
        raise
    except TmuxError:
        log.warning("the agent still holds queued messages after %.0f s; typing", QUEUE_WAIT)
    return True


def _empty_box(keys: SessionKeys, timeout: float) -> str:
    """The screen once the input box shows, emptied (see :func:`clear_input`)."""
    tmux, pane_id = keys.tmux, keys.pane_id
    input_box = keys.screen.input_box
    keys.check("your message")  # a prompt of the session open: refused at once, no wait
    try:
        screen = tmux.wait_for(pane_id, lambda s: input_box(s) is not None, timeout)
    except TmuxError:
        raise _dialog_error(
            keys,
            tmux.capture(pane_id),
            f"{keys.agent.label} is showing a dialog in the terminal (permission, question or "
            "plan); answer it first. Your message was not typed.",
        ) from None
    for _ in range(CLEAR_ROUNDS):
        if not input_box(screen):
            return screen
        keys.press("C-e", "C-u")
        if input_box(tmux.capture(pane_id)):  # an emptied line of a multi-line leftover
            keys.press("BSpace")
        time.sleep(0.05)
        screen = tmux.capture(pane_id)
    return screen


def wait_ready(
    tmux: TmuxSessions,
    pane_id: str,
    timeout: float = 30.0,
    poll: float = 0.05,
    agent: Agent | None = None,
) -> None:
    """Wait until the agent (default Claude Code) shows its empty prompt box (Claude Code's
    ``❯`` between two rules, Codex's ``›`` line above its footer).

    A dialog at start-up (folder trust for a new project, the bypass-permissions warning, an
    API key approval) is a question for the owner: once it has stayed on screen for
    :data:`DIALOG_SETTLE` seconds, stop with :class:`DialogOnScreen` (the bot offers it on
    Discord).
    """
    agent = agent or agent_for(None)
    reader = agent.screen
    deadline = time.monotonic() + timeout
    while True:
        left = max(0.1, deadline - time.monotonic())
        check = lambda s: reader.is_prompt_ready(s) or reader.read_dialog(s) is not None  # noqa: E731
        shown = tmux.wait_for(pane_id, check, left, poll)
        if reader.is_prompt_ready(shown) and not _dialog_follows(tmux, pane_id, agent, poll):
            return
        time.sleep(DIALOG_SETTLE)
        shown = tmux.capture(pane_id)
        if reader.read_dialog(shown) is not None:
            raise DialogOnScreen(
                f"{agent.label} is showing a screen that needs an answer (tmux window {pane_id}): "
                "send a message in its channel to get the screen there, or answer it in the "
                "terminal.",
                shown,
            )
        if time.monotonic() > deadline:
            raise TmuxError(f"timed out after {timeout:.0f} s; last screen:\n{shown}")


def _dialog_follows(tmux: TmuxSessions, pane_id: str, agent: Agent, poll: float) -> bool:
    """Whether a dialog takes the screen within the agent's ``startup_settle`` of its box
    showing (False at once for an agent that needs none)."""
    if agent.startup_settle <= 0:
        return False
    try:
        tmux.wait_for(
            pane_id, lambda s: agent.screen.read_dialog(s) is not None, agent.startup_settle, poll
        )
    except PaneExited:
        raise
    except TmuxError:
        return False  # the box stayed: ready
    return True
