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
    project = str(tmp_path)
    record = {"session_id": "abc", "transcript_path": str(transcript), "project_path": project}
    private_files.write_atomic(session_record.record_path(rt, KEY), json.dumps(record).encode())
    assert session_state.resumable_session(rt, KEY, project) is None  # nothing said: not resumed
    transcript.write_text("{}\n")
    assert session_state.resumable_session(rt, KEY, project) == "abc"


def test_a_conversation_is_resumed_only_in_the_project_it_was_recorded_for(rt, tmp_path) -> None:
    """The channel mapped again to another folder: ``--resume`` would carry the old project's
    conversation there (Claude Code 2.1.332 resumes across folders), so it is not offered."""
    old, new = tmp_path / "old", tmp_path / "new"
    (old / "sub").mkdir(parents=True)
    new.mkdir()
    (tmp_path / "link").symlink_to(old)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n")

    def recorded(**fields: str) -> None:
        record = {"session_id": "abc", "transcript_path": str(transcript), **fields}
        private_files.write_atomic(session_record.record_path(rt, KEY), json.dumps(record).encode())

    recorded(project_path=str(old), cwd=str(old))
    assert session_state.resumable_session(rt, KEY, str(new)) is None
    assert session_state.resumable_session(rt, KEY, str(old)) == "abc"
    assert session_state.resumable_session(rt, KEY, str(tmp_path / "link")) == "abc"  # same dir
    # A record without the project's path (an older one, an adoption's) is judged by its cwd:
    # the project's directory or one inside it, never a neighbour or a parent.
    recorded(cwd=str(old / "sub"))
    assert session_state.resumable_session(rt, KEY, str(old)) == "abc"
    assert session_state.resumable_session(rt, KEY, str(new)) is None
    assert session_state.resumable_session(rt, KEY, str(old / "sub" / "deeper")) is None
    recorded(cwd=str(tmp_path / "old-other"))
    assert session_state.resumable_session(rt, KEY, str(old)) is None  # a prefix, not inside
    recorded()
    assert session_state.resumable_session(rt, KEY, str(old)) is None  # no folder: never
