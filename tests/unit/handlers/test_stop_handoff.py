"""The Stop hook's hand-off file: what the bot accepts from ``stops/``, and who owns an event."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bridge.handlers import Found, stop_handoff
from bridge.state import runtime
from bridge_testkit import hook_input


def spooled(tmp_path: Path, env: dict, event: dict) -> str:
    rt = runtime.Runtime(str(tmp_path / "runtime"))
    return stop_handoff.spool(rt, env, json.dumps(event).encode())


def test_a_spooled_event_reads_back_with_its_env(tmp_path) -> None:
    event = hook_input("Stop", last_assistant_message="the reply")
    path = spooled(tmp_path, {"TMUX_PANE": "%3"}, event)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert stop_handoff.read_event(path) == ({"TMUX_PANE": "%3"}, json.loads(json.dumps(event)))


def test_a_file_open_to_others_or_of_another_shape_is_not_taken(tmp_path) -> None:
    path = spooled(tmp_path, {}, hook_input("Stop"))
    os.chmod(path, 0o644)  # not written by a hook of this user
    assert stop_handoff.read_event(path) is None
    for raw in (b"[]\n{}", b'{"a": 1}\n{}', b"{}\n[]", b"not json\n{}"):
        other = tmp_path / "other.json"
        other.write_bytes(raw)
        other.chmod(0o600)
        assert stop_handoff.read_event(str(other)) is None, raw


def test_whoever_renames_the_event_first_owns_it(tmp_path) -> None:
    path = spooled(tmp_path, {}, {})
    os.rename(path, path + stop_handoff.CLAIMED)  # the bot claimed it
    assert not stop_handoff.take_back(path)  # the hook must leave it to the bot
    assert os.path.exists(path + stop_handoff.CLAIMED)
    other = spooled(tmp_path, {}, {})
    assert stop_handoff.take_back(other)  # not claimed: the hook's, and gone
    assert not os.path.exists(other) and not os.path.exists(other + ".hook")


def test_with_no_bot_nothing_is_spooled(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(Found, "env", None)  # handed_over keeps what it read for the handler
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    argv = ["stop.py", "--home", str(home), "--runtime-dir", str(tmp_path / "runtime"), "-"]
    assert not stop_handoff.handed_over(b"{}", argv, {})
    assert not (tmp_path / "runtime" / stop_handoff.STOPS).exists()
