"""A usage limit an agent shows on its screen only (Codex: no hook fires for it, no Stop).

The progress reporter's pane check (every few seconds, for each running turn) reads the
session's screen with its agent's ``Screen.usage_limit``; the same notice seen at two checks
in a row (no passing moment: a prompt just typed may not be echoed yet) ends the turn as
Claude Code's StopFailure ``rate_limit`` does: the wait is noted in ``away/`` (the away watch
posts "⏸ Usage limit" and types the continue prompt at the reset) and the status message
closes "⏸ Stopped at a usage limit".
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import TYPE_CHECKING

from bridge.handlers.away import note_limit
from bridge.tmux import TmuxError

if TYPE_CHECKING:
    from bridge.discord.render.turn_status import TurnProgress
    from bridge.sessions.manager import SessionManager
    from bridge.state.runtime import Runtime

_seen_once: weakref.WeakKeyDictionary[TurnProgress, str] = weakref.WeakKeyDictionary()
WINDOW = "codex"  # Codex names no window (5-hour, weekly) in its notice


async def limit_seen(sessions: SessionManager, key: str, turn: TurnProgress) -> str | None:
    """The usage-limit notice that ended ``key``'s running turn, once seen at two checks in
    a row; None otherwise (none, or only once so far)."""
    read = sessions.agent_of(key).screen.usage_limit
    if read is None:  # its hooks say it (Claude Code's StopFailure)
        return None
    pane = await sessions.live_pane(key)
    said = None
    if pane is not None:
        try:
            said = read(await asyncio.to_thread(sessions.tmux.capture, pane))
        except TmuxError:
            said = None
    if said is None:
        _seen_once.pop(turn, None)
        return None
    if _seen_once.get(turn) != said:
        _seen_once[turn] = said
        return None
    return said


async def ended_at_limit(
    sessions: SessionManager, rt: Runtime, server: str, key: str, turn: TurnProgress
) -> bool:
    """Whether ``key``'s running ``turn`` ended at a usage limit on its screen; if so it is
    closed, the wait noted first (the queue, told of the turn's end, must see it held)."""
    said = await limit_seen(sessions, key, turn)
    if said is None or turn.outcome:
        return False
    await asyncio.to_thread(_note, sessions, rt, server, key, turn, said)
    turn.error = "rate_limit"  # as StopFailure's: the status says "a usage limit"
    turn.finish("failed", time.time())
    return True


def _note(
    sessions: SessionManager, rt: Runtime, server: str, key: str, turn: TurnProgress, said: str
) -> None:
    """The wait, as the StopFailure hook notes Claude Code's: its reset read from the notice
    (None when it gives none: polled, as an unknown reset is)."""
    reset = sessions.agent_of(key).screen.limit_reset
    resets_at = reset(said, time.time()) if reset is not None else None
    note_limit(rt, server, key, turn.session, said, (resets_at, WINDOW, False))
