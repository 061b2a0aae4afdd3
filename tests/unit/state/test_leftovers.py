"""What a removed project's sessions leave behind: counted, then every file of it dropped, and
nothing of another session's (another channel, another server's schedule) touched."""

from __future__ import annotations

import os

import pytest

from bridge.state import (
    away,
    handled_messages,
    held_messages,
    leftovers,
    queued_prompts,
    review_drafts,
    runtime,
    schedules,
    session_record,
    session_state,
)

CHANNEL, THREAD, OTHER = "1323802873070354440", "1323802873070354441", "1323802873070354442"
SESSION = "0b6cf2a1-5f4e-4d1c-9a43-3f0f6a1c2b7e"


@pytest.fixture
def rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "rt")).ensure()


def everything_of(rt: runtime.Runtime, key: str, server: str = "home") -> str:
    """Every kind of state a session can have; the schedule's id."""
    queued_prompts.queue_prompt(rt, key, "typed later")
    queued_prompts.remember_steered(rt, key, "42", "typed into a turn")
    session_record.write_record(rt, key, {"session_id": SESSION, "cwd": "/old"})
    session_state.update(rt, key, server=server, project="old", wanted="stopped")
    review_drafts.save(rt, review_drafts.Draft(key))
    held_messages.hold(rt, key, "43", key, "behind a screen")
    handled_messages.save(rt, key, handled_messages.Handled(last=int(key)))  # the catch-up's place
    away.save(rt, "limit", key, {"state": "waiting", "server": server})
    away.save(rt, "budget", key, {"server": server})
    away.save(rt, "warned", key, {})
    away.save(rt, "raise", SESSION if key != OTHER else "other-session", {"usd": 5})
    entry = schedules.Schedule(
        schedules.new_id(),
        server,
        key,
        "every morning",
        {"kind": "daily", "time": "09:00"},
        next_run=1.0,
    )
    schedules.save(rt, entry)
    return entry.id


def files(rt: runtime.Runtime) -> set[str]:
    found = set()
    for root in (rt.root, rt.state_root):
        for folder, _, names in os.walk(root):
            found |= {os.path.relpath(os.path.join(folder, n), root) for n in names}
    return found


def test_a_survey_counts_and_a_drop_removes_all_of_it_and_nothing_else(rt) -> None:
    before = files(rt)
    mine = [everything_of(rt, CHANNEL), everything_of(rt, THREAD)]
    with_mine = files(rt)
    kept = everything_of(rt, OTHER)
    elsewhere = schedules.Schedule(
        schedules.new_id(),
        "work",
        CHANNEL,
        "another server's",
        {"kind": "daily", "time": "09:00"},
        next_run=1.0,
    )
    schedules.save(rt, elsewhere)
    theirs = files(rt) - with_mine

    found = leftovers.survey(rt, "home", [CHANNEL, THREAD])
    assert found.queued_count == 2 and sorted(found.queued) == sorted([CHANNEL, THREAD])
    assert sorted(e.id for e in found.schedules) == sorted(mine)
    assert sorted(found.conversations) == sorted([CHANNEL, THREAD])
    assert (found.drafts, found.held, len(found.waits)) == (2, 2, 2)
    assert files(rt) == with_mine | theirs  # a survey changes nothing

    dropped = leftovers.drop(rt, "home", [CHANNEL, THREAD])
    assert dropped.queued_count == 2 and len(dropped.schedules) == 2
    assert files(rt) - before == theirs  # every file of theirs gone, the others' all there
    for key in (CHANNEL, THREAD):
        assert queued_prompts.entries(rt, key) == []
        assert queued_prompts.steered_text(rt, key, "42") is None
        assert session_state.resumable_session(rt, key, "/old") is None
        assert session_state.load(rt, key) is None
    assert schedules.load(rt, kept) is not None and schedules.load(rt, elsewhere.id) is not None
    assert leftovers.survey(rt, "home", [CHANNEL, THREAD]) == leftovers.Leftovers()


def test_nothing_to_drop_is_no_error(rt) -> None:
    assert leftovers.drop(rt, "home", [CHANNEL]) == leftovers.Leftovers()
