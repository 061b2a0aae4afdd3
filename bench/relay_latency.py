"""Relay latency, both directions, on the end-to-end rig (emulator, fake API, real Claude Code).

(1) Discord → pane: from the emulator's MESSAGE_CREATE (the ``user_message`` record's
server-side ``t``, ``time.monotonic()`` in this process: the emulator runs in a thread here)
until the typed text shows in the Claude Code pane, for 50- and 1,500-character messages.
The pane is captured in a tight loop; text counts as visible when its tail (whitespace
ignored, as ``TmuxSessions._wait_echo`` does) is on screen: for 1,500 characters both the
first chunk (the head) and all of it (the tail; the bot then presses Enter). Between runs
the fake API answers with a short reply and we wait for it, the ✅ and an idle pane, so runs
never overlap; a warm-up message per size (it also starts Claude Code) is not counted.

(2) Stop → Discord: the installed Stop hook command run as Claude Code runs it (``sh -c``,
the Stop event on stdin, the pane's channel marker in the env, cwd the project), from just
before the spawn until the emulator's ``message_create`` record for that reply. No Claude
Code is involved; first with no bot (the hook posts itself), then with the bot running (the
hook hands the reply to it and the bot posts it on its warm session).

    .venv/bin/python bench/relay_latency.py [--runs 20] [--stop-runs 30]   (≈ 1 min on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import time
import uuid

from bridge_testkit import BridgeRig, bench_rig, hook_input, percentile
from fake_anthropic import text
from fake_anthropic.claude_cli import box_shows, claude_available, screen_is_idle

PROJECT = "project-a"
SIZES = (50, 1500)
POLL = 0.002  # seconds between pane captures (each capture is a tmux subprocess, a few ms)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20, help="Discord → pane runs per size")
    parser.add_argument("--stop-runs", type=int, default=30, help="Stop hook → Discord runs")
    args = parser.parse_args()
    if not claude_available():
        raise SystemExit("the pinned Claude Code CLI is missing (./scripts/test.sh installs it)")
    with bench_rig("relay-bench-") as rig:
        stop_rows = bench_stop_hook(rig, args.stop_runs, "no bot: direct")
        rig.start_bot()
        stop_rows += bench_stop_hook(rig, args.stop_runs, "bot running: hand-off")
        pane_rows = bench_pane(rig, args.runs)

        print(f"{'path':<52} {'n':>3} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        for name, values in pane_rows + stop_rows:
            p50, p95 = percentile(values, 50), percentile(values, 95)
            print(f"{name:<52} {len(values):>3} {p50:8.0f} {p95:8.0f} {max(values):8.0f}")


# --- (1) Discord → pane ---------------------------------------------------------------------


def bench_pane(rig: BridgeRig, runs: int) -> list[tuple[str, list[float]]]:
    first: dict[int, list[float]] = {size: [] for size in SIZES}
    full: dict[int, list[float]] = {size: [] for size in SIZES}
    captures: list[float] = []
    lost: list[str] = []
    for size in SIZES:  # warm-up: starts Claude Code, the first prompt of a session is odd
        one_message(rig, size, captures, lost, "warm-up")
    captures.clear()
    for run in range(runs):
        for size in SIZES:  # interleaved, so drift over time hits both sizes alike
            head_ms, tail_ms = one_message(rig, size, captures, lost, f"run {run + 1}")
            first[size].append(head_ms)
            full[size].append(tail_ms)
    print(
        f"pane capture: median {statistics.median(captures) * 1000:.1f} ms per poll "
        f"(the resolution of the pane figures)"
    )
    for what in lost:
        print(f"lost Enter: {what} stayed in the input box; the bench pressed Enter for it")
    return [
        ("Discord → pane, 50 ch", full[50]),
        ("Discord → pane, 1500 ch, first chunk", first[1500]),
        ("Discord → pane, 1500 ch, all", full[1500]),
    ]


def one_message(
    rig: BridgeRig, size: int, captures: list[float], lost: list[str], label: str
) -> tuple[float, float]:
    """Post one message of ``size`` characters; ms from MESSAGE_CREATE to its head and its
    tail visible in the pane. Returns once Claude has answered and is idle again."""
    token = uuid.uuid4().hex[:10]
    head, tail = f"B{token}S", f"E{token}Z"  # unique per run: old prompts stay on screen
    filler = "".join(f"word{i:04d} " for i in range(size // 9 + 1))
    content = head + " " + filler[: size - len(head) - len(tail) - 2] + " " + tail
    assert len(content) == size, len(content)
    reply = f"ack {token}"
    rig.api.script(text(reply))

    since = rig.discord.mark()
    sent = rig.post(content, PROJECT)
    pane_id = wait_pane(rig)
    deadline = time.monotonic() + 60
    seen_head = seen_tail = None
    while seen_tail is None:
        start = time.monotonic()
        screen = "".join(rig.tmux.capture(pane_id).split())
        now = time.monotonic()
        captures.append(now - start)
        if seen_head is None and head in screen:
            seen_head = now
        if tail in screen:
            seen_tail = now
            seen_head = seen_head or now
        elif now > deadline:
            raise SystemExit(f"the text never showed:\n{rig.diagnostics(PROJECT)}")
        time.sleep(POLL)
    record = rig.discord.wait(since=since, kind="user_message", message_id=sent["id"])

    wait_reply(rig, since, pane_id, content, reply, lost, f"{label}, {size} ch")
    rig.wait_reaction(sent)
    rig.tmux.wait_for(pane_id, screen_is_idle, timeout=30, poll=0.02)
    return (seen_head - record["t"]) * 1000, (seen_tail - record["t"]) * 1000


def wait_reply(
    rig: BridgeRig, since: int, pane_id: str, content: str, reply: str, lost: list[str], what: str
) -> None:
    """Wait for Claude's reply at the emulator. A prompt still sitting in the input box after
    a few seconds lost its Enter (it happens to the first prompt of a fresh session): press
    Enter for it, note it, and go on, so one lost key does not end the whole benchmark."""
    for _ in range(2):
        try:
            rig.discord.wait(
                since=since,
                kind="message_create",
                channel_id=rig.ids[PROJECT],
                content_contains=reply,
                timeout=8,
            )
            return
        except TimeoutError:
            if not box_shows(rig.tmux.capture(pane_id), content):
                break
            lost.append(what)
            rig.tmux.send_keys(pane_id, "Enter")
    rig.wait_bot_message(PROJECT, timeout=60, since=since, content_contains=reply)


def wait_pane(rig: BridgeRig, timeout: float = 90.0) -> str:
    """The project's pane id; the first message starts Claude Code, so it may not exist yet."""
    deadline = time.monotonic() + timeout
    while (pane := rig.pane(PROJECT)) is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"no pane appeared:\n{rig.diagnostics(PROJECT)}")
        time.sleep(0.01)
    return pane.pane_id


