"""Draft reviews on disk: private, atomic, typed; a wrong-shaped file reads as no draft."""

from __future__ import annotations

import json
import os
import stat

import pytest

from bridge.state import review_drafts, runtime
from bridge.state.review_drafts import Comment, Draft

KEY = "123456789012345678"


def test_a_draft_is_kept_privately_and_read_back_whole(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    assert review_drafts.load(rt, KEY) is None
    comment = Comment(
        review_drafts.new_comment_id([]),
        "app.py",
        3,
        4,
        "use logging",
        "a" * 40,
        ["print(3)", "print(4)"],
        "42",
    )
    draft = Draft(KEY, [comment], message_id="987654321098765432")
    review_drafts.save(rt, draft)
    path = tmp_path / "state" / "state" / "reviews" / f"{KEY}.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert review_drafts.load(rt, KEY) == draft
    raw = json.loads(path.read_text())
    raw["from_a_newer_bridge"] = {"x": 1}
    raw["comments"][0]["colour"] = "red"
    path.write_text(json.dumps(raw))
    again = review_drafts.load(rt, KEY)
    review_drafts.save(rt, again)
    assert json.loads(path.read_text()) == raw  # unknown keys kept
    review_drafts.delete(rt, KEY)
    review_drafts.delete(rt, KEY)
    assert review_drafts.load(rt, KEY) is None


@pytest.mark.parametrize(
    "broken",
    [
        [],
        {"key": "../x"},
        {"key": "999"},  # another session's draft under this name
        {"key": KEY, "comments": {}},
        {
            "key": KEY,
            "comments": [
                {"id": "abcdef", "path": "a", "start": 0, "end": 1, "text": "t", "tree": "f"}
            ],
        },
        {
            "key": KEY,
            "comments": [
                {"id": "abcdef", "path": "a", "start": 5, "end": 4, "text": "t", "tree": "f"}
            ],
        },
        {
            "key": KEY,
            "comments": [
                {"id": "ABC", "path": "a", "start": 1, "end": 1, "text": "t", "tree": "f"}
            ],
        },
        {
            "key": KEY,
            "comments": [
                {"id": "abcdef", "path": "a", "start": True, "end": 1, "text": "t", "tree": "f"}
            ],
        },
        {"key": KEY, "message_id": 5},
        {"key": KEY, "unsent": {"path": "a"}},
    ],
)
def test_a_wrong_shaped_file_reads_as_no_draft(tmp_path, broken) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    folder = tmp_path / "state" / "state" / "reviews"
    folder.mkdir(mode=0o700)
    (folder / f"{KEY}.json").write_text(json.dumps(broken))
    assert review_drafts.load(rt, KEY) is None


def test_keys_are_channel_ids_and_comment_ids_are_unique(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    with pytest.raises(ValueError):
        review_drafts.load(rt, "../x")
    taken = [Comment(review_drafts.new_comment_id([]), "a", 1, 1, "t", "f") for _ in range(3)]
    fresh = review_drafts.new_comment_id(taken)
    assert review_drafts.is_valid_id(fresh) and fresh not in {c.id for c in taken}
