"""``bridge/tmux.py`` against a real tmux server on a private socket: text from the config
(a project's path, its name, the tmux session's name) reaches tmux as it is written, never as a
format tmux expands (``#(cmd)`` would run a shell command, ``#{…}`` would change the path)."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from bridge.tmux import PaneExited, TmuxSessions, no_format

CHANNEL = "100000000000000009"


@pytest.fixture
def socket() -> str:
    name = f"dbunit-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)
    Path(f"/tmp/tmux-{os.getuid()}/{name}").unlink(missing_ok=True)


def test_no_format_doubles_hashes_and_keeps_a_trailing_semicolon() -> None:
    assert no_format("a#(b)#{c};") == "a##(b)##{c}\\;"
    assert no_format("plain") == "plain"


@pytest.mark.parametrize("first", [True, False], ids=["new-session", "new-window"])
def test_hash_formats_in_path_and_names_never_run_or_expand(socket, tmp_path, first) -> None:
    ran = tmp_path / "ran"
    project = tmp_path / f"p#(touch {ran}-path)#{{pane_id}};"
    project.mkdir(parents=True)  # the command's slashes make it a nested path
    session = f"s#(touch {ran}-session)" if first else "bridge"
    tmux = TmuxSessions(session, socket)
    if not first:  # the session exists: the window is added with new-window
        tmux.start("100000000000000001", "other", str(tmp_path), ["sleep", "30"], {})
    marker = tmp_path / "cwd"
    argv = ["sh", "-c", f'pwd > "{marker}"; sleep 30']
    pane = tmux.start(CHANNEL, f"w#(touch {ran}-window)", str(project), argv, {})

    deadline = time.monotonic() + 5
    while not marker.exists() or not marker.read_text():
        assert time.monotonic() < deadline, "the pane's command never ran"
        time.sleep(0.05)
    assert marker.read_text().strip() == str(project)  # started in the directory as written
    assert pane.window_name == f"w#(touch {ran}-window)"
    sessions = subprocess.run(
        ["tmux", "-L", socket, "list-sessions", "-F", "#{session_name}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert session in sessions
    time.sleep(0.3)  # a #() job runs in the background: give it the time it would take
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran")) == []


@pytest.mark.parametrize("control", [False, True], ids=["processes", "control-mode"])
def test_a_dead_pane_reports_its_exit_status_and_its_last_words(
    socket, control, monkeypatch
) -> None:
    """The words a command printed before it exited are found even when tmux's "Pane is
    dead" line scrolled them off the screen (tmux 3.3a: all of a short echo), asked as soon
    as the pane is seen dead; with its status when tmux learns one (it does not for some
    deaths, see ``TmuxSessions._exited``), never a wrong one."""
    monkeypatch.setattr("bridge.tmux.DEAD_CHECK", 0.0)  # ask at once, as a busy bot may
    tmux = TmuxSessions("bridge", socket, control=control)
    try:
        for i in range(4):
            argv = ["sh", "-c", "echo 'last words'; sleep 0.3; exit 3"]
            pane = tmux.start(f"10000000000000010{i}", f"words{i}", "/tmp", argv, {})
            with pytest.raises(PaneExited) as exited:
                tmux.wait_for(pane.pane_id, lambda screen: False, 10)
            assert exited.value.status in (3, None), f"run {i}: {exited.value}"
            assert "last words" in exited.value.screen, f"run {i}: {exited.value}"
            shown = "(status 3) " if exited.value.status else ""
            assert str(exited.value).startswith(f"the pane exited {shown}before it was ready")
        for i in range(5):
            pane = tmux.start(f"1000000000000000{i:02d}", f"w{i}", "/tmp", ["false"], {})
            with pytest.raises(PaneExited) as exited:
                tmux.wait_for(pane.pane_id, lambda screen: False, 10)
            assert exited.value.status in (1, None), f"death {i}: {exited.value}"
    finally:
        tmux.close()
