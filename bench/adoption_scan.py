"""What finding and following the sessions the bridge did not start costs the bot.

Nothing polls: the machine is scanned only when the owner asks (``/sessions``, its ◀ ▶, a pick,
**Adopt**), and an adopted session is checked only when it is used (a message, a command),
by one ``/proc`` read. This prints what each costs, on this machine as it is (its tmux sockets,
stale ones included, and whatever Claude Code runs in them) plus a private tmux server the
bench starts with ``--panes`` plain shells, so a busy server is in the figures:

- finding the sockets: a connect per socket file (a ``tmux`` process per socket would cost
  ~8 ms each; tmux leaves the file of a killed server behind);
- one scan: ``list-panes -a`` per live server, the process tree of each pane, one capture
  per Claude Code pane;
- the per-message check of an adopted session (``adoption.alive``) beside the bridge's own
  pane lookup (``TmuxSessions.find``: one ``list-panes``).

    .venv/bin/python bench/adoption_scan.py [--panes 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
import uuid

from bridge.sessions import adoption, machine
from bridge.tmux import TmuxSessions


def timed(action, rounds: int) -> tuple[float, object]:
    """Median milliseconds of ``rounds`` calls, and the last result."""
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--panes", type=int, default=20, help="shells in the bench's tmux server")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    name = f"dbbench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    tmux = ["tmux", "-L", name, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "bench", "sleep 600"], check=True)
    for _ in range(args.panes - 1):
        subprocess.run([*tmux, "new-window", "-d", "-t", "bench", "sleep 600"], check=True)
    try:
        directory = machine.socket_dir()
        files = [n for n in os.listdir(directory) if not n.startswith(".")]
        ms_sockets, sockets = timed(machine.user_sockets, args.rounds)
        live = list(sockets)  # type: ignore[call-overload]
        ms_scan, found = timed(lambda: machine.scan(live), args.rounds)
        ms_bare, _ = timed(lambda: machine.scan(live, with_state=False), args.rounds)
        found = list(found)  # type: ignore[call-overload]
        print(f"tmux socket files in {directory}: {len(files)}, live and this user's: {len(live)}")
        print(f"finding the live sockets (a connect each):   {ms_sockets:7.1f} ms")
        print(f"one scan ({len(found)} Claude Code panes found):      {ms_scan:7.1f} ms")
        print(f"  of which reading their screens:            {ms_scan - ms_bare:7.1f} ms")
        if live:
            per_server = ms_bare / len(live)
            print(f"  per live server (list-panes, /proc):       {per_server:7.1f} ms")
        record = {"pid": os.getpid(), "proc_start": machine.proc_start(os.getpid())}
        ms_alive, ok = timed(lambda: adoption.alive(record), 200)
        assert ok
        own = TmuxSessions("bench", name)
        ms_find, _ = timed(lambda: own.find("0"), 20)
        print(f"per message, an adopted session's check:     {ms_alive:7.3f} ms (one /proc read)")
        print(f"per message, the bridge's own pane lookup:   {ms_find:7.3f} ms (one list-panes)")
        print("polling: none (scans run on /sessions, its pages, a pick and Adopt only)")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        socket = os.path.join(machine.socket_dir(), name)
        if os.path.exists(socket):
            os.unlink(socket)


if __name__ == "__main__":
    main()
