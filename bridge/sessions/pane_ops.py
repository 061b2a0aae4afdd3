"""The controls a user drives a Claude Code pane with, as keys: interrupt, cycle the permission
mode, switch the model, raw keys, and reading the screen back.

Discord-free and blocking (the bot runs each in a worker thread, under the session's lock).
Keys go through tmux argv only (``bridge/tmux.py``), never a shell; what Claude Code shows is
read with ``bridge/claude/screen.py``. Typing a whole prompt is ``pane_input.py``'s job.

Every key goes through the session's key gate (``key_gate.SessionKeys``): none while a
prompt of the session is open (a hook's or a screen prompt) or a tool call's dialog may be on
its way. Keys the bridge presses on its own (Escape, Shift+Tab, the ``/model`` text) also need
Claude Code's input box on screen, read right before the key: a dialog (permission, question,
plan) replaces the box, and there Shift+Tab picks "Yes, allow all edits", Escape picks "No"
and digits pick options. The box is also shown while a turn runs, so Escape still interrupts
a busy Claude and Shift+Tab still switches its mode. Otherwise :class:`NoInputBox` says why
nothing was sent. ``/keys`` (:func:`send_keys`) is the raw path: the user names every key, and
only the gate's certain knowledge (an open prompt, a tool call just started) stops them, and
a ← into an empty input box, which opens Claude Code's agent view or Codex's agents
(:func:`opens_agent_view`, reading the session's own screen).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from bridge.agents import Screen
from bridge.claude.screen import input_box, is_busy, mode_on_screen, signature
from bridge.sessions import pane_input
from bridge.sessions.key_gate import SessionKeys
from bridge.sessions.typed_text import sanitize_prompt
from bridge.tmux import TmuxError, TmuxSessions

INTERRUPT_SETTLE = 0.5  # seconds for Claude Code to put an interrupted prompt back in the box
MODE_WAIT = 3.0  # seconds for the footer to show the next mode after one Shift+Tab
MODE_CYCLE = 6  # BTab presses tried before cycle_mode gives up (the cycle has 4–5 modes)
MODE_SETTLE = 0.15  # seconds more once the footer changed (it may redraw twice)
SWITCH_MODEL = "Switch model?"  # Claude Code's confirmation when a conversation is cached
SWITCH_YES = "1. Yes, switch to"  # its first answer
DIALOG_EDGE = "▔▔▔"  # the top edge of a dialog at the bottom of the screen (2.1.330)
DIALOG_SETTLE = 0.5  # dialogs ignore keys for ~0.3 s after they open
MODEL_WAIT = 5.0  # seconds for the model dialog, or the box, to show
QUEUED_MARK = "Queued ·"  # 2.1.332: under a message typed mid-turn, until the turn reads it
WITHDRAW_WAIT = 2.0  # seconds for ↑ to bring the queued messages into the input box
KEY_PAUSE = 0.05  # seconds after each key or piece of text of send_keys
# Key names send_keys sends as keys (tmux names); any other word is typed as text.
KEY_NAMES = {
    name.lower(): name
    for name in (
        "Enter",
        "Escape",
        "Tab",
        "BTab",
        "Up",
        "Down",
        "Left",
        "Right",
        "Space",
        "BSpace",
        "Home",
        "End",
        "PageUp",
        "PageDown",
        "C-c",
        "C-u",
        "C-d",
        "C-l",
        "C-o",
        "C-r",
        "C-t",
    )
}
KEY_ALIASES = {"esc": "Escape", "return": "Enter", "shift-tab": "BTab", "backspace": "BSpace"}


@dataclass(frozen=True)
class Glance:
    """What the pane shows right now: busy with a turn or not, and the footer's mode."""

    busy: bool
    mode: str | None


def glance(tmux: TmuxSessions, pane_id: str, agent_screen: Screen | None = None) -> Glance:
    """``agent_screen``: the session's agent's reader (None: Claude Code's)."""
    screen = tmux.capture(pane_id)
    if agent_screen is not None:
        return Glance(agent_screen.is_busy(screen), agent_screen.mode_on_screen(screen))
    return Glance(is_busy(screen), mode_on_screen(screen))


def _mode_changed_from(shown: str | None) -> Callable[[str], bool]:
    return lambda screen: mode_on_screen(screen) != shown


