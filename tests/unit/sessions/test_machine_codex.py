"""A Codex TUI among the panes ``/sessions`` scans: its state read from its screen, and the
processes taken for Codex (the npm shim and the native binary, never its daemon)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bridge.sessions import machine_codex
from bridge_testkit import wait_until

SCREENS = Path(__file__).parents[1] / "codex" / "screens"


@pytest.mark.parametrize(
    ("screen", "state"),
    [("idle", "idle"), ("typed", "idle"), ("busy", "working"), ("trust", "dialog open")],
)
def test_its_state_is_read_from_codexs_screen(screen: str, state: str) -> None:
    text = (SCREENS / f"0.171.0-{screen}.txt").read_text()
    assert machine_codex.screen_state(text) == state


def run_as(tmp_path: Path, argv0: str, *args: str) -> subprocess.Popen:
    """A process whose command line is ``argv0 args…``: a Python under that name that waits
    on its stdin, reading its program there or running a script named as its first argument
    (written here, relative to its cwd, or under ``tmp_path`` for ``/x/…``)."""
    args = tuple(a.replace("/x/", f"{tmp_path}/") for a in args)
    if args:
        script = Path(args[0]) if args[0].startswith("/") else tmp_path / args[0]
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text("import sys\nsys.stdin.read()\n")
    process = subprocess.Popen(
        [argv0, *args], executable=sys.executable, stdin=subprocess.PIPE, cwd=tmp_path
    )
    wanted = b"\0".join(a.encode() for a in (argv0, *args)) + b"\0"
    cmdline = Path(f"/proc/{process.pid}/cmdline")
    wait_until(lambda: cmdline.read_bytes() == wanted, 10, "the process's command line")
    return process


@pytest.mark.parametrize(
    ("argv", "codex"),
    [
        (["/x/vendor/codex/codex"], True),
        (["codex", "resume", "01a22656-bb46-7c93-b002-84fc9a347e53"], True),
        (["node", "/x/node_modules/.bin/codex"], True),
        (["node", "/x/@openai/codex/bin/codex.js"], True),
        (["/home/u/.codex/packages/app-server-daemon/codex", "app-server", "--listen"], False),
        (["node", "/x/other.js"], False),
        (["claude"], False),
    ],
)
def test_which_processes_are_codex(tmp_path: Path, argv: list[str], codex: bool) -> None:
    process = run_as(tmp_path, *argv)
    try:
        assert machine_codex.is_codex(process.pid) is codex
        assert (machine_codex.codex_in(process.pid) == process.pid) is codex
        assert machine_codex.session_id_of(process.pid) is None  # no rollout open
    finally:
        process.kill()
        process.wait()


def test_a_rollout_held_open_by_a_process_is_running(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-2026-11-29T08-06-09-01a22656-bb46-7c93-b002-84fc9a347e53.jsonl"
    rollout.write_text("{}\n")
    assert machine_codex.running_conversation(str(rollout)) is None
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sys; f = open({str(rollout)!r}); sys.stdin.read()"],
        stdin=subprocess.PIPE,
    )
    try:
        wait_until(
            lambda: machine_codex.running_conversation(str(rollout)) == holder.pid,
            10,
            "the file open",
        )
        assert machine_codex.rollout_open(holder.pid) == str(rollout)
        assert machine_codex.session_id_of(holder.pid) == "01a22656-bb46-7c93-b002-84fc9a347e53"
    finally:
        holder.kill()
        holder.wait()
    assert machine_codex.running_conversation(str(rollout)) is None
