"""The bot's status messages (bridge/bot/turn/progress.py) with Discord replaced by a stub: which
message each turn gets, that every one of them ends closed, and the ⏹ button."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from bridge.bot.turn import progress as reporter_module
from bridge.bot.turn.progress import ProgressReporter
from bridge.sessions import pane_ops
from bridge.sessions.key_gate import SessionKeys
from bridge.state import runtime
from bridge.tmux import TmuxSessions

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


def test_the_last_text_of_an_ended_turn_read_late_starts_no_turn(tmp_path, monkeypatch):
    """Claude Code does not wait for the MessageDisplay hook: its record of the turn's last
    text can follow the Stop hook's "done", also for a bot that started mid-turn and saw no
    turn open. That text is the ended prompt's: no turn starts; the next prompt's does."""

    async def scenario() -> None:
        progress, _bot = reporter(tmp_path, monkeypatch)
        for first in ("turn", None):  # a turn seen from its start; a bot started mid-turn
            key = f"{CHANNEL}{first}"
            channel = progress.channels.setdefault(key, reporter_module._Channel(key, 0))
            now = time.time()
            if first:
                progress._apply(channel, event(first, now - 30, prompt="p1"))
            progress._apply(channel, event("done", now - 1, prompt="p1"))
            progress._apply(channel, event("text", now, prompt="p1", delta="the reply"))
            assert progress.turn_running(key) is not True
            progress._apply(channel, event("text", now, prompt="p2", delta="another"))
            assert progress.turn_running(key) is True
        await settle(progress)

    monkeypatch.setattr(ProgressReporter, "_changed", lambda self, channel: None)
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
    """The click's acknowledgement (deferred), its edit of the message and its follow-ups."""

    def __init__(self) -> None:
        self.deferred = False
        self.edits: list[dict] = []
        self.sent: list[str] = []

    async def defer(self) -> None:
        self.deferred = True

    async def edit_original_response(self, **fields: object) -> None:
        assert self.deferred
        self.edits.append(fields)

    async def send(self, text: str, ephemeral: bool = False) -> None:
        assert self.deferred and ephemeral
        self.sent.append(text)


BOX = ("────", "❯ ", "────", "  ⏵⏵ accept edits on")  # Claude Code's input box, drawn
DIALOG = ("Do you want to create x.txt?", "❯ 1. Yes", "  2. Yes, allow all edits", "  3. No")


@pytest.fixture
def tmux_pane(tmp_path):
    """A real tmux pane (private socket) that draws ``lines`` like Claude Code's screen, then
    echoes every key it gets visibly (``cat -v``: Escape shows as ``^[``)."""
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    tmux = TmuxSessions("unit", socket)

    def start(lines: tuple[str, ...]) -> str:
        drawing = "printf '%s\\n' " + " ".join(f"'{line}'" for line in lines) + "; exec cat -v"
        pane = tmux.start(CHANNEL, "ui", str(tmp_path), ["sh", "-c", drawing], {}).pane_id
        tmux.wait_for(pane, lambda screen: lines[-1].strip() in screen, 5.0)
        return pane

    yield tmux, start
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


def click_interrupt(progress, tmux, pane: str, message_id: int) -> FakeResponse:
    async def live_pane(key: str) -> str:
        return pane

    response = FakeResponse()
    interaction = SimpleNamespace(
        user=SimpleNamespace(id=int(OWNER)),
        message=SimpleNamespace(id=message_id),
        response=response,
        followup=response,
        edit_original_response=response.edit_original_response,
        client=SimpleNamespace(
            server=SimpleNamespace(may_act=lambda user: str(user) == OWNER),
            sessions=SimpleNamespace(
                live_pane=live_pane,
                keys=lambda key, pane_id: SessionKeys(tmux, pane_id, progress.runtime, key),
            ),
        ),
    )
    asyncio.get_running_loop().create_task(progress.interrupt(interaction, CHANNEL))
    return response


def keys_seen(tmux, pane: str) -> str:
    """What reached the pane after its drawing: a marker typed last shows everything did."""
    tmux.type_literal(pane, "END")
    screen = tmux.wait_for(pane, lambda s: "END" in s, 5.0)
    return screen.split(DIALOG[-1] if DIALOG[-1] in screen else BOX[-1])[-1].strip()


