"""What the turn's git snapshots add to UserPromptSubmit and Stop (issue 12 §1).

Each round runs the installed UserPromptSubmit command, changes one file, then the Stop
command (an empty reply: no network), as Claude Code would, for a bridge session whose
project is (a) not a git repository (no snapshot: the hooks as before), (b) a git
repository of ``--files`` files, (c) the same with ten times as many. The difference of the
medians is what the snapshots cost.

With ``--reply``: Stop hook start → its reply at Discord, the bot running (the hand-off), on
the end-to-end rig (emulator, bot; no Claude Code), for a project outside git and one of
``--files`` files, each round after a UserPromptSubmit took the turn's first snapshot. The
rig has the reply footer off: the comparison has nothing to overlap with (the worst case).

    .venv/bin/python bench/turn_changes.py [--runs 30] [--files 200] [--reply]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

from hooks_fast_path import CHANNEL, run, setup

from bridge.claude import settings as claude_settings
from bridge_testkit import hook_input


def make_repo(path: str, files: int) -> None:
    os.makedirs(path, exist_ok=True)
    for i in range(files):
        folder = os.path.join(path, f"dir{i % 20}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"file{i}.py"), "w") as handle:
            handle.write("".join(f"line {n} of file {i}\n" for n in range(100)))
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start"],
    ):
        subprocess.run(["git", "-C", path, *args], check=True)


def one_round(env: dict, cwd: str, i: int) -> tuple[float, float]:
    """UserPromptSubmit, one file changed, Stop: the two hooks' times in ms."""
    common = {"session_id": "bench", "transcript_path": "/nonexistent.jsonl", "cwd": cwd}
    prompt_in = json.dumps(hook_input("UserPromptSubmit", **common, prompt="go")).encode()
    stop_in = json.dumps(hook_input("Stop", **common, last_assistant_message="")).encode()
    first = run(claude_settings.hook_command("session_event.py"), prompt_in, env, cwd)
    with open(os.path.join(cwd, "changed.txt"), "a") as handle:
        handle.write(f"round {i}\n")
    return first, run(claude_settings.hook_command("stop.py"), stop_in, env, cwd)


def point_project_at(env: dict, path: str) -> None:
    """The channel maps to one project path: point it at this case's directory."""
    config = os.path.join(env["DISCORD_BRIDGE_HOME"], "config.json")
    with open(config) as handle:
        raw = json.load(handle)
    raw["servers"][0]["projects"][0]["projectPath"] = path
    with open(config, "w") as handle:
        json.dump(raw, handle)


def reply_latency(runs: int, files: int) -> None:
    """Stop hook spawn → the reply's ``message_create`` at the emulator, bot running."""
    import time
    import uuid

    from bridge_testkit import bench_rig, percentile

    with bench_rig("turn-changes-bench-") as rig:
        make_repo(str(rig.projects["project-a"]), files)
        settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
        hooks = {
            event: next(h["command"] for g in settings["hooks"][event] for h in g["hooks"])
            for event in ("UserPromptSubmit", "Stop")
        }
        rig.start_bot()
        cases = {"project-b": "outside git", "project-a": f"git, {files} files"}
        times: dict[str, list[float]] = {name: [] for name in cases}
        for i in range(runs + 3):
            for project in cases:
                channel, cwd = rig.ids[project], str(rig.projects[project])
                env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": channel}
                common = {
                    "session_id": f"bench-{project}",
                    "cwd": cwd,
                    "transcript_path": "/nonexistent.jsonl",
                }
                prompt = hook_input("UserPromptSubmit", **common, prompt="go")
                run(hooks["UserPromptSubmit"], json.dumps(prompt).encode(), env, cwd)
                with open(os.path.join(cwd, "changed.txt"), "a") as handle:
                    handle.write(f"round {i}\n")
                content = f"reply {i} {uuid.uuid4().hex}"
                stop = hook_input("Stop", **common, last_assistant_message=content)
                since = rig.discord.mark()
                start = time.monotonic()
                run(hooks["Stop"], json.dumps(stop).encode(), env, cwd)
                record = rig.discord.wait(
                    since=since,
                    kind="message_create",
                    channel_id=channel,
                    content_contains=content,
                    timeout=10,
                )
                assert ("📝" in record["message"]["content"]) == (project == "project-a")
                if i >= 3:
                    times[project].append((record["t"] - start) * 1000)
        print(f"{'Stop hook → reply at Discord':<40} {'p50 ms':>8} {'p95 ms':>8}")
        for project, name in cases.items():
            values = times[project]
            print(f"{name:<40} {percentile(values, 50):8.0f} {percentile(values, 95):8.0f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--reply", action="store_true", help="Stop hook → reply at Discord")
    args = parser.parse_args()
    if args.reply:
        reply_latency(args.runs, args.files)
        return
    with tempfile.TemporaryDirectory() as tmp:
        env, project = setup(tmp)
        mapped = {**env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
        cases = [("no git", project)]
        for files in (args.files, args.files * 10):
            path = os.path.join(tmp, f"repo{files}")
            make_repo(path, files)
            cases.append((f"git, {files} files", path))
        times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _ in cases}
        for i in range(args.runs + 3):  # the cases interleaved: the machine's load hits all
            for name, path in cases:
                point_project_at(env, path)
                first, last = one_round(mapped, path, i)
                if i >= 3:  # warm-up
                    times[name][0].append(first)
                    times[name][1].append(last)
        print(f"runs: {args.runs}   median ms (p90)")
        print(f"{'project':<20} {'UserPromptSubmit':>18} {'Stop':>18}")
        base = None
        for name, (prompts, stops) in times.items():
            medians = (statistics.median(prompts), statistics.median(stops))
            extra = ""
            if base is None:
                base = medians
            else:
                extra = f"   +{medians[0] - base[0]:.1f} / +{medians[1] - base[1]:.1f} ms"
            print(
                f"{name:<20} {medians[0]:9.1f} ({_p90(prompts):5.1f}) {medians[1]:9.1f} "
                f"({_p90(stops):5.1f}){extra}"
            )


def _p90(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.9)]


if __name__ == "__main__":
    main()
