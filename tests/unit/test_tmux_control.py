"""bridge/tmux_control.py against a real tmux server on a private socket."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

from bridge.tmux import TmuxError, TmuxSessions

SCREEN = "héllo ✅ wörld\n%end 1 2 0\nlast line"


@pytest.fixture
def socket() -> Iterator[str]:
    name = f"dbctl-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)


def start(socket: str) -> None:
    script = f"printf '%s\\n' '{SCREEN}'; cat"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "s", "-x", "80", "-y", "10",
                    "sh", "-c", script], check=True)  # fmt: skip


def test_control_mode_reads_like_a_process_and_falls_back(socket: str) -> None:
    control = TmuxSessions("s", socket, control=True)
    plain = TmuxSessions("s", socket)
    try:
        assert control.panes() == []  # no server yet: asked as a process, no connection
        start(socket)
        time.sleep(1.1)  # the connection is tried again after a pause
        pane = plain.server.cmd("display-message", "-p", "-t", "s", "#{pane_id}").stdout[0]
        deadline = time.monotonic() + 30
        while "last line" not in plain.capture(pane):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert control._control is not None
        deadline = time.monotonic() + 15  # the connection is retried after a pause: until it
        while control._control._proc is None:  # is up, captures go to a process
            control.capture(pane)
            assert time.monotonic() < deadline, "the control connection never came up"
            time.sleep(0.1)
        assert control.capture(pane) == plain.capture(pane)  # "%end 1 2 0" on screen is text
        assert control._control.takes(("capture-pane", "-p", "-t", pane))
        assert not control._control.takes(("send-keys", "-t", pane, "-l", "--", "x"))
        assert not control._control.takes(("display-message", "-p", "it's"))
        control.type_literal(pane, "typed as a process")  # user text never goes -C
        control.press(pane, "Enter")  # key names do
        control.wait_for(pane, lambda s: s.count("typed as a process") == 2, 30)  # cat echoes
        with pytest.raises(TmuxError):
            control.capture("%999")  # an error block is an error
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=True)
        assert control.panes() == []  # connection gone: a process answers
        assert control.pane_dead(pane)
    finally:
        control.close()


def test_the_connection_comes_up_at_once_whichever_block_tmux_sends_first(socket: str) -> None:
    """tmux sends the attach's own block and the reply to our first command in either order;
    taking one for the other left the connection waiting 10 s for a reply that had come (with
    every worker queued behind it: the stall once seen with 20 sessions)."""
    start(socket)
    for _ in range(10):
        control = TmuxSessions("s", socket, control=True)
        try:
            started = time.monotonic()
            assert "last line" in control.capture("s")  # the first command connects
            assert control._control is not None and control._control._proc is not None
            assert time.monotonic() - started < 3
        finally:
            control.close()
