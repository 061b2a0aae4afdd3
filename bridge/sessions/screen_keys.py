"""Answering a Claude Code dialog with keys, only while it is the dialog the user saw.

Discord-free and blocking (the bot runs these in a worker thread, under the session's lock).
Every function first reads the screen again (``bridge.claude.dialogs``) and does nothing
unless the dialog's fingerprint is the one on the button that was clicked: a screen that
changed meanwhile (answered at the terminal, a different dialog) is never answered blind.
Keys go through the session's key gate (``key_gate.SessionKeys``, made with
``screen_answer``): a hook's prompt of the session open, or a tool call just started, refuses
them too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bridge.agents import Screen, agent_for
from bridge.claude.dialogs import Dialog, Option, keys_for
from bridge.sessions.key_gate import SessionKeys
from bridge.sessions.pane_input import DIALOG_SETTLE
from bridge.tmux import TmuxError, TmuxSessions

KEY_PAUSE = 0.15  # seconds between arrow presses, so the ❯ has moved before the next key
TOGGLE_WAIT = 2.0  # seconds for a ticked checkbox to show
# seconds for the ❯ to reach the option after the arrows: under load Claude Code drew it
# after the one look taken 0.15 s after the last arrow, and the owner's click was refused
MOVE_WAIT = 3.0
SETTLE_TIMEOUT = 45.0  # seconds for Claude Code to show its box (or a next screen) after an answer


class ScreenChanged(Exception):
    """The dialog on screen is not the one the user answered."""


@dataclass(frozen=True)
class Outcome:
    """What the pane shows after an answer: ``ready`` (the empty input box), ``dialog`` (a
    next screen, in ``screen``), ``gone`` (Claude Code exited) or ``waiting`` (neither yet)."""

    state: str
    screen: str


def current(keys: SessionKeys, fingerprint: str) -> Dialog:
    keys.check("the answer")
    dialog = keys.screen.read_dialog(keys.capture())
    if dialog is None or dialog.fingerprint != fingerprint:
        raise ScreenChanged("the screen changed since this prompt was posted")
    return dialog


def choose(keys: SessionKeys, fingerprint: str, index: int) -> Option:
    """Pick option ``index`` of the dialog ``fingerprint``: its digit, or arrows to it, a check
    that the ❯ is on it, then Enter (which ticks a checkbox of a multi-select list). Returns
    the option."""
    dialog = current(keys, fingerprint)
    if not 0 <= index < len(dialog.options):
        raise ScreenChanged("that option is not on the screen")
    option = dialog.options[index]
    names = keys_for(dialog, index)
    if option.key is not None or names[-1] != "Enter":  # its own key, or a digit: at once
        keys.press(*names)
        return option
    for name in names[:-1]:
        keys.press(name)
        time.sleep(KEY_PAUSE)
    deadline = time.monotonic() + MOVE_WAIT
    while current(keys, fingerprint).selected != index:
        if time.monotonic() > deadline:
            raise ScreenChanged("the highlighted option is not the one chosen; Enter not pressed")
        time.sleep(0.05)
    keys.press("Enter")
    return option


def escape(keys: SessionKeys, fingerprint: str) -> None:
    current(keys, fingerprint)
    keys.press("Escape")


def settle(
    tmux: TmuxSessions,
    pane_id: str,
    fingerprint: str,
    timeout: float = SETTLE_TIMEOUT,
    reader: Screen | None = None,
) -> Outcome:
    """Wait until the dialog ``fingerprint`` has gone: to the input box, another dialog (one
    that stays for :data:`DIALOG_SETTLE` seconds), or an exited agent. ``reader``: the
    session's agent's screen (default Claude Code's)."""
    reader = reader or agent_for(None).screen
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        try:
            if tmux.pane_dead(pane_id):
                return Outcome("gone", screen)
            screen = tmux.capture(pane_id)
        except TmuxError:
            return Outcome("gone", screen)
        if reader.is_prompt_ready(screen):
            return Outcome("ready", screen)
        dialog = reader.read_dialog(screen)
        if dialog is not None and dialog.fingerprint != fingerprint:
            time.sleep(DIALOG_SETTLE)
            again = tmux.capture(pane_id)
            later = reader.read_dialog(again)
            if later is not None and later.fingerprint == dialog.fingerprint:
                return Outcome("dialog", again)
        time.sleep(0.1)
    return Outcome("waiting", screen)


def after_toggle(
    tmux: TmuxSessions,
    pane_id: str,
    fingerprint: str,
    index: int,
    old: str,
    reader: Screen | None = None,
) -> Dialog | None:
    """The dialog once the checkbox ``index`` (labelled ``old`` before) shows its new tick;
    None if the dialog went away."""
    reader = reader or agent_for(None).screen
    deadline = time.monotonic() + TOGGLE_WAIT
    while True:
        dialog = reader.read_dialog(tmux.capture(pane_id))
        if dialog is None or dialog.fingerprint != fingerprint:
            return None
        if dialog.options[index].label != old or time.monotonic() > deadline:
            return dialog
        time.sleep(0.05)
