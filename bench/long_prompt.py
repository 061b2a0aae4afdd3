"""What the real Claude Code CLI does with a long typed prompt (issue 20 §1: a review prompt).

A review sent from Discord is typed into the session like a message: in 100-character pieces
30 ms apart (``bridge/sessions/pane_input.py``), newlines as Ctrl+J. For prompts of several
sizes, shaped like a review (many short lines: file and lines, quoted code, the comment; or,
with ``--flat``, the same text on one line), this types each one into a real session on the
end-to-end rig (emulator, fake Messages API, the pinned CLI), then reports the rows the text
takes in the input box (as ``bot/changes/review_send.typed_rows`` counts them), what the
bridge does with such a review (types it, or writes it to a file and types a pointer), how
long typing took, and whether the model received exactly the text typed (not turned into a
paste).

What limits a typed prompt is its height, not its length: the input box grows with the text,
and once the box is taller than the pane its top rule scrolls off the screen, where the
bridge can no longer see the box (it stops typing, or cannot confirm the text before Enter).
A refused run is cleaned up with Ctrl+C and Ctrl+L (the screen stays scrolled otherwise).

    .venv/bin/python bench/long_prompt.py [--sizes 600,1200,1350,1410,5000] [--runs 1] [--flat]
                                          [--load N] [--repeat]

``--load N`` runs N processes that keep a CPU busy each while the prompts are typed (a loaded
machine: Claude Code reads its input late, seconds at times), and ends with how many prompts
reached the model intact. ``--repeat`` types a message that repeats itself (on one line).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

from bridge.bot.changes.review_send import BOX_ROWS, typed_rows
from bridge.sessions import pane_input
from bridge.sessions.key_gate import SessionKeys
from bridge.state import runtime
from bridge_testkit import BridgeRig, bench_rig
from fake_anthropic import last_user_text, text
from fake_anthropic.claude_cli import claude_available, screen_is_idle

PROJECT = "project-a"


def review_text(size: int, token: str, flat: bool = False) -> str:
    """A review-shaped prompt of exactly ``size`` characters (``flat``: on one line)."""
    head = f"Review {token}: comments on your changes.\n\n"
    parts, n = [head], 0
    while sum(map(len, parts)) < size:
        n += 1
        parts.append(
            f"{n}. src/module_{n}.py, lines {n * 3}-{n * 3 + 2}:\n"
            f"> def handler_{n}(request):\n>     return respond(request.args['id'])\n"
            f"Comment: validate the id before using it (case {n}).\n\n"
        )
    body = "".join(parts)
    if flat:
        body = body.replace("\n", " ")
    tail = f"END{token}"
    return body[: size - len(tail)] + tail


def repeating_text(size: int, token: str, flat: bool = True) -> str:
    """A message that repeats itself (test_relay's long one, benign): the last letters typed
    are often on screen already, from an earlier repeat."""
    part = "it's quoted ; kill-server ; $HOME ~/x back slash; second line; " + "x" * 60 + " ends;"
    body = "".join(f"[{i}{'y' * (i * 7)}]{part}" for i in range(size // 80 + 1))
    tail = f"END{token}"
    return body[: size - len(tail)] + tail


def one(
    rig: BridgeRig, keys: SessionKeys, size: int, seen: int, flat: bool, repeat: bool = False
) -> tuple[float, bool, str]:
    token = uuid.uuid4().hex[:8]
    prompt = repeating_text(size, token) if repeat else review_text(size, token, flat)
    rig.api.script(text(f"ack {token}"))
    start = time.monotonic()
    timings = pane_input.Timings()
    pane_input.clear_input(keys)
    try:
        pane_input.type_prompt(keys, prompt, pane_input.TYPE_CHUNK, timings)
    except pane_input.NoInputBox as err:
        rig.tmux.press(keys.pane_id, "C-c")  # leave the box empty for the next run
        rig.tmux.press(keys.pane_id, "C-l")  # and redraw: the box's top is scrolled away
        rig.tmux.wait_for(keys.pane_id, screen_is_idle, timeout=60, poll=0.05)
        return time.monotonic() - start, False, f"refused: {str(err)[:60]}"
    took = time.monotonic() - start
    request = rig.api.wait_requests(seen + 1, timeout=120)[seen]
    got = last_user_text(request)
    rig.tmux.wait_for(keys.pane_id, screen_is_idle, timeout=60, poll=0.05)
    pasted = "pasted" in got.lower()
    return took, got.strip() == prompt.strip() and not pasted, f"{timings}"


@contextlib.contextmanager
def cpu_load(processes: int) -> Iterator[None]:
    """``processes`` busy loops, each a CPU's worth of work, for as long as the block runs."""
    spinning = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)
    ]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="600,1200,1350,1410,5000")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--flat", action="store_true", help="the same text on one line")
    parser.add_argument("--load", type=int, default=0, help="busy processes while typing")
    parser.add_argument("--repeat", action="store_true", help="a message that repeats itself")
    args = parser.parse_args()
    if not claude_available():
        raise SystemExit("the pinned Claude Code CLI is missing (./scripts/test.sh installs it)")
    sizes = [int(s) for s in args.sizes.split(",")]
    with bench_rig("long-prompt-bench-") as rig:
        rig.api.script(text("ready"))
        rig.start_bot()
        rig.post("hello")
        rig.wait_bot_message(PROJECT, content_contains="ready", timeout=90)
        pane = rig.pane(PROJECT)
        rig.tmux.wait_for(pane.pane_id, screen_is_idle, timeout=60, poll=0.05)
        rt = runtime.Runtime(str(rig.runtime_dir), str(rig.state_dir))
        keys = SessionKeys(rig.tmux, pane.pane_id, rt, rig.ids[PROJECT])
        seen = len(rig.api.requests)
        width, height = rig.tmux.pane_size(pane.pane_id)
        print(f"pane {width}×{height}")
        print(f"{'chars':>6} {'rows':>5} {'bridge':>7} {'typed s':>8} {'intact':>7}  phases (ms)")
        failed = 0
        with cpu_load(args.load):
            for size in sizes:
                shape = repeating_text if args.repeat else review_text
                rows = typed_rows(shape(size, "x" * 8, args.flat), width)
                bridge = "types" if rows <= height - BOX_ROWS else "file"
                for _ in range(args.runs):
                    took, intact, phases = one(rig, keys, size, seen, args.flat, args.repeat)
                    seen += 0 if phases.startswith("refused") else 1
                    failed += not intact
                    shown = "yes" if intact else "NO"
                    print(
                        f"{size:>6} {rows:>5} {bridge:>7} {took:8.1f} {shown:>7}  {phases}",
                        flush=True,
                    )
        total = len(sizes) * args.runs
        print(f"{total - failed} of {total} intact, {failed} failed (load: {args.load} busy)")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted; cleaned up")
        raise SystemExit(130) from None
