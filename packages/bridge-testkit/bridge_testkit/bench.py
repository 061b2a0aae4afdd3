"""The end-to-end rig for a benchmark script (bench/*.py): set up, header, torn down."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from discord_emulator import Emulator
from fake_anthropic import FakeAnthropic
from fake_anthropic.claude_cli import CLAUDE_VERSION, claude_binary

from .rig import BridgeRig


@contextlib.contextmanager
def bench_rig(prefix: str, projects: int = 2, rate_limits: bool = False) -> Iterator[BridgeRig]:
    """The e2e rig for a benchmark, its header printed, everything torn down after.

    ``projects`` mapped channels; ``rate_limits`` makes the emulator enforce Discord's limits.

    Ctrl-C and kill both unwind through the ExitStack: bot, tmux server, servers, tmp dir
    (SIGINT explicitly too: a shell starts background jobs with SIGINT ignored).
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with contextlib.ExitStack() as stack:
        tmp = Path(tempfile.mkdtemp(prefix=prefix))
        stack.callback(remove_tree, tmp)
        emu = stack.enter_context(Emulator(rate_limits=rate_limits))
        api = stack.enter_context(FakeAnthropic())
        rig = BridgeRig(tmp, emu, api, projects=projects)
        stack.callback(remove_socket, rig.socket)  # runs after rig.close() killed the server
        stack.callback(rig.close)
        print(header(rig))
        yield rig


def remove_tree(path: Path) -> None:
    """Claude Code may still write its HOME for a moment after the tmux server is killed."""
    for _ in range(20):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.1)
    print(f"could not remove {path}")


def remove_socket(name: str) -> None:
    """``tmux kill-server`` leaves the socket file of the rig's private server behind."""
    folder = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(folder, name))


def header(rig: BridgeRig) -> str:
    version = subprocess.run(
        [claude_binary(), "--version"], env=rig.env, capture_output=True, text=True, timeout=60
    ).stdout.strip()
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return f"nproc: {nproc}  claude: {version or '?'} (pinned {CLAUDE_VERSION})"


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (with n = 10, p95 is the largest value)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))
    return ordered[int(rank) - 1]
