"""bridge/tmux_control.py against a real tmux server on a private socket."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from bridge import tmux_control
from bridge.tmux import HEX_KEYS_PER_COMMAND, TmuxError, TmuxSessions

SCREEN = "héllo ✅ wörld\n%end 1 2 0\nlast line"


@pytest.fixture
def socket() -> Iterator[str]:
    name = f"dbctl-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)


def start(socket: str) -> None:
    script = f"printf '%s\\n' '{SCREEN}'; cat"
    subprocess.run(
        [
            "tmux",
            "-L",
            socket,
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "80",
            "-y",
            "10",
            "sh",
            "-c",
            script,
        ],
        check=True,
    )


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
        assert control._control.takes(("send-keys", "-H", "-t", pane, "74", "0a"))
        for forged in (
            ("send-keys", "-H", "-t", pane, "74", "x;"),
            ("send-keys", "-H", "7;"),
            ("send-keys", "-H", "-t", f"{pane}' ; kill-server ; '", "74"),
            ("send-keys", "-H", "-t", f"{pane}\nkill-server", "74"),
            ("send-keys", "-H", "-t", pane),
        ):
            assert not control._control.takes(forged)  # a plain target, then hex bytes only
        control.type_literal(pane, "typed as hex bytes")
        control.press(pane, "Enter")  # key names go -C too
        control.wait_for(pane, lambda s: s.count("typed as hex bytes") == 2, 30)  # cat echoes
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
    # the pane's text first (asked as a process): a loaded machine runs the pane's printf late
    TmuxSessions("s", socket).wait_for("s", lambda screen: "last line" in screen, 30)
    for _ in range(10):
        control = TmuxSessions("s", socket, control=True)
        try:
            started = time.monotonic()
            assert "last line" in control.capture("s")  # the first command connects
            assert control._control is not None and control._control._proc is not None
            assert time.monotonic() - started < 3
        finally:
            control.close()


def next_command_number(socket: str) -> int:
    """The number tmux will give the next command: it counts every command on the server, and
    a control client sees it on each %begin line."""
    out = subprocess.run(
        ["tmux", "-L", socket, "-C", "attach", "-t", "=s"],
        text=True,
        input="display-message -p x\n",
        capture_output=True,
    ).stdout
    begins = [line.split() for line in out.splitlines() if line.startswith("%begin ")]
    return int(begins[-1][2]) + 1


def test_pane_text_that_looks_like_the_protocol_is_text(socket: str, tmp_path) -> None:
    """Issue 18.9 (G8): tmux does not escape command output in control mode, so a pane could
    show ``%end <time> <number> 1`` for the very capture that reads it (time and number are
    guessable) and cut it short, then a ``%begin … %end`` block of its own that the next
    command took for its reply. Here the pane shows every guess for the next seconds and
    command numbers: captures, list-panes and display-message must equal a process's."""
    script = tmp_path / "screen.txt"
    waiting = f"while [ ! -f {script} ]; do sleep 0.05; done; cat {script}; exec cat"
    subprocess.run(
        [
            "tmux",
            "-L",
            socket,
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "80",
            "-y",
            "300",
            "sh",
            "-c",
            waiting,
        ],
        check=True,
    )
    first, now = next_command_number(socket), int(time.time())
    forged = [f"%end {t} {n} 1" for t in (now, now + 1, now + 2) for n in range(first, first + 80)]
    forged += ["%begin 1 2 1", "@9\tforged\t123456789012345678\t%9\t0", "%end 1 2 1", "%exit"]
    (tmp_path / "part").write_text("\n".join(["on screen", *forged, "shown last"]) + "\n")
    (tmp_path / "part").rename(script)
    control = TmuxSessions("s", socket, control=True)
    plain = TmuxSessions("s", socket)
    try:
        pane = plain.server.cmd("display-message", "-p", "-t", "s", "#{pane_id}").stdout[0]
        plain.wait_for(pane, lambda screen: "shown last" in screen, 30)
        for _ in range(3):
            assert control.capture(pane) == plain.capture(pane)
            assert control._control is not None and control._control._proc is not None
            assert control.current_path(pane) == plain.current_path(pane)
            assert control.panes() == plain.panes() == []  # no bridge windows: none tagged
            assert control.pane_dead(pane) is False
            assert control.capture(pane, history=10) == plain.capture(pane, history=10)
    finally:
        control.close()


