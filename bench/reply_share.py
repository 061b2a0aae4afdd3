"""The bridge's own share of a reply, over real turns: Claude Code's part and ours, split.

Each turn is a message posted to Discord, typed into the real Claude Code CLI by the bot, the
fake Messages API answering with a short text. A probe hook is installed beside the bridge's
Stop hook (Claude Code starts an event's hooks together, so the probe's start is the moment
Claude Code fires Stop): a ``bash`` that appends ``$EPOCHREALTIME`` to a file. Per turn:

- the model's answer served (its last byte written) → Stop fired: Claude Code's own part;
- Stop fired → the reply at Discord (the emulator's ``message_create``): ours;
- and the two added up.

Footer on (the default) and off, the owner's mention on (the default), alternating; with
``--baseline DIR`` another checkout's hooks and bot are measured beside this one on a rig of
their own, turns alternating and the order rotating every round, so that the machine's load
hits both alike. The probe's ``bash`` costs both sides the same (≈ 2 ms of a CPU).

    .venv/bin/python bench/reply_share.py [--runs 15] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from reply_latency import PROJECT, Side, reply_record, report, set_up, write_config

from bridge_testkit import BridgeRig, bench_rig, is_status
from fake_anthropic import text
from fake_anthropic.claude_cli import claude_available, screen_is_idle

FOOTER_SETTLE = 3.5  # seconds after the reply within which its footer must be in place


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15, help="real turns per side and footer")
    parser.add_argument("--baseline", type=Path, help="a checkout to measure beside this one")
    args = parser.parse_args()
    if not claude_available():
        raise SystemExit("the pinned Claude Code CLI is missing (./scripts/test.sh installs it)")
    load0 = os.getloadavg()
    loads = [load0[0]]
    with contextlib.ExitStack() as stack:
        sides = []
        for name, checkout in (("before", args.baseline), ("after", None)):
            if name == "before" and checkout is None:
                continue
            rig = stack.enter_context(bench_rig(f"reply-share-{name}-", projects=1))
            sides.append(Side(name, checkout.resolve() if checkout else None, rig))
        for side in sides:
            set_up(side)
            add_probe(side)
        for side in sides:  # the first turn starts Claude Code (and warms its caches)
            turn(side, footer=True, count=False)
        cases = [(side, footer) for footer in (True, False) for side in sides]
        for round_ in range(args.runs):
            shift = round_ % len(cases)
            for side, footer in cases[shift:] + cases[:shift]:
                turn(side, footer)
            loads.append(os.getloadavg()[0])
            print(f"round {round_ + 1}/{args.runs}, load {loads[-1]:.1f}", flush=True)
    report(sides, load0, os.getloadavg())
    print(f"load average during the rounds: {min(loads):.1f}–{max(loads):.1f}")


def probe_file(side: Side) -> Path:
    return side.rig.tmp / "stop-fired.log"


def add_probe(side: Side) -> None:
    """The probe beside the bridge's Stop hook, in a group of its own."""
    settings_path = side.rig.claude_home / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    log = shlex.quote(str(probe_file(side)))
    command = f"exec bash -c 'echo $EPOCHREALTIME >> {log}'"
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": command}]})
    settings_path.write_text(json.dumps(settings, indent=2))


def stop_fired(side: Side, after: float) -> float | None:
    """The probe's last start after ``after`` (``time.monotonic()``), on the monotonic clock."""
    try:
        lines = probe_file(side).read_text().split()
    except FileNotFoundError:
        return None
    offset = time.time() - time.monotonic()
    starts = [float(line) - offset for line in lines if line.replace(".", "").isdigit()]
    starts = [t for t in starts if t > after]
    return starts[-1] if starts else None


def turn(side: Side, footer: bool, count: bool = True) -> None:
    rig = side.rig
    write_config(rig, footer)
    token = uuid.uuid4().hex[:10]
    reply = f"reply {token}"
    rig.api.script(text(reply))
    logged = len(rig.api.log)
    since = rig.discord.mark()
    asked = time.monotonic()
    sent = rig.post(f"question {token}", PROJECT)
    created = reply_record(rig, since, reply)
    rig.wait_reaction(sent, timeout=30)
    pane = rig.pane(PROJECT)
    assert pane is not None
    rig.tmux.wait_for(pane.pane_id, screen_is_idle, timeout=30, poll=0.05)
    served = [e.served for e in rig.api.log[logged:] if e.kind == "main" and e.served]
    fired = stop_fired(side, asked)
    if footer and not has_footer(rig, since, created):
        side.notes.append(f"{reply}: no footer within {FOOTER_SETTLE} s")
    if not count:
        return
    if not served or fired is None:
        side.notes.append(f"{reply}: no served answer or no Stop probe ({served}, {fired})")
        return
    label = "on" if footer else "off"
    side.add(f"answer → Stop fired (Claude Code's), footer {label}", (fired - served[-1]) * 1000)
    side.add(f"Stop fired → reply at Discord (ours), footer {label}", (created["t"] - fired) * 1000)
    side.add(f"answer → reply at Discord, footer {label}", (created["t"] - served[-1]) * 1000)


def has_footer(rig: BridgeRig, since: int, created: dict) -> bool:
    """The reply's last line is its footer, at once or by the bot's edit within the settle."""
    message_id = created["message"]["id"]
    deadline = created["t"] + FOOTER_SETTLE
    while True:
        edits = [
            r["message"]
            for r in rig.discord.records(since=since, kind="message_update")
            if r["message"]["id"] == message_id and not is_status(r["message"])
        ]
        content = (edits[-1] if edits else created["message"])["content"]
        last_line = content.rsplit("\n", 1)[-1]
        if last_line.startswith("-# ") and " · ctx " in last_line:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted; cleaned up")
        raise SystemExit(130) from None
