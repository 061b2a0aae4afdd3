"""The bot's per-session state file and the panel record."""

from __future__ import annotations

import json
import os

import pytest

from bridge.state import private_files, runtime, session_record, session_state

KEY = "1323802873070354440"


@pytest.fixture
def rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "rt")).ensure()


def test_update_merges_and_writes_atomically_private(rt) -> None:
    assert session_state.load(rt, KEY) is None
    session_state.update(rt, KEY, project="alpha", wanted="running")
    record = session_state.update(rt, KEY, pane_id="%3")
    assert record["project"] == "alpha" and record["pane_id"] == "%3" and record["key"] == KEY
    path = os.path.join(rt.state, f"{KEY}.json")
    with open(path) as handle:
        assert json.loads(handle.read()) == session_state.load(rt, KEY) == record
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert [r["key"] for r in session_state.all_records(rt)] == [KEY]
    session_state.remove(rt, KEY)
    assert session_state.load(rt, KEY) is None and session_state.all_records(rt) == []


def test_keys_must_be_ids(rt) -> None:
    for bad in ("../x", "panel-1", ""):
        with pytest.raises(ValueError):
            session_state.update(rt, bad, x=1)


def test_panel_record_is_separate_from_sessions(rt) -> None:
    session_state.save_panel(rt, KEY, {"message_id": "42"})
    assert session_state.load_panel(rt, KEY) == {"message_id": "42"}
    assert session_state.all_records(rt) == []
    assert session_state.load_panel(rt, "1" * 18) == {}


def test_resumable_only_with_a_transcript(rt, tmp_path) -> None:
    transcript = tmp_path / "t.jsonl"
    record = {"session_id": "abc", "transcript_path": str(transcript)}
    private_files.write_atomic(session_record.record_path(rt, KEY), json.dumps(record).encode())
    assert session_state.resumable_session(rt, KEY) is None  # nothing said yet: nothing to resume
    transcript.write_text("{}\n")
    assert session_state.resumable_session(rt, KEY) == "abc"
