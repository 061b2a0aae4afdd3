"""When a permission dialog shows, relative to its tool call's PreToolUse (real Claude Code).

The key gate (``bridge/sessions/key_gate.py``) presses no key for ``TOOL_GRACE`` after a tool
call's PreToolUse, because Claude Code may draw a dialog then that takes the key; this prints
what that grace must cover. One turn of Write calls (then one of Bash calls), each denied from
Discord; for each call, from its PreToolUse (the mtime of ``tools/<channel>``, which the
installed hook touches) until:

- the dialog is on the screen (the pane captured in a tight loop);
- the PermissionRequest hook has written its request (the request's ``created``);
- the prompt message is at Discord (the emulator's ``message_create`` record).

    .venv/bin/python bench/dialog_timing.py [--runs 10]   (≈ 1 min on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import os
import time

from bridge_testkit import BridgeRig, bench_rig, percentile
from fake_anthropic import echo, tool_use
from fake_anthropic.claude_cli import claude_available

PROJECT = "project-a"
POLL = 0.002  # seconds between looks (each pane capture is a tmux command, a few ms)
DIALOGS = {"Write": "Do you want to create", "Bash": "Do you want to proceed?"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10, help="tool calls per tool")
    args = parser.parse_args()
    if not claude_available():
        raise SystemExit("the pinned Claude Code CLI is missing (./scripts/test.sh installs it)")
    with bench_rig("dialog-bench-") as rig:
        rig.start_bot()
        rows = []
        for tool in DIALOGS:
            rows += bench_tool(rig, tool, args.runs)
        print(f"{'from PreToolUse to':<52} {'n':>3} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        for name, values in rows:
            p50, p95 = percentile(values, 50), percentile(values, 95)
            print(f"{name:<52} {len(values):>3} {p50:8.0f} {p95:8.0f} {max(values):8.0f}")


def bench_tool(rig: BridgeRig, tool: str, runs: int) -> list[tuple[str, list[float]]]:
    project = rig.projects[PROJECT]
    calls = [
        tool_use("Write", {"file_path": str(project / f"w{i}.txt"), "content": "x\n"})
        if tool == "Write"
        else tool_use("Bash", {"command": f"touch b{i}.txt", "description": "Make a file"})
        for i in range(runs)
    ]
    rig.api.script(*calls, echo())
    marker = rig.runtime_dir / "tools" / rig.ids[PROJECT]
    prompts = rig.runtime_dir / "prompts"
    before = marker.stat().st_mtime if marker.exists() else 0.0
    wall_minus_mono = time.time() - time.monotonic()  # the emulator runs in this process
    drawn, written, posted = [], [], []
    since = rig.discord.mark()
    rig.post(f"{tool} calls")
    pane = None
    for _ in range(runs):
        seen = None
        while seen is None:  # the dialog, captured as soon as it shows
            pane = pane or (rig.pane(PROJECT).pane_id if rig.pane(PROJECT) else None)
            if pane and DIALOGS[tool] in rig.tmux.capture(pane):
                seen = time.time()
            time.sleep(POLL)
        record = rig.discord.wait(
            since=since,
            kind="message_create",
            channel_id=rig.ids[PROJECT],
            author_id=rig.ids["bot_id"],
            content_contains="Claude wants to use",
            timeout=60,
        )
        started = marker.stat().st_mtime
        assert started > before, "no PreToolUse seen for this call"
        request = next(
            json.loads((prompts / name).read_text())
            for name in os.listdir(prompts)
            if name.endswith(".json")
        )
        drawn.append((seen - started) * 1000)
        written.append((request["created"] - started) * 1000)
        posted.append((record["t"] + wall_minus_mono - started) * 1000)
        deny = next(
            c["custom_id"]
            for row in record["message"]["components"]
            for c in row["components"]
            if c.get("label", "").startswith("Deny")
        )
        since = rig.discord.mark()
        rig.discord.click(record["message"]["id"], deny)
        while os.listdir(prompts) or DIALOGS[tool] in rig.tmux.capture(pane):
            time.sleep(POLL)  # this call is over before the next one is timed
        before = started
    rig.wait_bot_message(PROJECT, content_contains="Model saw", timeout=60)
    return [
        (f"{tool}: the dialog on screen", drawn),
        (f"{tool}: the PermissionRequest hook's request written", written),
        (f"{tool}: the prompt at Discord", posted),
    ]


if __name__ == "__main__":
    main()
