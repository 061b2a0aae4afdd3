"""Asking Claude from the Finish message, and the Finish buttons offered again after it.

**Ask Claude to commit** and **Ask Claude to merge <base> in** type a prompt into the thread's
session (through the key gate, like any prompt). The owner then waits for that turn: when it
ends with nothing uncommitted in the worktree, the thread gets the Finish message again by
itself, below Claude's reply, instead of the owner pressing **Finish…** once more. A turn
that leaves work uncommitted, a session that ends, or a turn longer than ``WATCH_FOR`` offers
nothing (the **Finish…** button of the asking message stays). The watch is the bot's, in
memory: a bot restart drops it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import discord

from bridge.bot.changes.finish_screen import NO_MENTIONS, Screen
from bridge.sessions import worktrees

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager

log = logging.getLogger(__name__)

COMMIT_PROMPT = (
    "Please commit all the work in this worktree now: `git add` what belongs to the change "
    "(not secrets or build output) and `git commit` with a message that says what changed. "
    "Do not push, merge or switch branches."
)
# The base branch's name is the repository's (a refname may hold ``;|$()`` and backticks):
# typed only shell-quoted, as the one word of a command given whole, never inside a code span.
RESOLVE_PROMPT = (
    "Please merge the project's branch into this worktree's branch by running exactly this "
    "command (the branch's name in it is shell-quoted): git merge {quoted} — then resolve the "
    "conflicts keeping what both sides meant, check that it still works, and commit the "
    "merge. Do not push or switch branches."
)
POLL = 1.0  # seconds between two looks at the session's screen while its turn runs
WATCH_FOR = 30 * 60.0  # seconds a turn asked for is waited for
OFFERED = "✅ Claude's turn ended with everything in the worktree committed. "

_watches: dict[str, asyncio.Task] = {}  # thread → its watch (one per thread: the last ask's)


async def turn_ended(
    sessions: SessionManager,
    key: str,
    doing: Callable[[str], Awaitable[str]],
    limit: float = WATCH_FOR,
) -> bool:
    """Wait for the turn just typed into ``key`` to end: True once the session is idle
    (``doing`` says "" — no prompt, no dialog, not working) after the turn showed (on the
    screen, or ``TURN_START_GRACE`` passed); False if the session ends or ``limit`` passes."""
    deadline = time.monotonic() + limit
    seen_working = False
    while time.monotonic() < deadline:
        await asyncio.sleep(POLL)
        if await sessions.live_pane(key) is None:
            return False
        now = await doing(key)
        seen_working = seen_working or bool(now)
        if not now and (seen_working or not sessions.awaiting_turn(key)):
            return True
    return False


def offer_when_clean(
    client: discord.Client,
    sessions: SessionManager,
    key: str,
    worktree: dict,
    doing: Callable[[str], Awaitable[str]],
    menu: Callable[[], Awaitable[Screen]],
    where: tuple[str, tuple[str, ...]],
) -> None:
    """Watch the turn just asked for in thread ``key``; when it ends with the worktree clean,
    post ``menu()`` there. ``where``: the snapshots' scratch folder and the bridge's private
    paths. A watch of the thread from an earlier ask is replaced."""
    earlier = _watches.pop(key, None)
    if earlier is not None:
        earlier.cancel()
    task = asyncio.create_task(_offer(client, sessions, key, worktree, doing, menu, where))
    _watches[key] = task
    task.add_done_callback(
        lambda done: _watches.pop(key, None) if _watches.get(key) is done else None
    )


async def _offer(
    client: discord.Client,
    sessions: SessionManager,
    key: str,
    worktree: dict,
    doing: Callable[[str], Awaitable[str]],
    menu: Callable[[], Awaitable[Screen]],
    where: tuple[str, tuple[str, ...]],
) -> None:
    try:
        if not await turn_ended(sessions, key, doing):
            return
        scratch, private = where
        left = await asyncio.to_thread(worktrees.uncommitted, worktree["path"], scratch, private)
        if left:
            log.info(
                "thread %s: %d change(s) still uncommitted; Finish not offered", key, len(left)
            )
            return
        screen = await menu()
        screen.text = OFFERED + screen.text
        await client.get_partial_messageable(int(key)).send(
            screen.content(), view=screen.view(), allowed_mentions=NO_MENTIONS
        )
    except (discord.HTTPException, worktrees.WorktreeError, OSError) as err:
        log.warning("Finish not offered again in thread %s: %s", key, err)
