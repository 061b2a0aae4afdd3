"""The TCP ports a session's processes listen on, read from ``/proc``.

A session's processes are its pane's process and every descendant (the Claude Code CLI, the
shell of a Bash tool, a dev server it started in the background). A port is theirs when a
listening socket in ``/proc/<pid>/net/tcp`` or ``tcp6`` has the inode of one of their open
descriptors (``/proc/<pid>/fd/*`` → ``socket:[inode]``). Only sockets reachable on loopback
count: bound to 127.0.0.0/8, ``::1`` or the wildcard; one bound to another address of the
machine is never offered (the preview loads loopback only).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from bridge.sessions.machine import children

MAX_PROCESSES = 2000  # a fork bomb in a pane must not make the bot read /proc for ever
LISTEN = "0A"  # the ``st`` field of a listening socket (include/net/tcp_states.h)


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
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10 or fields[3] != LISTEN:
            continue
        try:
            inode = int(fields[9])
            address, _, port_hex = fields[1].partition(":")
            port = int(port_hex, 16)
        except ValueError:
            continue
        if inode not in inodes or not 0 < port < 65536:
            continue
        host = loopback_host(address)
        if host is not None:
            found.append(Listening(port, host))
    return found


def loopback_host(address: str) -> str | None:
    """Where a socket bound to ``address`` (the table's hex) is reached on loopback, or None.

    IPv4 is one little-endian word (``0100007F`` is 127.0.0.1); IPv6 four of them."""
    try:
        raw = bytes.fromhex(address)
    except ValueError:
        return None
    if len(raw) == 4:
        ip = raw[::-1]
        return "127.0.0.1" if ip == bytes(4) or ip[0] == 127 else None
    if len(raw) != 16:
        return None
    ip = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    if ip == bytes(16):
        return "[::1]"  # the wildcard: IPv4 too, unless IPv6-only; ::1 reaches it either way
    if ip == bytes(15) + b"\x01":
        return "[::1]"
    if ip[:12] == bytes(10) + b"\xff\xff" and ip[12] == 127:  # ::ffff:127.x.y.z
        return "127.0.0.1"
    return None
