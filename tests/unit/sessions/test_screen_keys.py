"""Answering a dialog with keys, against a real tmux pane running a small dialog program that
draws Claude Code's dialog shape and reacts to arrows and Enter the way it does."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.claude.dialogs import read_dialog
from bridge.sessions import screen_keys
from bridge.sessions.key_gate import SessionKeys
from bridge.state import runtime
from bridge.tmux import TmuxSessions

CHANNEL = "100000000000000011"
DIALOG = r"""
import sys, termios, time, tty
options = ["No, exit", "Yes, I trust this folder", "Maybe later"]
stuck = sys.argv[1] == "stuck"  # arrows do nothing (a dialog that ignores keys)
slow = sys.argv[1] == "slow"  # each key drawn 0.4 s late (Claude Code on a busy machine)
at = 0
def draw():
    sys.stdout.write("\x1b[2J\x1b[H" + "─" * 40 + "\r\n Do you trust this folder?\r\n\r\n")
    for i, o in enumerate(options):
        sys.stdout.write((" ❯ " if i == at else "   ") + o + "\r\n")
    sys.stdout.write("\r\n Enter to confirm · Esc to cancel\r\n")
    sys.stdout.flush()
tty.setraw(0)
draw()
while True:
    key = sys.stdin.read(1)
    if key == "\x1b":
        rest = sys.stdin.read(2)
        if not stuck and rest == "[B": at = min(at + 1, len(options) - 1)
        if not stuck and rest == "[A": at = max(at - 1, 0)
        if slow: time.sleep(0.4)
        draw()
    elif key == "\r":
        sys.stdout.write("\x1b[2J\x1b[HCHOSE " + options[at] + "\r\n"); sys.stdout.flush()
"""


def start(tmp_path: Path, mode: str) -> Iterator[tuple[TmuxSessions, str, SessionKeys]]:
    script = tmp_path / "dialog.py"
    script.write_text(DIALOG)
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    tmux = TmuxSessions("unit", socket)
    info = tmux.start(CHANNEL, "dialog", str(tmp_path), [sys.executable, str(script), mode], {})
    tmux.wait_for(info.pane_id, lambda s: read_dialog(s) is not None, 10)
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    yield tmux, info.pane_id, SessionKeys(tmux, info.pane_id, rt, CHANNEL, screen_answer=True)
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


@pytest.fixture
def dialog(tmp_path) -> Iterator[tuple[TmuxSessions, str, SessionKeys]]:
    yield from start(tmp_path, "normal")


@pytest.fixture
def stuck(tmp_path) -> Iterator[tuple[TmuxSessions, str, SessionKeys]]:
    yield from start(tmp_path, "stuck")


def fingerprint(tmux: TmuxSessions, pane_id: str) -> str:
    found = read_dialog(tmux.capture(pane_id))
    assert found is not None
    return found.fingerprint


@pytest.fixture
def slow(tmp_path) -> Iterator[tuple[TmuxSessions, str, SessionKeys]]:
    yield from start(tmp_path, "slow")


def test_arrows_to_the_option_then_enter(dialog) -> None:
    tmux, pane_id, keys = dialog
    option = screen_keys.choose(keys, fingerprint(tmux, pane_id), 1)
    assert option.label == "Yes, I trust this folder"
    tmux.wait_for(pane_id, lambda s: "CHOSE Yes, I trust this folder" in s, 5)


def test_another_screen_is_not_answered(dialog) -> None:
    tmux, pane_id, keys = dialog
    with pytest.raises(screen_keys.ScreenChanged):
        screen_keys.choose(keys, "0123456789ab", 1)
    assert " ❯ No, exit" in tmux.capture(pane_id)  # no key was pressed


def test_enter_is_not_pressed_when_the_highlight_did_not_move(stuck) -> None:
    tmux, pane_id, keys = stuck
    with pytest.raises(screen_keys.ScreenChanged):
        screen_keys.choose(keys, fingerprint(tmux, pane_id), 2)
    assert "CHOSE" not in tmux.capture(pane_id)


def test_a_highlight_that_moves_late_is_waited_for_then_enter(slow) -> None:
    """On a busy machine Claude Code draws the ❯ well after the arrows: the answer waits
    for it to arrive (a single look refused the owner's click under load) and picks the
    option chosen, never the one the ❯ was on when Enter would have been pressed blind."""
    tmux, pane_id, keys = slow
    option = screen_keys.choose(keys, fingerprint(tmux, pane_id), 2)
    assert option.label == "Maybe later"
    tmux.wait_for(pane_id, lambda s: "CHOSE Maybe later" in s, 5)


def test_settle_waits_while_neither_the_box_nor_a_dialog_shows(dialog) -> None:
    tmux, pane_id, keys = dialog
    print_ = fingerprint(tmux, pane_id)
    screen_keys.choose(keys, print_, 0)
    assert screen_keys.settle(tmux, pane_id, print_, timeout=1.0).state == "waiting"