def test_interrupt_from_an_older_status_message_still_closes_the_current_one(
    tmp_path, monkeypatch, tmux_pane
):
    """⏹ on a status message that is not the turn's current one (posted before a bot
    restart): the turn is interrupted, and its current status message must say so too."""
    monkeypatch.setattr(pane_ops, "INTERRUPT_SETTLE", 0.05)
    tmux, start = tmux_pane
    pane = start(BOX)

    async def scenario() -> None:
        progress, bot = reporter(tmp_path, monkeypatch)
        channel = progress.channels.setdefault(CHANNEL, reporter_module._Channel(CHANNEL, 0))
        progress._apply(channel, event("turn", time.time() - 30))
        await settle(progress)
        current = bot.messages[0]
        response = click_interrupt(progress, tmux, pane, 999)  # an older status message
        await asyncio.to_thread(tmux.wait_for, pane, lambda s: "^[" in s, 5.0)
        await settle(progress)
        assert response.edits and response.edits[0]["content"].startswith("⏹ Interrupted")
        assert current.contents[-1].startswith("⏹ Interrupted"), current.contents
        assert current.views[-1] is None
        assert await asyncio.to_thread(keys_seen, tmux, pane) == "^[END"  # Escape, once

    asyncio.run(scenario())


def test_interrupt_refuses_while_a_dialog_replaces_the_input_box(tmp_path, monkeypatch, tmux_pane):
    """In a permission dialog Escape answers "No": ⏹ sends nothing, says why, and the turn's
    status message stays open."""
    tmux, start = tmux_pane
    pane = start(DIALOG)

    async def scenario() -> None:
        progress, bot = reporter(tmp_path, monkeypatch)
        channel = progress.channels.setdefault(CHANNEL, reporter_module._Channel(CHANNEL, 0))
        progress._apply(channel, event("turn", time.time() - 30))
        await settle(progress)
        response = click_interrupt(progress, tmux, pane, bot.messages[0].id)
        for _ in range(200):
            await asyncio.sleep(0.01)
            if response.sent:
                break
        await settle(progress)
        (refusal,) = response.sent
        assert refusal.startswith("⚠️") and "dialog" in refusal and "Escape" in refusal
        assert response.edits == [] and channel.status.turn.outcome == ""
        assert bot.messages[0].views[-1] is not None  # ⏹ still offered
        assert await asyncio.to_thread(keys_seen, tmux, pane) == "END"  # no Escape reached it

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


CHANGES = {"summary": "📝 2 files changed, +3 −1", "old": "a" * 40, "new": "b" * 40}


def test_a_short_turn_whose_changes_the_reply_did_not_carry_gets_them_posted(tmp_path, monkeypatch):
    """No status message yet (a short turn) and the Stop hook left the summary to the status
    (the turn looked long to it, or there was no reply): the bot posts the closed status
    with the summary and the Diff button. With the summary on the reply, nothing more."""

    async def scenario() -> None:
        progress, bot = reporter(tmp_path, monkeypatch)
        channel = progress.channels.setdefault(CHANNEL, reporter_module._Channel(CHANNEL, 0))
        now = time.time()
        progress._apply(channel, event("turn", now, cost0=0.5))
        progress._apply(channel, event("done", now + 0.5, changes={**CHANGES, "on_reply": True}))
        await settle(progress)
        assert bot.messages == []
        progress._apply(channel, event("turn", now + 1, cost0=0.5))
        progress._apply(channel, event("done", now + 1.5, changes={**CHANGES, "on_reply": False}))
        await settle(progress)
        (posted,) = bot.messages
        assert posted.contents[-1] == "✅ Done in 0 s · 0 tools\n📝 2 files changed, +3 −1"
        (button,) = posted.views[-1].children
        assert button.custom_id == f"db:diff:{CHANNEL}:{'a' * 20}:{'b' * 20}"

    asyncio.run(scenario())


def test_the_turns_cost_follows_once_the_statusline_refreshed(tmp_path, monkeypatch):
    async def scenario() -> None:
        progress, bot = reporter(tmp_path, monkeypatch)
        channel = progress.channels.setdefault(CHANNEL, reporter_module._Channel(CHANNEL, 0))
        now = time.time()
        progress._apply(channel, event("turn", now - 30, cost0=0.40))
        progress._apply(channel, event("tool", now - 29, name="Bash", summary="make"))
        await settle(progress)
        progress._apply(channel, event("done", now))
        await settle(progress)
        assert bot.messages[0].contents[-1] == "✅ Done in 30 s · 1 tool"
        from bridge.state.status_cache import write_status

        write_status(progress.runtime, "s", {"cost_usd": 0.52})  # Claude Code's refresh
        for _ in range(40):
            await asyncio.sleep(0.05)
            if bot.messages[0].contents[-1].endswith("$0.12"):
                break
        assert bot.messages[0].contents[-1] == "✅ Done in 30 s · 1 tool · $0.12"

    asyncio.run(scenario())