def interrupt(keys: SessionKeys) -> None:
    """Escape stops the turn; after an interrupted stream Claude Code puts the prompt back in
    the input box, so the line is cleared for the next message. Only while the input box is
    on screen: in a dialog Escape would answer it ("No")."""
    keys.require_input_box("the interrupt (Escape)")
    keys.press("Escape")
    time.sleep(INTERRUPT_SETTLE)
    if keys.screen.input_box(keys.capture()):
        keys.press("C-e", "C-u")


def withdraw_queued(keys: SessionKeys, text: str) -> bool:
    """Take back a message typed mid-turn that Claude Code still holds queued ("Queued ·
    ctrl+x ctrl+s to send now": the turn has not read it yet). Measured on 2.1.332: ↑ brings
    the queued messages into the input box, and a box cleared then sends nothing. True when
    the box held exactly ``text`` and is empty now; when it held more (several messages
    queued) Enter queues them again, unchanged, and False; False too when none is queued."""
    screen = keys.require_input_box("taking the message back (Up)")
    if QUEUED_MARK not in screen:  # just typed: Claude Code may not have redrawn yet
        try:
            keys.tmux.wait_for(keys.pane_id, lambda s: QUEUED_MARK in s, WITHDRAW_WAIT)
        except TmuxError:
            return False
        keys.require_input_box("taking the message back (Up)")
    keys.press("Up")
    try:
        keys.tmux.wait_for(keys.pane_id, lambda s: keys.screen.box_holds(s, text), WITHDRAW_WAIT)
    except TmuxError:
        pass
    box = keys.screen.input_box(keys.capture()) or ""
    if signature(box) != signature(text):
        if box:
            keys.press("Enter")  # back into Claude Code's queue as it was
        return False
    for _ in range(box.count("\n") + 1):  # C-u clears one line; BSpace joins the one above
        keys.press("C-e", "C-u", "BSpace")
        time.sleep(KEY_PAUSE)
    try:
        keys.tmux.wait_for(keys.pane_id, lambda s: not keys.screen.input_box(s), WITHDRAW_WAIT)
    except TmuxError:
        return False
    return True


def cycle_mode(keys: SessionKeys, wanted: str) -> str | None:
    """Shift+Tab cycles the modes: read the footer after each press until it shows ``wanted``
    (the mode Claude Code itself reports), or give up after a full cycle. Returns the mode
    shown at the end (``wanted`` on success). Every press needs the input box on screen: in
    an edit dialog Shift+Tab picks "Yes, allow all edits"."""
    tmux, pane_id = keys.tmux, keys.pane_id
    for _ in range(MODE_CYCLE):
        screen = keys.require_input_box("the mode switch (Shift+Tab)")
        shown = mode_on_screen(screen)
        if shown == wanted:
            return wanted
        keys.press("BTab")
        # One press at a time: a busy CLI that has not redrawn yet would otherwise get several
        # presses queued and cycle past the wanted mode after we read it.
        try:
            tmux.wait_for(pane_id, _mode_changed_from(shown), MODE_WAIT)
        except TmuxError:
            pass  # no change shown in time: the next round reads the footer again
        time.sleep(MODE_SETTLE)
    return mode_on_screen(tmux.capture(pane_id))


def switch_model(keys: SessionKeys, name: str) -> None:
    """Type ``/model <name>`` (only into an empty input box). Mid-conversation Claude Code
    asks "Switch model?" (the cache is lost): the command is the user's explicit answer, so
    confirm it. ``name`` must already be checked (letters, digits and ``-_.:[]/``)."""
    tmux, pane_id = keys.tmux, keys.pane_id
    keys.require_input_box("the /model command")
    pane_input.clear_input(keys)
    pane_input.type_prompt(keys, f"/model {name}")
    screen = tmux.wait_for(pane_id, lambda s: asks_switch(s) or input_box(s) == "", MODEL_WAIT)
    if asks_switch(screen):
        time.sleep(DIALOG_SETTLE)
        if asks_switch(tmux.capture(pane_id)):  # still that dialog, and no other, under "1"
            keys.press("1")
        tmux.wait_for(pane_id, lambda s: input_box(s) is not None, MODEL_WAIT)


def asks_switch(screen: str) -> bool:
    """Claude Code's "Switch model?" dialog is what the screen shows: no input box, and the
    question with its "1. Yes, switch to …" answer in the dialog at the bottom (below its
    ``▔▔▔`` top edge; 2.1.330). The same words in the conversation are not the dialog."""
    if input_box(screen) is not None:
        return False
    lines = screen.splitlines()
    edges = [i for i, line in enumerate(lines) if line.lstrip().startswith(DIALOG_EDGE)]
    dialog = "\n".join(lines[edges[-1] + 1 :] if edges else lines)
    return SWITCH_MODEL in dialog and SWITCH_YES in dialog


