"""The pane controls the slash commands use, against a real tmux pane on a private socket
(a plain ``cat -v``: what reaches the pane is echoed back as visible text)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.sessions import pane_ops
from bridge.tmux import TmuxSessions

CHANNEL = "100000000000000009"


@pytest.fixture
def pane(tmp_path) -> Iterator[tuple[TmuxSessions, str]]:
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    tmux = TmuxSessions("unit", socket)
    info = tmux.start(CHANNEL, "ops", str(tmp_path), ["cat", "-v"], {})
    yield tmux, info.pane_id
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


def test_send_keys_presses_key_names_and_types_other_words_as_text(pane) -> None:
    tmux, pane_id = pane
    sent = pane_ops.send_keys(tmux, pane_id, "ab ESC c\x1b[2Jd Enter")
    assert sent == ["'ab'", "Escape", "'cd'", "Enter"]  # the escape sequence never reaches it
    screen = tmux.wait_for(pane_id, lambda s: s.count("ab^[cd") == 2, 5.0)
    assert "[2J" not in screen  # echoed by the terminal, then printed by cat -v


def test_peek_collapses_blank_runs_and_counts_lines_that_say_something(pane) -> None:
    tmux, pane_id = pane
    pane_ops.send_keys(tmux, pane_id, "one Enter Enter Enter Enter two Enter")
    tmux.wait_for(pane_id, lambda s: s.count("two") == 2, 5.0)
    assert pane_ops.peek(tmux, pane_id) == "one\none\n\ntwo\ntwo"
    assert pane_ops.peek(tmux, pane_id, 2) == "two\ntwo"


def test_interrupt_sends_escape_and_leaves_a_pane_without_an_input_box_alone(pane) -> None:
    tmux, pane_id = pane
    pane_ops.interrupt(tmux, pane_id)
    tmux.press(pane_id, "Enter")
    screen = tmux.wait_for(pane_id, lambda s: s.count("^[") == 2, 5.0)
    assert screen.strip().splitlines() == ["^[", "^["]  # no C-e C-u: no Claude input box here


def test_glance_reads_no_mode_and_not_busy_off_a_plain_pane(pane) -> None:
    tmux, pane_id = pane
    assert pane_ops.glance(tmux, pane_id) == pane_ops.Glance(busy=False, mode=None)