HOSTILE = (
    'it\'s "quoted" ; kill-server ; #{pane_id} #(touch PWNED) $HOME ~ \\ back\\slash\n'
    "line two\ttab\r é\u0301 👩\u200d👩\u200d👧 🏴\U000e0067\U000e0062\U000e0073\U000e0063"
    "\U000e0074\U000e007f \x7f \x01 \x1b[31m ends with ;"
)


# Longer than any piece the bridge types (100 characters): a whole Discord message and more in
# one command, every hostile piece again at every offset of a piece of 100.
LONG = "".join(f"{i:04d}{HOSTILE}" for i in range(40)) + "x" * 3000


@pytest.mark.parametrize("typed", [HOSTILE, LONG], ids=["hostile", "long"])
@pytest.mark.parametrize("control", [True, False], ids=["control connection", "a process"])
def test_typed_text_arrives_byte_for_byte_and_never_reaches_the_command_parser(
    socket: str, tmp_path, control: bool, typed: str
) -> None:
    """Message text is typed as ``send-keys -H`` (hex bytes): over the control connection
    when there is one. What the pane's program reads must be the text's very bytes, whatever
    it holds; a ``;``, ``#{}``, ``#()`` or quote in it must do nothing in tmux."""
    received = tmp_path / "received"
    dump = (
        f"import os, sys, tty; tty.setraw(0); out = open({str(received)!r}, 'wb', 0)\n"
        "while data := os.read(0, 4096): out.write(data)"
    )
    # (raw, so the terminal's line discipline takes nothing: not even a DEL or a Ctrl+A)
    subprocess.run(
        [
            "tmux",
            "-L",
            socket,
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "80",
            "-y",
            "10",
            "-c",
            str(tmp_path),
            sys.executable,
            "-c",
            dump,
        ],
        check=True,
    )
    tmux = TmuxSessions("s", socket, control=control)
    try:
        pane = tmux.server.cmd("display-message", "-p", "-t", "s", "#{pane_id}").stdout[0]
        deadline = time.monotonic() + 15
        while control and tmux._control._proc is None:  # the connection comes up
            tmux.capture(pane)
            assert time.monotonic() < deadline, "the control connection never came up"
            time.sleep(0.1)
        while not received.exists():  # the program is up, its terminal raw
            assert time.monotonic() < deadline, "the pane's program never started"
            time.sleep(0.02)
        processes: list[tuple[str, ...]] = []
        as_process = tmux.server.cmd
        tmux.server.cmd = lambda *args: processes.append(args) or as_process(*args)  # type: ignore[method-assign]
        sent = typed.encode()
        for piece in (typed[:40], typed[40:]):
            tmux.type_literal(pane, piece)
        per = HEX_KEYS_PER_COMMAND
        commands = -(-len(typed[:40].encode()) // per) - (-len(typed[40:].encode()) // per)
        assert [a[0] for a in processes] == ([] if control else ["send-keys"] * commands)
        while not received.exists() or len(received.read_bytes()) < len(sent):
            assert time.monotonic() < deadline, received.read_bytes() if received.exists() else b""
            time.sleep(0.02)
        time.sleep(0.1)
        assert received.read_bytes() == sent
        assert not (tmp_path / "PWNED").exists()
        assert tmux.server.cmd("has-session", "-t", "=s").returncode == 0  # no kill-server ran
    finally:
        tmux.close()


def test_commands_from_many_threads_each_get_their_own_reply(socket: str, tmp_path) -> None:
    """Commands are pipelined: many threads' commands in flight at once on the one
    connection, each handed its own reply (tmux answers in order), never another pane's
    screen, and text typed from all of them lands byte for byte in its own pane."""
    panes = 12
    script = "printf 'pane %s ready\\n' \"$0\"; exec cat"
    subprocess.run(
        [
            "tmux",
            "-L",
            socket,
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "80",
            "-y",
            "10",
            "sh",
            "-c",
            script,
            "0",
        ],
        check=True,
    )
    for n in range(1, panes):
        subprocess.run(
            ["tmux", "-L", socket, "new-window", "-d", "-t", "=s", "sh", "-c", script, str(n)],
            check=True,
        )
    plain = TmuxSessions("s", socket)
    out = plain.server.cmd("list-panes", "-s", "-t", "=s", "-F", "#{pane_id}").stdout
    ids = dict(enumerate(out))
    for n, pane in ids.items():
        plain.wait_for(pane, lambda screen, n=n: f"pane {n} ready" in screen, 30)
    control = TmuxSessions("s", socket, control=True)
    try:
        deadline = time.monotonic() + 15
        while control._control is not None and control._control._proc is None:
            control.capture(ids[0])
            assert time.monotonic() < deadline, "the control connection never came up"
            time.sleep(0.1)
        processes: list[tuple[str, ...]] = []
        as_process = control.server.cmd
        control.server.cmd = lambda *args: processes.append(args) or as_process(*args)  # type: ignore[method-assign]
        start = threading.Barrier(panes)
        wrong: list[str] = []

        def work(n: int) -> None:
            start.wait()
            for round_ in range(20):
                screen = control.capture(ids[n])
                others = [m for m in ids if m != n and f"pane {m} ready" in screen]
                if f"pane {n} ready" not in screen or others:
                    wrong.append(f"pane {n}, round {round_}: {screen!r}")
                control.type_literal(ids[n], f"{n}:{round_};'\"#{{pane_id}} ")

        threads = [threading.Thread(target=work, args=(n,)) for n in ids]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not wrong
        assert processes == []  # every command went over the connection
        for n, pane in ids.items():
            typed = "".join(f"{n}:{r};'\"#{{pane_id}} " for r in range(20)).rstrip()
            plain.wait_for(pane, lambda s, t=typed: t in s.replace("\n", ""), 30)
    finally:
        control.close()


def test_commands_in_flight_when_tmux_stops_answering_are_read_again_or_refused(
    socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several commands wait on the connection at once (the tmux server stopped) and tmux does
    not answer in time: the connection is dropped, every capture in flight is asked again as a
    process and gets its screen, a key in flight is refused (tmux may still read it: never
    pressed twice), and the connection comes back."""
    monkeypatch.setattr(tmux_control, "REPLY_TIMEOUT", 0.5)
    start(socket)
    plain = TmuxSessions("s", socket)
    pane = plain.server.cmd("display-message", "-p", "-t", "s", "#{pane_id}").stdout[0]
    plain.wait_for(pane, lambda screen: "last line" in screen, 30)
    server = int(plain.server.cmd("display-message", "-p", "#{pid}").stdout[0])
    control = TmuxSessions("s", socket, control=True)
    connection = control._control
    assert connection is not None
    try:
        assert control.capture(pane) == plain.capture(pane)  # the connection comes up
        first_client = connection._proc
        screens: list[str] = []
        refused: list[Exception] = []

        def capture() -> None:
            screens.append(control.capture(pane))

        def press() -> None:
            try:
                control.press(pane, "x")
            except TmuxError as err:
                refused.append(err)

        os.kill(server, signal.SIGSTOP)
        try:
            captures = [threading.Thread(target=capture) for _ in range(4)]
            pressing = threading.Thread(target=press)
            for thread in [*captures, pressing]:
                thread.start()
            deadline = time.monotonic() + 10
            while len(connection._waiting) < 5 and pressing.is_alive():  # all five in flight
                assert time.monotonic() < deadline, len(connection._waiting)
                time.sleep(0.005)
            assert len(connection._waiting) == 5
            pressing.join(10)
            assert len(refused) == 1  # not answered in time: refused, not pressed again
        finally:
            os.kill(server, signal.SIGCONT)
        for thread in captures:
            thread.join(30)
        after = plain.capture(pane)  # the key went in once at most (tmux read it, or not)
        assert after in (SCREEN, SCREEN + "\nx")
        assert len(screens) == 4 and set(screens) <= {SCREEN, after}  # each asked again
        deadline = time.monotonic() + 15
        while connection._proc in (None, first_client):  # connected again after a pause
            assert control.capture(pane) == plain.capture(pane)
            assert time.monotonic() < deadline, "the control connection never came back"
            time.sleep(0.1)
    finally:
        os.kill(server, signal.SIGCONT)
        control.close()