# --- (2) Stop → Discord ---------------------------------------------------------------------


def bench_stop_hook(rig: BridgeRig, runs: int, label: str) -> list[tuple[str, list[float]]]:
    settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    channel = rig.ids[PROJECT]
    env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": channel}
    cwd = rig.projects[PROJECT]
    python = shlex.split(command)[0]  # the interpreter the hook command runs
    baseline_command = f"{shlex.quote(python)} -I -c pass"
    posted, exited, baseline = [], [], []
    for i in range(runs + 3):  # 3 warm-ups: page cache, .pyc files, the runtime dir
        content = f"Stop hook reply {i} {uuid.uuid4().hex}"
        event = hook_input(
            "Stop",
            session_id="relay-bench",
            transcript_path="/nonexistent.jsonl",
            cwd=cwd,
            last_assistant_message=content,
        )
        since = rig.discord.mark()
        start = time.monotonic()
        result = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(event).encode(),
            env=env,
            cwd=cwd,
            capture_output=True,
            timeout=60,
        )
        end = time.monotonic()
        if result.returncode != 0 or result.stdout:
            raise SystemExit(f"the Stop hook misbehaved: {result.returncode} {result.stdout!r}")
        record = rig.discord.wait(
            since=since, kind="message_create", channel_id=channel, content=content, timeout=10
        )
        start_base = time.monotonic()  # interleaved, so load changes hit both alike
        subprocess.run(["sh", "-c", baseline_command], env=env, cwd=cwd, check=True, timeout=60)
        end_base = time.monotonic()
        if i >= 3:
            posted.append((record["t"] - start) * 1000)
            exited.append((end - start) * 1000)
            baseline.append((end_base - start_base) * 1000)
    return [
        (f"Stop hook → Discord ({label})", posted),
        (f"Stop hook, spawn → exit ({label})", exited),
        (f"baseline: python -I -c pass ({label})", baseline),
    ]


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted; cleaned up")
        raise SystemExit(130) from None
