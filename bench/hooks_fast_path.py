"""Hook fast path: each installed hook command, run as Claude Code runs it, vs `python -c pass`.

Cases: (1) a session in a directory no project maps (no env marker): the hook must exit at
once; (2) a bridge session (env marker) whose event has nothing to send (an empty reply; a
SessionStart, which only records the session id). Each command is run through ``sh -c`` with
the event JSON on stdin, interleaved with the baseline ``python -c pass`` on the same
interpreter, and the medians are compared. Target: ≤ 1.3×.

    .venv/bin/python bench/hooks_fast_path.py [--runs 60]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bridge import hook_settings

CHANNEL = "100000000000000003"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        env, project = setup(tmp)
        baseline = f"{sys.executable} -c pass"
        print(f"interpreter: {sys.executable}  runs per case: {runs}")
        print(f"{'hook':<14} {'case':<26} {'median ms':>9} {'baseline':>9} {'ratio':>6}")
        for event, (script, _timeout) in hook_settings.HOOKS.items():
            command = hook_settings.hook_command(script)
            for case, case_env, cwd in (
                ("unmapped cwd", env, tmp),
                ("mapped, nothing to send", {**env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}, project),
            ):
                stdin = json.dumps(event_input(event, cwd)).encode()
                hook, base = side_by_side(command, baseline, stdin, case_env, cwd, runs)
                print(f"{event:<14} {case:<26} {hook:9.1f} {base:9.1f} {hook / base:6.2f}")


def setup(tmp: str) -> tuple[dict[str, str], str]:
    home = os.path.join(tmp, "bridge-home")
    project = os.path.join(tmp, "project")
    os.makedirs(home)
    os.makedirs(project)
    cfg = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "unused", "ownerUserId": "100000000000000002"},
                "projects": [{"name": "p", "channelId": CHANNEL, "projectPath": project}],
            }
        ],
    }
    with open(os.path.join(home, "config.json"), "w") as handle:
        json.dump(cfg, handle)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": tmp,
        "DISCORD_BRIDGE_HOME": home,
        "DISCORD_BRIDGE_RUNTIME_DIR": os.path.join(tmp, "runtime"),
        # Unroutable: a hook that tried the network on these paths would stall and show.
        "DISCORD_BRIDGE_API_BASE": "http://127.0.0.1:9/api/v10",
    }
    return env, project


def event_input(event: str, cwd: str) -> dict:
    common = {"session_id": "bench", "transcript_path": "/nonexistent.jsonl", "cwd": cwd}
    if event == "Stop":
        return {**common, "hook_event_name": "Stop", "stop_hook_active": False,
                "last_assistant_message": ""}  # fmt: skip
    return {**common, "hook_event_name": event, "source": "startup", "model": "x"}


def side_by_side(
    command: str, baseline: str, stdin: bytes, env: dict, cwd: str, runs: int
) -> tuple[float, float]:
    hook_times, base_times = [], []
    for _ in range(3):  # warm the page cache and the .pyc files
        run(command, stdin, env, cwd)
        run(baseline, stdin, env, cwd)
    for _ in range(runs):
        hook_times.append(run(command, stdin, env, cwd))
        base_times.append(run(baseline, stdin, env, cwd))
    return statistics.median(hook_times), statistics.median(base_times)


def run(command: str, stdin: bytes, env: dict, cwd: str) -> float:
    start = time.perf_counter()
    result = subprocess.run(["sh", "-c", command], input=stdin, env=env, cwd=cwd,
                            capture_output=True)  # fmt: skip
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0 or result.stdout:
        raise SystemExit(f"{command} misbehaved: {result.returncode} {result.stdout!r}")
    return elapsed


if __name__ == "__main__":
    main()
