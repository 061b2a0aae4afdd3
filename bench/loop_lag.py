"""How long a durable state write holds the bot's event loop, with the disk busy flushing.

The bot's state modules (queued prompts, away records, schedules, session state…) write with
``private_files.write_atomic``, durably: two fsyncs. On the loop's thread each fsync waits for
the disk; with other writers' dirty pages in the way (several Claude Code sessions, git, a CI
run) that took ~40 s once. This runs an event loop beating every 10 ms, does ``--writes``
durable writes from a coroutine while a background process writes ``--dirty-mb`` MB of
unsynced data in a loop, and reports the loop's lag (how late the beat woke): the writes as
the loop now does them (fsyncs in a worker thread) and, for comparison, with the fsyncs on the
loop as before.

    .venv/bin/python bench/loop_lag.py [--writes 200] [--dirty-mb 64]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import subprocess
import sys
import tempfile
import time

from bridge.state import private_files

BEAT = 0.01


async def lags_while(work) -> list[float]:
    """The beat's lateness (seconds) for as long as ``work()`` runs."""
    lags: list[float] = []
    done = asyncio.Event()

    async def beat() -> None:
        while not done.is_set():
            before = time.monotonic()
            await asyncio.sleep(BEAT)
            lags.append(time.monotonic() - before - BEAT)

    beater = asyncio.create_task(beat())
    await work()
    done.set()
    await beater
    return lags


def dirtier(folder: str, megabytes: int) -> subprocess.Popen:
    """A process writing ``megabytes`` MB again and again, never syncing: dirty pages."""
    code = (
        "import os, sys\n"
        "path, size = sys.argv[1], int(sys.argv[2]) << 20\n"
        "block = os.urandom(1 << 20)\n"
        "while True:\n"
        "    with open(path, 'wb') as f:\n"
        "        for _ in range(size >> 20): f.write(block)\n"
    )
    path = os.path.join(folder, "dirty.bin")
    return subprocess.Popen([sys.executable, "-c", code, path, str(megabytes)])


async def writes(folder: str, count: int, on_loop: bool) -> None:
    for i in range(count):
        path = os.path.join(folder, f"queued-{i % 10}.json")
        if on_loop:  # as before: the fsyncs on the loop's thread
            private_files._write(path, b'{"queued": []}', 0o600, durable=True)
        else:
            private_files.write_atomic(path, b'{"queued": []}')
        await asyncio.sleep(0)  # as coroutines do between two writes


def report(name: str, lags: list[float]) -> None:
    ordered = sorted(lags)
    p99 = ordered[int(len(ordered) * 0.99) - 1] if ordered else 0.0
    print(
        f"{name:>22}: {len(lags):5d} beats, loop lag p99 {p99 * 1000:7.1f} ms, "
        f"worst {max(lags, default=0) * 1000:7.1f} ms, over 250 ms: "
        f"{sum(lag > 0.25 for lag in lags)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--dirty-mb", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.path.expanduser("~")) as folder:  # a real disk
        busy = dirtier(folder, args.dirty_mb)
        try:
            time.sleep(1.0)
            for name, on_loop in (("fsync on the loop", True), ("fsync in a thread", False)):
                started = time.monotonic()
                work = functools.partial(writes, folder, args.writes, on_loop)
                lags = asyncio.run(lags_while(work))
                report(name, lags)
                print(f"{'':>22}  {args.writes} writes in {time.monotonic() - started:.1f} s")
        finally:
            busy.kill()
            busy.wait()


if __name__ == "__main__":
    main()
