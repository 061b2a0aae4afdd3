"""The bot's status messages (bridge/bot/progress.py) with Discord replaced by a stub: which
message each turn gets, that every one of them ends closed, and the ⏹ button."""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace

from bridge.bot import progress as reporter_module
from bridge.bot.progress import ProgressReporter
from bridge.state import runtime

CHANNEL = "100000000000000003"
OWNER = "100000000000000001"


class FakeMessage:
    def __init__(self, number: int, content: str, view: object) -> None:
        self.id = number
        self.contents = [content]
        self.views = [view]

    async def edit(self, content: str, view: object = None) -> None:
        self.contents.append(content)
        self.views.append(view)


class FakeBot:
    def __init__(self) -> None:
        self.messages: list[FakeMessage] = []

    def get_partial_messageable(self, channel_id: int) -> FakeBot:
        assert str(channel_id) == CHANNEL
        return self

    async def send(self, content: str, view: object = None) -> FakeMessage:
        self.messages.append(FakeMessage(len(self.messages) + 1, content, view))
        return self.messages[-1]


def event(kind: str, t: float, **fields: object) -> dict:
    return {"kind": kind, "t": t, "server": "main", "session": "s", **fields}


def reporter(tmp_path, monkeypatch) -> tuple[ProgressReporter, FakeBot]:
    monkeypatch.setattr(reporter_module, "MIN_EDIT_INTERVAL", 0.01)
    bot = FakeBot()
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    return ProgressReporter(bot, "main", rt), bot  # type: ignore[arg-type]


async def settle(progress: ProgressReporter) -> None:
    for _ in range(50):
        await asyncio.sleep(0.01)
        if asyncio.all_tasks() == {asyncio.current_task()}:  # every writer has finished
            return


def test_a_turn_that_ends_as_the_next_begins_still_gets_its_status_closed(tmp_path, monkeypatch):
    """Stop and the next prompt read in one batch (or within 1.5 s): the first turn's
    status message must still end as done, not stay "Working" with a live button."""

    async def scenario() -> None:
        progress, bot = reporter(tmp_path, monkeypatch)
        channel = progress.channels.setdefault(CHANNEL, reporter_module._Channel(CHANNEL, 0))
        now = time.time()
        progress._apply(channel, event("turn", now - 30))
        progress._apply(channel, event("tool", now - 29, name="Bash", summary="npm test"))
        await settle(progress)
        assert len(bot.messages) == 1 and bot.messages[0].contents[-1].startswith("⏳")
        progress._apply(channel, event("done", now - 1))
        progress._apply(channel, event("turn", now))  # the next prompt, in the same batch
        progress._apply(channel, event("tool", now, name="Bash", summary="make"))
        await settle(progress)
        first = bot.messages[0]
        assert first.contents[-1].startswith("✅ Done"), first.contents
        assert first.views[-1] is None

    asyncio.run(scenario())


def test_an_old_interrupt_in_the_transcript_does_not_end_a_turn_first_seen_by_its_text(
    tmp_path, monkeypatch
):
    """A turn first seen through MessageDisplay (no transcript path yet) must only look at
    the transcript from when its path became known, not at the session's whole history."""

    async def scenario() -> None:
        progress, _bot = reporter(tmp_path, monkeypatch)
        transcript = tmp_path / "t.jsonl"
        old = {"type": "user", "message": {"content": "[Request interrupted by user]"}}
        transcript.write_text(json.dumps(old) + "\n")
        channel = progress.channels.setdefault(CHANNEL, reporter_module._Channel(CHANNEL, 0))
        now = time.time()
        progress._apply(channel, event("text", now, message_id="m", delta="Looking", final=False))
        progress._apply(channel, event("tool", now, name="Read", transcript=str(transcript)))
        progress._check_active_turns()
        assert channel.turn is not None and channel.turn.outcome == ""
        with open(transcript, "a") as handle:
            handle.write(json.dumps(old) + "\n")  # a new interrupt, during this turn
        progress._check_active_turns()
        assert channel.turn.outcome == "interrupted"
        await settle(progress)

    asyncio.run(scenario())


class FakeResponse:
    def __init__(self) -> None:
        self.edits: list[dict] = []
        self.sent: list[str] = []

    async def edit_message(self, **fields: object) -> None:
        self.edits.append(fields)

    async def send_message(self, text: str, ephemeral: bool = False) -> None:
        self.sent.append(text)


def test_interrupt_from_an_older_status_message_still_closes_the_current_one(tmp_path, monkeypatch):
    """⏹ on a status message that is not the turn's current one (posted before a bot
    restart): the turn is interrupted, and its current status message must say so too."""

    async def scenario() -> None:
        progress, bot = reporter(tmp_path, monkeypatch)
        interrupted: list[str] = []

        async def live_pane(key: str) -> str:
            return "%1"

        async def interrupt(pane: str) -> None:
            interrupted.append(pane)

        channel = progress.channels.setdefault(CHANNEL, reporter_module._Channel(CHANNEL, 0))
        now = time.time()
        progress._apply(channel, event("turn", now - 30))
        await settle(progress)
        current = bot.messages[0]
        response = FakeResponse()
        interaction = SimpleNamespace(
            user=SimpleNamespace(id=int(OWNER)),
            message=SimpleNamespace(id=999),  # an older status message of this channel
            response=response,
            client=SimpleNamespace(
                server=SimpleNamespace(may_act=lambda user: str(user) == OWNER),
                sessions=SimpleNamespace(live_pane=live_pane, interrupt=interrupt),
            ),
        )
        await progress.interrupt(interaction, CHANNEL)  # type: ignore[arg-type]
        await settle(progress)
        assert interrupted == ["%1"]
        assert response.edits and response.edits[0]["content"].startswith("⏹ Interrupted")
        assert current.contents[-1].startswith("⏹ Interrupted"), current.contents
        assert current.views[-1] is None

    asyncio.run(scenario())


def test_a_short_turn_ended_by_an_api_error_still_says_so(tmp_path, monkeypatch) -> None:
    """No reply follows an API error: even a turn too short for a status message gets one."""

    async def scenario() -> None:
        progress, bot = reporter(tmp_path, monkeypatch)
        channel = progress.channels.setdefault(CHANNEL, reporter_module._Channel(CHANNEL, 0))
        now = time.time()
        progress._apply(channel, event("turn", now))
        progress._apply(channel, event("failed", now + 0.5, error="overloaded"))
        await settle(progress)
        assert [m.contents for m in bot.messages] == [
            ["⚠️ Stopped by an API error (overloaded) after 0 s · 0 tools"]
        ]
        assert bot.messages[0].views == [None]

    asyncio.run(scenario())
