"""The listening ports of a process tree, read from /proc: real processes, real sockets."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from bridge.preview.ports import Listening, listening_ports, loopback_host, parse_table, whose
from bridge.sessions.proc_tree import children

# A shell whose child listens on three sockets: loopback, the wildcard, and IPv6 loopback;
# it prints their ports, then waits. The shell is the "pane"; the listener its descendant.
LISTENER = textwrap.dedent(
    """
    import socket, sys, time
    def listen(family, host):
        s = socket.socket(family)
        s.bind((host, 0))
        s.listen()
        return s
    held = [listen(socket.AF_INET, "127.0.0.1"), listen(socket.AF_INET, "0.0.0.0")]
    try:
        held.append(listen(socket.AF_INET6, "::1"))
    except OSError:
        pass
    print(" ".join(str(s.getsockname()[1]) for s in held), flush=True)
    time.sleep(60)
    """
)


@pytest.fixture
def tree():
    shell = subprocess.Popen(
        ["sh", "-c", f'{sys.executable} -c "$0"; :', LISTENER],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        ports = [int(p) for p in shell.stdout.readline().split()]
        yield shell.pid, ports
    finally:
        for child in children(shell.pid):
            os.kill(child, signal.SIGKILL)
        shell.kill()
        shell.wait()


def test_the_ports_of_a_descendant_are_found_and_others_are_not(tree) -> None:
    pid, ports = tree
    stranger = socket.socket()  # this test's own socket: not in the tree
    stranger.bind(("127.0.0.1", 0))
    stranger.listen()
    theirs = stranger.getsockname()[1]
    try:
        found = listening_ports(pid)
    finally:
        stranger.close()
    assert [entry.port for entry in found] == sorted(ports)
    assert theirs not in [entry.port for entry in found]
    hosts = {entry.port: entry.host for entry in found}
    assert hosts[ports[0]] == hosts[ports[1]] == "127.0.0.1"
    if len(ports) == 3:
        assert hosts[ports[2]] == "[::1]"
        assert Listening(ports[2], "[::1]").url == f"http://[::1]:{ports[2]}/"


def test_a_tree_without_listening_sockets_has_no_ports() -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert listening_ports(sleeper.pid) == []
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_gone_process_has_no_ports() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert listening_ports(gone.pid) == []


TABLE = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1
   1: 0A00000A:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1
   2: 00000000:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1
   3: 0100007F:1F91 0100007F:9999 01 00000000:00000000 00:00000000 00000000     0        0 444 1
   4: 0100007F:1F92 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1
"""


def test_only_listening_loopback_sockets_of_the_tree_count() -> None:
    # 8080 on 127.0.0.1 and 3000 on the wildcard count; 80 on 10.0.0.10 (another address of
    # the machine), an established connection and a socket of another process do not.
    found = parse_table(TABLE, {111, 222, 333, 444})
    assert found == [Listening(8080, "127.0.0.1"), Listening(3000, "127.0.0.1")]


@pytest.mark.parametrize(
    ("address", "host"),
    [
        ("0100007F", "127.0.0.1"),
        ("0101007F", None),  # 127.0.1.1: 127.0.0.1 with its port may be someone else
        ("0200007F", None),  # 127.0.0.2
        ("00000000", "127.0.0.1"),
        ("0A00000A", None),  # 10.0.0.10
        ("00000000000000000000000001000000", "[::1]"),
        ("00000000000000000000000000000000", "[::1]"),
        ("0000000000000000FFFF00000100007F", "127.0.0.1"),  # ::ffff:127.0.0.1
        ("0000000000000000FFFF00000200007F", None),  # ::ffff:127.0.0.2
        ("0000000000000000FFFF00000A00000A", None),  # ::ffff:10.0.0.10
        ("B80D0120000000000000000001000000", None),  # 2001:db8::1
        ("zz", None),
    ],
)
def test_addresses_reachable_on_loopback(address: str, host: str | None) -> None:
    assert loopback_host(address) == host


# One socket, on the host and port given, held until killed; prints its port.
ONE_LISTENER = textwrap.dedent(
    """
    import socket, sys, time
    s = socket.socket()
    s.bind((sys.argv[1], int(sys.argv[2])))
    s.listen()
    print(s.getsockname()[1], flush=True)
    time.sleep(60)
    """
)


def listen(host: str, port: int = 0, user: int | None = None) -> tuple[subprocess.Popen, int]:
    python = "/usr/bin/python3" if user is not None else sys.executable  # nobody's to run
    held = subprocess.Popen(
        [python, "-c", ONE_LISTENER, host, str(port)],
        stdout=subprocess.PIPE,
        text=True,
        user=user,
        cwd="/",
    )
    return held, int(held.stdout.readline())


def test_another_127_address_is_not_taken_for_127_0_0_1_and_whoever_is_there_is_named() -> None:
    """The session's server is on 127.0.0.2:P; another user's on 127.0.0.1:P. /preview must
    not show the other's page as the session's, and a /preview P says whose it is."""
    as_root = os.geteuid() == 0
    session, port = listen("127.0.0.2")
    stranger, _ = listen("127.0.0.1", port, user=65534 if as_root else None)
    try:
        assert listening_ports(session.pid) == []
        named = "user nobody's program" if as_root else "a program of yours"
        assert whose(f"http://127.0.0.1:{port}/", session.pid) == (
            f"Port {port} is served by {named}, not by this session's processes."
        )
        assert whose(f"http://localhost:{port}/", None).startswith(f"Port {port} is served by")
    finally:
        for held in (session, stranger):
            held.kill()
            held.wait()


def test_the_sessions_own_port_needs_no_word(tree) -> None:
    pid, ports = tree
    assert whose(f"http://127.0.0.1:{ports[0]}/", pid) == ""
    assert whose(f"http://127.0.0.1:{ports[1]}/", pid) == ""  # the wildcard's
    free = socket.socket()
    free.bind(("127.0.0.1", 0))  # bound, not listening: nobody serves it
    try:
        assert whose(f"http://127.0.0.1:{free.getsockname()[1]}/", pid) == ""
    finally:
        free.close()
