"""Whether the owner sits at the session's terminal, asked of a real tmux server: a person's
client attached and active means no ping; the bot's control-mode client, no client, no tmux
or a tmux that does not answer mean a ping (a ping too many beats one missed)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.handlers import notify


@pytest.fixture
def tmux_pane() -> Iterator[dict[str, str]]:
    """A private tmux server with one pane; the env a hook in that pane inherits."""
    name = f"desk-{uuid.uuid4().hex[:8]}"
    base = ["tmux", "-L", name, "-f", "/dev/null"]
    subprocess.run(
        [*base, "new-session", "-d", "-s", "s", "-x", "80", "-y", "24", "sleep 600"], check=True
    )
    try:
        where = [*base, "display", "-p", "-t", "s", "#{socket_path} #{pane_id}"]
        shown = subprocess.run(where, check=True, capture_output=True, text=True).stdout.split()
        yield {"TMUX": f"{shown[0]},1,0", "TMUX_PANE": shown[1], "base": " ".join(base)}
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True)


def attach(base: list[str], *extra: str) -> subprocess.Popen:
    """A client attached on a pseudo-terminal (a person's terminal), or ``-C`` (a program)."""
    primary, secondary = os.openpty()
    client = subprocess.Popen(
        [*base, *extra, "attach", "-t", "s"],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        start_new_session=True,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    os.close(secondary)
    client.primary = primary  # type: ignore[attr-defined]
    deadline = time.monotonic() + 10
    while not subprocess.run([*base, "list-clients"], capture_output=True, text=True).stdout:
        assert time.monotonic() < deadline, "the client did not attach"
        time.sleep(0.02)
    return client


def detach(client: subprocess.Popen) -> None:
    client.kill()
    client.wait(10)
    os.close(client.primary)  # type: ignore[attr-defined]


def owner_at_desk(within: float, env: dict[str, str]) -> bool:
    """The question asked and answered at once (as ``mention_for`` does without an early ask)."""
    desk = notify.DeskQuery.start(env)
    return desk is not None and desk.at_desk(within)


def test_a_person_attached_and_active_is_at_the_desk(tmux_pane) -> None:
    base = tmux_pane["base"].split()
    assert not owner_at_desk(60, tmux_pane)  # nobody attached
    client = attach(base)
    try:
        assert owner_at_desk(60, tmux_pane)
        assert not owner_at_desk(-1, tmux_pane)  # attached, but not active lately
        asked = notify.DeskQuery.start(tmux_pane)  # asked early, read later: the same answer
        assert asked is not None
        time.sleep(0.1)
        assert asked.at_desk(60)
    finally:
        detach(client)


def test_a_control_mode_client_is_a_program_not_the_owner(tmux_pane) -> None:
    client = attach(tmux_pane["base"].split(), "-C")
    try:
        assert not owner_at_desk(60, tmux_pane)
    finally:
        detach(client)


def test_no_tmux_pane_or_no_server_is_not_at_the_desk(tmp_path: Path) -> None:
    assert notify.DeskQuery.start({}) is None
    assert notify.DeskQuery.start({"TMUX": "/x,1,0", "TMUX_PANE": "0"}) is None  # not a pane id
    gone = {"TMUX": f"{tmp_path}/no-server,1,0", "TMUX_PANE": "%0"}
    assert not owner_at_desk(60, gone)


def test_a_tmux_server_that_does_not_answer_is_given_up_on(tmp_path, monkeypatch) -> None:
    """A socket that accepts but never answers (a hung server): the hook goes on within
    ``DESK_TIMEOUT`` and leaves no tmux behind."""
    monkeypatch.setattr(notify, "DESK_TIMEOUT", 0.5)
    path = str(tmp_path / "hung")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    try:
        asked = notify.DeskQuery.start({"TMUX": f"{path},1,0", "TMUX_PANE": "%0"})
        assert asked is not None
        pid = asked._pid
        start = time.monotonic()
        assert not asked.at_desk(60)
        assert time.monotonic() - start < 2
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # killed and reaped
    finally:
        server.close()
