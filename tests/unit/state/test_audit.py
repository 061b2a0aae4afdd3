"""``audit/audit.jsonl``: one escaped line per entry, private, never through a link, rotated."""

from __future__ import annotations

import json
import os

from bridge.state import audit
from bridge.state.runtime import Runtime


def test_an_entry_is_one_line_whatever_its_text_holds(tmp_path) -> None:
    rt = Runtime(str(tmp_path))
    forged = 'x"}\n{"kind": "decision", "user": "666"}\u2028\r'
    assert audit.record(rt, "message", user="1", text=forged, subject="a" * 1000)
    with open(audit.path(rt), "rb") as handle:
        lines = handle.read().splitlines()
    assert len(lines) == 1 and lines[0].isascii()
    entry = json.loads(lines[0])
    assert entry["text"] == forged and len(entry["subject"]) == audit.MAX_TEXT
    assert os.stat(audit.path(rt)).st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(audit.path(rt))).st_mode & 0o777 == 0o700


def test_a_planted_link_is_not_written_through(tmp_path) -> None:
    rt = Runtime(str(tmp_path))
    os.makedirs(os.path.dirname(audit.path(rt)), mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_text("")
    os.symlink(target, audit.path(rt))
    assert audit.record(rt, "command", user="1") is False
    assert target.read_text() == ""


def test_recent_filters_newest_first_across_a_rotation(tmp_path, monkeypatch) -> None:
    rt = Runtime(str(tmp_path))
    monkeypatch.setattr(audit, "MAX_BYTES", 400)
    for n in range(12):
        audit.record(rt, "command", user="1" if n % 2 else "2", session="9", command=f"c{n}")
    assert os.path.exists(audit.path(rt) + ".1")
    assert os.path.getsize(audit.path(rt)) <= 400
    mine = audit.recent(rt, limit=3, user="1")
    assert [e["command"] for e in mine] == ["c11", "c9", "c7"]
    assert audit.recent(rt, session="8") == []