def parse_keys(keys: str) -> list[tuple[str, str]]:
    """``/keys`` argument → ``("key", tmux key name)`` and ``("text", literal)`` steps: a key
    name is a key; the words between key names are one piece of text, spaces kept
    (``hello there Enter`` types ``hello there``, then presses Enter)."""
    steps: list[tuple[str, str]] = []
    text = ""

    def flush() -> None:
        typed = sanitize_prompt(text)  # no control characters or escape sequences
        if typed:
            steps.append(("text", typed))

    for token in re.findall(r"\S+|\s+", keys):
        key = KEY_ALIASES.get(token.lower()) or KEY_NAMES.get(token.lower())
        if key is not None:
            flush()  # the spaces around a key name only separate it
            steps.append(("key", key))
            text = ""
        elif not token.isspace():
            text += token
        elif text:
            text += " " * len(token)  # a tab or newline would be a key of its own
    flush()
    return steps


class OpensAgentView(TmuxError):
    """``/keys`` would press ← into an empty input box."""


# Keys after which the input box may be empty: what was typed is sent, cleared or dropped.
MAY_EMPTY_BOX = ("Enter", "C-u", "C-c", "Escape")
AGENT_VIEW = (
    "← on an empty prompt opens Claude Code's agent view (2.1.332): the session moves to the "
    "background under a new id and keeps running after its window closes. Nothing was sent; "
    "type something before ←, or press it at the terminal."
)
# Codex's footer says "← for agents": measured on 0.171.0, ← there opens its "Agent command
# center" (a list of its tasks, Esc goes back) in place of the box, which the bridge cannot
# read as one.
CODEX_AGENTS = (
    "← on an empty prompt opens Codex's agent command center (0.171.0), which the bridge "
    "cannot drive. Nothing was sent; type something before ←, or press it at the terminal."
)
LEFT_OPENS = {"claude": AGENT_VIEW, "codex": CODEX_AGENTS}  # by the session's agent


def opens_agent_view(
    steps: list[tuple[str, str]], screen: str, reader: Screen | None = None
) -> bool:
    """Whether ``steps`` press ← while the input box is, or may be, empty, read with the
    session's agent ``reader`` (default Claude Code's). Bridge sessions of Claude Code run
    with the agent view off (``launch.PANE_ENV``), but a session started another way (an
    older bridge, by hand) has it. In a dialog ← picks an answer: allowed, until a key
    that may have closed it and left an empty box."""
    box = (reader.input_box if reader else input_box)(screen)
    empty = box == ""
    for kind, value in steps:
        if kind == "text":
            empty = False
        elif value in MAY_EMPTY_BOX:
            empty = True
        elif value == "Left" and empty:
            return True
    return False


def send_keys(keys: SessionKeys, names: str) -> list[str]:
    """Press the key names of ``names`` and type the text between them (:func:`parse_keys`).
    Returns what was sent, as ``/keys`` reports it; :class:`OpensAgentView` (nothing sent)
    for a ← into an empty box."""
    keys.check("/keys")  # nothing at all, rather than the first few keys
    steps = parse_keys(names)
    left = any(value == "Left" for _, value in steps)
    if left and opens_agent_view(steps, keys.capture(), keys.screen):
        raise OpensAgentView(LEFT_OPENS.get(keys.agent.name, AGENT_VIEW))
    sent = []
    for kind, value in steps:
        if kind == "key":
            keys.press(value)
            sent.append(value)
        else:
            keys.type_literal(value)
            sent.append(repr(value))
        time.sleep(KEY_PAUSE)
    return sent


def peek(tmux: TmuxSessions, pane_id: str, lines: int = 0) -> str:
    """The screen as text: runs of blank lines (the empty middle of a short conversation)
    collapse to one, so ``lines`` (0: the whole screen) counts lines that say something."""
    screen = tmux.capture(pane_id, max(0, lines - 20))
    kept: list[str] = []
    for line in screen.splitlines():
        line = line.rstrip()
        if line or (kept and kept[-1]):
            kept.append(line)
    return "\n".join(kept[-lines:] if lines else kept).strip("\n")
