"""Sending a review: typed whole when Claude Code's input box can show it, else written to a
file Claude may read, with a short prompt pointing to it (measured: bench/long_prompt.py; a
text taller than the box's room pushes its top rule off the screen, where no check can read
the box and nothing more may be typed)."""

from __future__ import annotations

import os
import stat
from types import SimpleNamespace

from bridge.bot.changes import review_send
from bridge.state import runtime
from bridge.state.review_drafts import Comment, Draft

KEY = "100000000000000003"


def sessions_on(width: int, height: int) -> SimpleNamespace:
    return SimpleNamespace(tmux=SimpleNamespace(pane_size=lambda pane: (width, height)))


def draft(comments: int) -> Draft:
    return Draft(KEY, [Comment("abcdef", f"f{i}.py", 1, 1, "c", "0" * 40) for i in range(comments)])


def test_rows_count_wrapped_and_wide_lines() -> None:
    assert review_send.typed_rows("one\ntwo", 80) == 2
    assert review_send.typed_rows("x" * 200, 104) == 2  # 100 columns of text a row
    assert review_send.typed_rows("日本語" * 40, 84) == 3  # 240 columns
    assert review_send.typed_rows("a\n\nb", 80) == 3


def test_a_review_the_box_can_show_is_typed_whole(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    text = "\n".join(f"line {i}" for i in range(40))  # 40 rows: room on a 50-row pane
    assert review_send._fit(sessions_on(200, 50), rt, KEY, "%1", text, draft(2)) == (text, None)
    assert not os.listdir(rt.path("uploads"))


def test_a_taller_review_goes_to_a_file_claude_may_read(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt"), str(tmp_path / "state")).ensure()
    text = "\n".join(f"line {i}" for i in range(41))
    prompt, written = review_send._fit(sessions_on(200, 50), rt, KEY, "%1", text, draft(12))
    assert written is not None and os.path.dirname(written) == rt.path("uploads", KEY)
    with open(written) as review_file:
        assert review_file.read() == text + "\n"
    assert stat.S_IMODE(os.stat(written).st_mode) == 0o600
    assert prompt == (
        f"Review of your changes: 12 comments on 12 files, written out in {written}"
        " (too long to type here). Please read that file and address each "
        "comment."
    )
    # A smaller terminal attached to the session leaves less room: 20 rows do not fit in 24.
    short = "\n".join(f"line {i}" for i in range(20))
    assert review_send._fit(sessions_on(80, 24), rt, KEY, "%1", short, draft(1))[1] is not None
