"""Typing a long prompt into a real tmux pane whose program reads its input late, as Claude
Code does on a loaded machine: each piece must have reached the box before the next is typed,
or two arrive in one read and Claude Code takes them for a paste. The program here draws
Claude Code's input box (rules and ``❯``) with what it has read, reads every 0.3 s, and notes
the size of every read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.claude.screen import input_box
from bridge.sessions import pane_input
from bridge.sessions.key_gate import SessionKeys
from bridge.state import runtime
from bridge.tmux import TmuxSessions

CHANNEL = "100000000000000012"
SLOW_BOX = r"""
import os, sys, time, tty
reads, sent, stall = sys.argv[1], sys.argv[2], float(sys.argv[3])
text = ""
def draw():
    sys.stdout.write("\x1b[2J\x1b[H● earlier reply\r\n\r\n" + "─" * 60 + "\r\n❯ " + text
                     + "\r\n" + "─" * 60 + "\r\n  ? for shortcuts\r\n")
    sys.stdout.flush()
tty.setraw(0)
draw()
time.sleep(stall)  # a program just started or resumed on a loaded machine: its first read is late
while True:
    time.sleep(0.3)  # busy elsewhere: what is typed meanwhile waits in the terminal
    data = os.read(0, 65536).decode()
    with open(reads, "a") as f:
        f.write(f"{len(data)}\n")
    for char in data:
        if char != "\r":
            text += char
        elif text:  # an Enter on an empty box sends nothing, as in Claude Code (a second
            with open(sent, "w") as f:  # Enter, pressed while this read late, wiped it once)
                f.write(text)
            text = ""
    draw()
"""


@pytest.fixture
def slow_box(tmp_path, request) -> Iterator[tuple[TmuxSessions, SessionKeys, Path, Path]]:
    stall = getattr(request, "param", 0.0)
    script, reads, sent = tmp_path / "box.py", tmp_path / "reads", tmp_path / "sent"
    script.write_text(SLOW_BOX)
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    tmux = TmuxSessions("unit", socket)
    try:
        command = [sys.executable, str(script), str(reads), str(sent), str(stall)]
        info = tmux.start(CHANNEL, "box", str(tmp_path), command, {})
        tmux.wait_for(info.pane_id, lambda s: input_box(s) is not None, 10)
        rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
        yield tmux, SessionKeys(tmux, info.pane_id, rt, CHANNEL), reads, sent
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


def repetitive_message() -> str:
    """About 2,000 characters that repeat themselves (test_relay's long message): the last
    dozen letters typed so far are often on screen already, from an earlier repeat."""
    part = "it's quoted ; kill-server ; $HOME ~/x back slash; second line; " + "x" * 60 + " ends;"
    return "".join(f"[{i}{'y' * (i * 7)}]{part}" for i in range(12))[:2000]


def test_each_piece_is_read_before_the_next_is_typed(slow_box) -> None:
    _, keys, reads, sent = slow_box
    message = repetitive_message()
    pane_input.type_prompt(keys, message)
    sizes = [int(n) for n in reads.read_text().split()]
    assert max(sizes) <= pane_input.TYPE_CHUNK, sizes  # never two pieces in one read
    assert sent.read_text() == message


@pytest.mark.parametrize("slow_box", [8.0], indirect=True)
def test_a_first_read_8_s_late_still_sends_the_message(slow_box) -> None:
    """A CI run at load 10–15 refused a first message to a Claude Code just started (and one
    to a Claude Code just resumed): its first read came over 6 s after its box showed. The
    keys wait in the terminal, so the message goes in when it reads them, once."""
    _, keys, _, sent = slow_box
    pane_input.type_into_box(keys, "run the tests")
    assert sent.read_text() == "run the tests"


# Claude Code's own queue, as measured on 2.1.332: an Enter during a turn queues the box (its
# empty box then hints "Press up to edit queued messages"); at the turn's end the queue is sent
# as one prompt. An Enter while no turn runs sends the box at once, queue or not. Here the turn
# has just ended with one message queued, and the queue goes out only LAG seconds later (at
# load a fresh-clone run saw over 0.3 s): the moment a message typed then overtook it.
QUEUE_BOX = r"""
import json, os, select, sys, time, tty
sent_path, lag, turn = sys.argv[1], 1.5, 0.5
text, queue, busy_until, send_queue_at = "", ["queued first"], 0.0, time.monotonic() + lag
def send(prompt):
    global busy_until
    with open(sent_path, "a") as f:
        f.write(json.dumps(prompt) + "\n")
    busy_until = time.monotonic() + turn
def draw():
    busy = time.monotonic() < busy_until
    box = text or ("Press up to edit queued messages" if queue else "")
    sys.stdout.write("\x1b[2J\x1b[H● earlier reply\r\n\r\n" + "─" * 60 + "\r\n❯ " + box + "\r\n"
                     + "─" * 60 + "\r\n  " + ("esc to interrupt" if busy else "? for shortcuts")
                     + "\r\n")
    sys.stdout.flush()
tty.setraw(0)
was_busy = False
while True:
    if select.select([0], [], [], 0.05)[0]:
        for char in os.read(0, 65536).decode():
            if char != "\r":
                text += char
            elif text and time.monotonic() < busy_until:
                queue.append(text)
                text = ""
            elif text:
                send(text)
                text = ""
    busy = time.monotonic() < busy_until
    if was_busy and not busy and queue:
        send_queue_at = time.monotonic() + lag
    was_busy = busy
    if queue and not busy and time.monotonic() >= send_queue_at:
        send("\n\n".join(queue))
        queue = []
    draw()
"""


def test_a_message_typed_while_the_queue_waits_to_be_sent_goes_after_it(tmp_path) -> None:
    """Typed while Claude Code holds a queued message it has not sent yet, a message waits
    until the queue is sent, then queues behind it: the model reads them in the order sent.
    Before the wait it was sent at once, ahead of the queue."""
    script, sent = tmp_path / "queue.py", tmp_path / "sent"
    script.write_text(QUEUE_BOX)
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    tmux = TmuxSessions("unit", socket)
    try:
        command = [sys.executable, str(script), str(sent)]
        info = tmux.start(CHANNEL, "queue", str(tmp_path), command, {})
        tmux.wait_for(info.pane_id, lambda s: input_box(s) is not None, 10)
        keys = SessionKeys(
            tmux, info.pane_id, runtime.Runtime(str(tmp_path / "rt")).ensure(), CHANNEL
        )
        pane_input.type_into_box(keys, "typed second")
        deadline = time.monotonic() + 15
        while len(prompts(sent)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert prompts(sent) == ["queued first", "typed second"]
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


def prompts(sent: Path) -> list[str]:
    return [json.loads(line) for line in sent.read_text().splitlines()] if sent.exists() else []
