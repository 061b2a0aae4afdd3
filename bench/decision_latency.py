"""Decision latency on the end-to-end rig (emulator, the real bot, the installed hook).

The installed PermissionRequest hook command is run as Claude Code runs it (``sh -c``, a
Bash permission event on stdin, the pane's channel marker in the env, cwd the project):

(1) hook spawn → the prompt message at Discord (the emulator's ``message_create`` record);
(2) click on **Allow** → the bot's interaction answer (what Discord's 3 s limit is about);
(3) click on **Allow** → the hook has printed Claude Code's decision and exited (the bot
    writes the decision file, the hook wakes through watchfiles).

No Claude Code is involved: this isolates the bridge's part of a decision.

    .venv/bin/python bench/decision_latency.py [--runs 20]   (≈ 30 s on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time

from bridge_testkit import BridgeRig, bench_rig, hook_input, percentile

PROJECT = "project-a"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with bench_rig("decision-bench-") as rig:
        rows = bench_prompt_without_bot(rig, args.runs)
        rig.start_bot()
        rows += bench_decisions(rig, args.runs)
        print(f"{'path':<52} {'n':>3} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        for name, values in rows:
            p50, p95 = percentile(values, 50), percentile(values, 95)
            print(f"{name:<52} {len(values):>3} {p50:8.0f} {p95:8.0f} {max(values):8.0f}")


def _hook(rig: BridgeRig, name: str) -> tuple[subprocess.Popen, float]:
    """The installed PermissionRequest hook, started on a Bash event; and when it started."""
    settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
    groups = settings["hooks"]["PermissionRequest"]
    (command,) = [h["command"] for g in groups for h in g["hooks"]]
    cwd = rig.projects[PROJECT]
    env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": rig.ids[PROJECT]}
    event = hook_input(
        "PermissionRequest",
        session_id="decision-bench",
        transcript_path="/nonexistent.jsonl",
        cwd=cwd,
        tool_name="Bash",
        tool_input={"command": f"touch {name}", "description": "Create"},
        permission_suggestions=[],
    )
    start = time.monotonic()
    hook = subprocess.Popen(
        ["sh", "-c", command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    hook.stdin.write(json.dumps(event).encode())
    hook.stdin.close()
    return hook, start


def bench_prompt_without_bot(rig: BridgeRig, runs: int) -> list[tuple[str, list[float]]]:
    """No bot running: the hook posts the prompt itself (then it is stopped)."""
    channel = rig.ids[PROJECT]
    posted = []
    for i in range(runs + 2):  # 2 warm-ups
        since = rig.discord.mark()
        hook, start = _hook(rig, f"direct-{i}.txt")
        record = rig.discord.wait(
            since=since,
            kind="message_create",
            channel_id=channel,
            content_contains=f"direct-{i}.txt",
            timeout=20,
        )
        hook.terminate()  # as Claude Code does when the terminal answers
        hook.wait(20)
        if i >= 2:
            posted.append((record["t"] - start) * 1000)
    return [("PermissionRequest hook → prompt (no bot: direct)", posted)]


def bench_decisions(rig: BridgeRig, runs: int) -> list[tuple[str, list[float]]]:
    channel = rig.ids[PROJECT]
    posted, acked, decided = [], [], []
    for i in range(runs + 2):  # 2 warm-ups
        since = rig.discord.mark()
        hook, start = _hook(rig, f"bench-{i}.txt")
        record = rig.discord.wait(
            since=since,
            kind="message_create",
            channel_id=channel,
            content_contains=f"bench-{i}.txt",
            timeout=20,
        )
        message = record["message"]
        allow = next(
            c["custom_id"]
            for row in message["components"]
            for c in row["components"]
            if c["label"] == "Allow"
        )
        clicked = time.monotonic()
        answer = rig.discord.click(message["id"], allow)
        answered = time.monotonic()
        output = hook.stdout.read()
        hook.wait(20)
        done = time.monotonic()
        if answer["response_type"] != 7 or b'"behavior":"allow"' not in output.replace(b" ", b""):
            raise SystemExit(f"the decision went wrong: {answer} {output!r}")
        if i >= 2:
            posted.append((record["t"] - start) * 1000)
            acked.append((answered - clicked) * 1000)
            decided.append((done - clicked) * 1000)
    return [
        ("PermissionRequest hook → prompt (bot running: hand-off)", posted),
        ("click → interaction answered", acked),
        ("click → decision printed, hook exited", decided),
    ]


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
