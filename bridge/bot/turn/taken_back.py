"""Turns no Stop will end. A session stopped or crashed mid-turn; and a prompt taken back: an
Escape pressed before Claude Code recorded the prompt (while the prompt's hooks ran) puts it
back into the input box, and no Stop or interrupt record follows. Either way the status would
say "Working" for ever."""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING

from bridge.claude import transcript
from bridge.claude.screen import input_box, is_busy
from bridge.tmux import TmuxError

if TYPE_CHECKING:
    from bridge.discord.render.turn_status import TurnProgress
    from bridge.sessions.manager import SessionManager
    from bridge.tmux import TmuxSessions

_idle_once: weakref.WeakSet[TurnProgress] = weakref.WeakSet()  # seen taken back once


async def silent_end(
    sessions: SessionManager, key: str, turn: TurnProgress, offset: int | None
) -> str | None:
    """How ``key``'s running turn ended without a word: "ended" (its session is gone),
    "interrupted" (its prompt was taken back, seen at two checks in a row), or None."""
    pane = await sessions.live_pane(key)
    if pane is None:
        return "ended"
    if not await prompt_taken_back(sessions.tmux, pane, turn.transcript, offset):
        _idle_once.discard(turn)
        return None
    if turn in _idle_once:  # twice in a row, a pane check apart: no passing moment
        return "interrupted"
    _idle_once.add(turn)
    return None


async def prompt_taken_back(
    tmux: TmuxSessions, pane: str, path: str | None, offset: int | None
) -> bool:
    """The pane is idle at its input box and the turn's transcript (written from ``offset``
    on) has no prompt of it. The screen is read first: a prompt recorded before it went idle
    is then in the transcript already."""
    if path is None or offset is None:
        return False
    try:
        screen = await asyncio.to_thread(tmux.capture, pane)
    except TmuxError:
        return False
    if is_busy(screen) or input_box(screen) is None:
        return False  # working, or a dialog is up
    return not await asyncio.to_thread(transcript.conversation_since, path, offset)
