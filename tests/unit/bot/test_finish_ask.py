"""The Finish message offered again after an ask: only once the turn has shown and ended, and
only when it left the worktree clean (real git; the session's screen as ``doing`` reads it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bridge.bot.changes import finish_ask
from bridge.bot.changes.finish_screen import Screen
from bridge.sessions import worktrees
from bridge_testkit.gitrepo import make_repo

THREAD = "1323802873070354440"


class Session:
    """A thread's session as the watch sees it: its pane, the grace after a prompt, and
    what its screen shows at each look."""

    def __init__(self, screens: list[str], awaiting: bool = True) -> None:
        self.screens, self.awaiting, self.looks = screens, awaiting, 0

    async def live_pane(self, key: str) -> str | None:
        return "%1" if self.screens else None

    def awaiting_turn(self, key: str) -> bool:
        return self.awaiting

    async def doing(self, key: str) -> str:
        self.looks += 1
        return self.screens.pop(0) if len(self.screens) > 1 else self.screens[0]


class Thread:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, content: str, **_: object) -> None:
        self.sent.append(content)


class Client:
    def __init__(self) -> None:
        self.thread = Thread()

    def get_partial_messageable(self, channel_id: int) -> Thread:
        assert channel_id == int(THREAD)
        return self.thread


@pytest.fixture(autouse=True)
def quick(monkeypatch) -> None:
    monkeypatch.setattr(finish_ask, "POLL", 0)


def offered(session: Session, worktree: dict, scratch: Path) -> list[str]:
    client = Client()

    async def menu() -> Screen:
        return Screen("🏁 **Finish this thread's work**")

    async def run() -> None:
        where = (str(scratch), ())
        finish_ask.offer_when_clean(client, session, THREAD, worktree, session.doing, menu, where)
        await asyncio.gather(*finish_ask._watches.values())

    asyncio.run(run())
    return client.thread.sent


def test_the_finish_message_comes_again_when_the_turn_leaves_the_worktree_clean(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    worktree = worktrees.add_for_thread(str(repo), "Work", THREAD)
    # Idle before the turn shows (the prompt's grace), working, a dialog, then idle.
    session = Session(["", "", "is working", "shows a dialog", "is working", ""])
    assert offered(session, worktree, tmp_path) == [
        "✅ Claude's turn ended with everything in the worktree committed. 🏁 **Finish this "
        "thread's work**"
    ]
    assert session.looks == 6  # not offered while the turn had not shown or still ran


def test_nothing_is_offered_when_work_is_left_uncommitted_or_the_session_ends(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    worktree = worktrees.add_for_thread(str(repo), "Work", THREAD)
    (Path(worktree["path"]) / "new.txt").write_text("not committed\n")
    assert offered(Session(["is working", ""]), worktree, tmp_path) == []
    (Path(worktree["path"]) / "new.txt").unlink()
    assert offered(Session([]), worktree, tmp_path) == []  # its pane is gone
    # A turn that never showed counts as ended only once the prompt's grace is over.
    assert offered(Session([""], awaiting=False), worktree, tmp_path) != []
