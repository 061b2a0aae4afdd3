"""The TCP ports a session's processes listen on, read from ``/proc``.

A session's processes are its pane's process and every descendant (the Claude Code CLI, the
shell of a Bash tool, a dev server it started in the background). A port is theirs when a
listening socket in ``/proc/<pid>/net/tcp`` or ``tcp6`` has the inode of one of their open
descriptors (``/proc/<pid>/fd/*`` → ``socket:[inode]``). Only sockets the preview's URL
reaches count: bound to 127.0.0.1, ``::1`` or the wildcard. One bound to another address of
the machine is never offered (the preview loads loopback only), nor one bound to another
127.x.y.z: ``127.0.0.1`` with its port may be another user's program.

A port given by hand (``/preview 8000``) may be anyone's: :func:`whose` says whose program
listens there, this session's or not (the socket's inode and uid, in ``/proc/net``).
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from urllib.parse import urlsplit

from bridge.sessions.proc_tree import children

MAX_PROCESSES = 2000  # a fork bomb in a pane must not make the bot read /proc for ever
LISTEN = "0A"  # the ``st`` field of a listening socket (include/net/tcp_states.h)
LOOPBACK_V4 = bytes((127, 0, 0, 1))  # 127.0.0.2 and the rest of 127/8 are other addresses


@dataclass(frozen=True, order=True)
class Listening:
    port: int
    host: str  # where to reach it: "127.0.0.1" or "[::1]"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (breadth first; at most :data:`MAX_PROCESSES`)."""
    found: list[int] = []
    queue, seen = [pid], {pid}
    while queue and len(found) < MAX_PROCESSES:
        current = queue.pop(0)
        found.append(current)
        for child in children(current):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return found


def socket_inodes(pids: list[int]) -> set[int]:
    """The socket inodes the processes hold open (a process gone meanwhile holds none)."""
    inodes = set()
    for pid in pids:
        directory = f"/proc/{pid}/fd"
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            try:
                link = os.readlink(f"{directory}/{name}")
            except OSError:
                continue
            if link.startswith("socket:[") and link.endswith("]"):
                inodes.add(int(link[8:-1]))
    return inodes


def listening_ports(pid: int) -> list[Listening]:
    """The loopback-reachable listening TCP ports of ``pid``'s process tree, lowest first."""
    pids = process_tree(pid)
    inodes = socket_inodes(pids)
    found: set[Listening] = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as handle:
                text = handle.read()
        except OSError:
            continue
        found.update(parse_table(text, inodes))
    by_port: dict[int, Listening] = {}
    for entry in sorted(found, key=lambda e: (e.port, e.host != "127.0.0.1")):
        by_port.setdefault(entry.port, entry)  # one address per port, IPv4 first
    return sorted(by_port.values())


def parse_table(text: str, inodes: set[int]) -> list[Listening]:
    """The listening sockets of a ``/proc/net/tcp{,6}`` table whose inode is in ``inodes``."""
    found = []
    for address, port, _, inode in listeners(text):
        host = loopback_host(address)
        if inode in inodes and host is not None:
            found.append(Listening(port, host))
    return found


def listeners(text: str) -> list[tuple[str, int, int, int]]:
    """(address in hex, port, uid, inode) of each listening socket of a ``/proc/net`` table."""
    found = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10 or fields[3] != LISTEN:
            continue
        try:
            address, _, port_hex = fields[1].partition(":")
            port, uid, inode = int(port_hex, 16), int(fields[7]), int(fields[9])
        except ValueError:
            continue
        if 0 < port < 65536:
            found.append((address, port, uid, inode))
    return found


def whose(url: str, session_pid: int | None) -> str:
    """Who listens where ``url`` connects, when not this session (``session_pid``'s tree):
    a line for the channel; "" when it is the session's, or when nothing listens there."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    hosts = {"localhost": {"127.0.0.1", "[::1]"}}.get(parts.hostname or "", set())
    hosts = hosts or {"[::1]" if parts.hostname == "::1" else parts.hostname or ""}
    ours = socket_inodes(process_tree(session_pid)) if session_pid else set()
    owners = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/self/net/{table}") as handle:  # where the browser connects
                text = handle.read()
        except OSError:
            continue
        for address, listened, uid, inode in listeners(text):
            if listened == port and reached_at(address) & hosts and inode not in ours:
                owners.add(uid)
    if not owners:
        return ""
    named = ", ".join(_user(uid) for uid in sorted(owners))
    return f"Port {port} is served by {named}, not by this session's processes."


def reached_at(address: str) -> set[str]:
    """The loopback hosts that connect to a socket bound to ``address`` (the table's hex)."""
    if address == "0" * 32:  # IPv6's wildcard takes IPv4 too, unless it is IPv6-only
        return {"127.0.0.1", "[::1]"}
    host = loopback_host(address)
    return {host} if host else set()


def _user(uid: int) -> str:
    if uid == os.geteuid():
        return "a program of yours"
    try:
        return f"user {pwd.getpwuid(uid).pw_name}'s program"
    except KeyError:
        return f"uid {uid}'s program"


def loopback_host(address: str) -> str | None:
    """Where a socket bound to ``address`` (the table's hex) is reached on loopback, or None.

    IPv4 is one little-endian word (``0100007F`` is 127.0.0.1); IPv6 four of them."""
    try:
        raw = bytes.fromhex(address)
    except ValueError:
        return None
    if len(raw) == 4:
        ip = raw[::-1]
        return "127.0.0.1" if ip in (bytes(4), LOOPBACK_V4) else None
    if len(raw) != 16:
        return None
    ip = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    if ip == bytes(16):
        return "[::1]"  # the wildcard: IPv4 too, unless IPv6-only; ::1 reaches it either way
    if ip == bytes(15) + b"\x01":
        return "[::1]"
    if ip == bytes(10) + b"\xff\xff" + LOOPBACK_V4:  # ::ffff:127.0.0.1
        return "127.0.0.1"
    return None
