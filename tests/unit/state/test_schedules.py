"""Scheduled prompts on disk: private, atomic, one file each; a planted link is not followed
and a wrong-shaped file is not run."""

from __future__ import annotations

import json
import os
import stat

from bridge.state import runtime, schedules
from bridge.state.schedules import Schedule

KEY = "123456789012345678"


def entry(**changes: object) -> Schedule:
    fields = {
        "id": schedules.new_id(),
        "server": "main",
        "key": KEY,
        "prompt": "run the tests",
        "rule": {"kind": "daily", "time": "09:00"},
        "next_run": 1000.0,
    }
    return Schedule(**{**fields, **changes})  # type: ignore[arg-type]


def test_an_entry_is_kept_privately_in_the_state_dir_and_read_back(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    first, later = entry(next_run=2000.0), entry(next_run=1500.0, server="other")
    paused = entry(next_run=100.0, paused=True)
    for each in (first, later, paused):
        schedules.save(rt, each)
    path = tmp_path / "state" / "schedules" / f"{first.id}.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert schedules.load(rt, first.id) == first
    assert schedules.all_entries(rt) == [later, first, paused]  # soonest first, paused last
    assert schedules.all_entries(rt, "main") == [first, paused]
    assert schedules.remove(rt, first.id) and not schedules.remove(rt, first.id)
    assert schedules.load(rt, first.id) is None


def test_a_link_or_a_wrong_shaped_file_is_not_an_entry(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    folder = tmp_path / "state" / "schedules"
    secret = tmp_path / "elsewhere.json"
    good = entry()
    secret.write_text(json.dumps({**good.__dict__, "prompt": "from a planted link"}))
    linked = schedules.new_id()
    os.symlink(secret, folder / f"{linked}.json")
    assert schedules.load(rt, linked) is None
    schedules.save(rt, entry(id=linked))  # replaces the link itself, never writes through it
    assert json.loads(secret.read_text())["prompt"] == "from a planted link"
    assert not (folder / f"{linked}.json").is_symlink()
    for bad in (
        {**good.__dict__, "key": "../../etc"},
        {**good.__dict__, "rule": {"kind": "x"}},
        {**good.__dict__, "prompt": ""},
        {"id": good.id},
        ["a list"],
        {**good.__dict__, "paused": "yes"},
    ):
        (folder / f"{good.id}.json").write_text(json.dumps(bad))
        assert schedules.load(rt, good.id) is None, bad
    assert schedules.load(rt, "../state") is None  # an id never becomes a path
    assert [e.id for e in schedules.all_entries(rt)] == [linked]
