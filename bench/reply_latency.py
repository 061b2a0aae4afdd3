"""The reply a user waits for: from the model's final answer to the reply at Discord.

(1) A real turn, through the real Claude Code CLI: a message posted to Discord is typed into the
session, the fake Messages API answers with a short text (served: its last byte written,
``LoggedRequest.served``), the CLI runs the Stop hook, the hook hands the reply to the bot and
the bot posts it. Measured from served to the emulator's ``message_create`` of the reply, with
the footer on (the default) and off, the owner's mention on (the default). With the footer,
also to the moment the footer is in place (the reply's last edit within ``FOOTER_SETTLE``
seconds, else its creation), and whether it is there at all. From the transcript: how long
the CLI waited for the Stop hook (``stop_hook_summary``'s ``durationMs``).

(2) The Stop hook alone (the probe of ``bench/relay_latency.py``): the installed Stop hook
command run as Claude Code runs it (``sh -c``, the event on stdin, the bot running, in the
session's tmux pane, a new wait so the reply mentions the owner), the transcript already
holding the reply's record; from the spawn to the reply at Discord and to
the hook's exit, and its CPU time (user + system, from the kernel: less at the mercy of the
machine's load than wall-clock time), next to ``python -I -S -c pass``.

``--baseline DIR`` measures another checkout beside this one (``git worktree add --detach
/tmp/before main``): its hooks, statusLine command and bot, on a rig of its own. Turns
alternate between the two rigs (and the order rotates every round), so that the machine's
load hits both alike; the load average is printed with the figures.

    .venv/bin/python bench/reply_latency.py [--runs 20] [--stop-runs 20] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from bridge_testkit import BridgeRig, bench_rig, hook_input, is_status, percentile
from fake_anthropic import text
from fake_anthropic.claude_cli import claude_available, screen_is_idle

PROJECT = "project-a"
FOOTER_SETTLE = 3.5  # seconds after the reply in which an edit bringing its footer counts
SESSION = "0b5e1c6a-7e57-4f00-9a00-000000000001"  # the probe's session (a UUID, as the CLI's)


@dataclass
class Side:
    name: str
    checkout: Path | None
    rig: BridgeRig
    figures: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, row: str, value: float) -> None:
        self.figures.setdefault(row, []).append(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20, help="real turns per side and footer")
    parser.add_argument("--stop-runs", type=int, default=20, help="probe runs per side, footer")
    parser.add_argument("--baseline", type=Path, help="a checkout to measure beside this one")
    args = parser.parse_args()
    if not claude_available():
        raise SystemExit("the pinned Claude Code CLI is missing (./scripts/test.sh installs it)")
    load0 = os.getloadavg()
    with contextlib.ExitStack() as stack:
        sides = []
        for name, checkout in (("before", args.baseline), ("after", None)):
            if name == "before" and checkout is None:
                continue
            rig = stack.enter_context(bench_rig(f"reply-bench-{name}-", projects=1))
            sides.append(Side(name, checkout.resolve() if checkout else None, rig))
        for side in sides:
            set_up(side)
        for side in sides:  # the first turn starts Claude Code; the session's first reply
            real_turn(side, footer=True, count=False)
        kinds = (("on", True, False), ("off", False, False), ("first", True, True))
        cases = [(side, kind) for kind in kinds for side in sides]
        for round_ in range(args.runs):
            shift = round_ % len(cases)
            for side, (_, footer, fresh) in cases[shift:] + cases[:shift]:
                real_turn(side, footer, fresh=fresh)
            print(f"round {round_ + 1}/{args.runs}, load {os.getloadavg()[0]:.1f}", flush=True)
        for round_ in range(args.stop_runs + 2):  # 2 warm-ups: page cache, .pyc files
            for side, footer in [(side, footer) for footer in (True, False) for side in sides]:
                probe(side, footer, count=round_ >= 2)
    report(sides, load0, os.getloadavg())


def set_up(side: Side) -> None:
    """The checkout's hooks and bot; the owner's mention on, as by default."""
    rig = side.rig
    rig.install_hooks(side.checkout)
    write_config(rig, footer=True)
    rig.start_bot(checkout=side.checkout)


def write_config(rig: BridgeRig, footer: bool) -> None:
    raw = rig.config()
    raw.pop("notifications")  # the rig turns the mention off; the default is on
    raw["replies"] = {"footer": footer}
    rig.write_config(raw)


# --- (1) a real turn -------------------------------------------------------------------------


def real_turn(side: Side, footer: bool, count: bool = True, fresh: bool = False) -> None:
    """One turn; ``fresh``: the first of a new conversation (``/clear`` first), whose footer
    no statusLine has reported yet."""
    rig = side.rig
    write_config(rig, footer)
    if fresh:
        clear(rig)
    token = uuid.uuid4().hex[:10]
    reply = f"reply {token}"
    rig.api.script(text(reply))
    logged = len(rig.api.log)
    since = rig.discord.mark()
    sent = rig.post(f"question {token}", PROJECT)
    created = reply_record(rig, since, reply)
    served = [e.served for e in rig.api.log[logged:] if e.kind == "main" and e.served]
    rig.wait_reaction(sent, timeout=30)
    pane = rig.pane(PROJECT)
    assert pane is not None
    rig.tmux.wait_for(pane.pane_id, screen_is_idle, timeout=30, poll=0.05)
    time.sleep(max(0.0, created["t"] + FOOTER_SETTLE - time.monotonic()))
    message_id = created["message"]["id"]
    edits = [
        r
        for r in rig.discord.records(since=since, kind="message_update")
        if r["message"]["id"] == message_id and r["t"] <= created["t"] + FOOTER_SETTLE
    ]
    final = edits[-1] if edits else created
    if not count:
        return
    if not served:
        side.notes.append(f"{reply}: the fake API logged no served answer")
        return
    answer = served[-1]
    label = ("on, a conversation's first reply" if fresh else "on") if footer else "off"
    side.add(f"answer → reply at Discord, footer {label}", (created["t"] - answer) * 1000)
    if footer:
        side.add(f"answer → footer in place, footer {label}", (final["t"] - answer) * 1000)
        side.add(f"replies edited for their footer, footer {label}", 100.0 if edits else 0.0)
        last_line = final["message"]["content"].rsplit("\n", 1)[-1]
        if not (last_line.startswith("-# ") and " · ctx " in last_line):
            side.notes.append(f"{reply}: no footer: {final['message']['content']!r}")
    duration = stop_hook_duration(rig)
    if duration is not None:
        side.add(f"Stop hook, as the CLI waited for it, footer {label}", duration)


def reply_record(rig: BridgeRig, since: int, reply: str, timeout: float = 90.0) -> dict:
    """The emulator's record of the reply (not of the turn's status message, which shows the
    streamed text too)."""
    while True:
        record = rig.discord.wait(
            since=since,
            kind="message_create",
            channel_id=rig.ids[PROJECT],
            content_contains=reply,
            timeout=timeout,
        )
        if not is_status(record["message"]):
            return record
        since = record["seq"]


def clear(rig: BridgeRig) -> None:
    """``/clear`` from Discord: a new conversation (a new session id, no statusLine yet)."""
    record = rig.state_dir / "sessions" / f"{rig.ids[PROJECT]}.json"
    before = json.loads(record.read_text())["session_id"]
    rig.discord.run_command(rig.ids[PROJECT], "clear", timeout=30)
    deadline = time.monotonic() + 30
    while json.loads(record.read_text()).get("session_id") == before:
        if time.monotonic() > deadline:
            raise SystemExit(f"/clear started no new session:\n{rig.diagnostics(PROJECT)}")
        time.sleep(0.05)
    pane = rig.pane(PROJECT)
    assert pane is not None
    rig.tmux.wait_for(pane.pane_id, screen_is_idle, timeout=30, poll=0.05)


def stop_hook_duration(rig: BridgeRig) -> float | None:
    """The last ``stop_hook_summary``'s hook duration in the session's transcript."""
    transcripts = sorted(
        (rig.claude_home / ".claude" / "projects").glob("*/*.jsonl"),
        key=lambda path: path.stat().st_mtime,
    )
    if not transcripts:
        return None
    for line in reversed(transcripts[-1].read_text(errors="replace").splitlines()):
        if '"stop_hook_summary"' not in line:
            continue
        try:
            infos = json.loads(line).get("hookInfos") or []
        except ValueError:
            continue
        durations = [i.get("durationMs") for i in infos if isinstance(i, dict)]
        durations = [d for d in durations if isinstance(d, int | float)]
        return float(max(durations)) if durations else None
    return None


# --- (2) the Stop hook alone -----------------------------------------------------------------


def probe(side: Side, footer: bool, count: bool) -> None:
    rig = side.rig
    write_config(rig, footer)
    settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    channel = rig.ids[PROJECT]
    env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": channel, **in_the_pane(rig)}
    cwd = rig.projects[PROJECT]
    with contextlib.suppress(FileNotFoundError):  # a new wait, as after the user's prompt:
        (rig.runtime_dir / "waits" / SESSION).unlink()  # the reply mentions the owner
    content = f"Stop hook reply {uuid.uuid4().hex}"
    transcript = rig.tmp / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps(assistant_record(content)) + "\n")
    event = hook_input(
        "Stop",
        session_id=SESSION,
        transcript_path=transcript,
        cwd=cwd,
        last_assistant_message=content,
    )
    since = rig.discord.mark()
    posted, exited, cpu = run_hook(["sh", "-c", command], json.dumps(event).encode(), env, cwd)
    record = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=channel,
        content_contains=content,
        timeout=10,
    )
    python = shlex.split(command)[0]
    _, base_exited, base_cpu = run_hook([python, "-I", "-S", "-c", "pass"], b"", env, cwd)
    if not count:
        return
    label = "on" if footer else "off"
    side.add(f"probe: Stop hook → reply at Discord, footer {label}", (record["t"] - posted) * 1000)
    side.add(f"probe: Stop hook, spawn → exit, footer {label}", exited)
    side.add(f"probe: Stop hook CPU, footer {label}", cpu)
    side.add("probe: python -I -S -c pass, spawn → exit", base_exited)
    side.add("probe: python -I -S -c pass, CPU", base_cpu)


def in_the_pane(rig: BridgeRig) -> dict[str, str]:
    """``TMUX`` and ``TMUX_PANE`` as a hook of the session's Claude Code gets them: the hook
    asks that tmux server whether the owner sits at the terminal before it mentions them."""
    pane = rig.pane(PROJECT)
    assert pane is not None
    server = Path(f"/tmp/tmux-{os.getuid()}") / rig.socket
    return {"TMUX": f"{server},0,0", "TMUX_PANE": pane.pane_id}


def assistant_record(reply: str) -> dict:
    """The transcript's record of ``reply`` as the CLI writes it (the footer's source)."""
    return {
        "type": "assistant",
        "isSidechain": False,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "message": {
            "id": f"msg_{uuid.uuid4().hex[:12]}",
            "model": "claude-opus-5-5",
            "role": "assistant",
            "content": [{"type": "text", "text": reply}],
            "usage": {
                "input_tokens": 12_000,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 9,
            },
        },
    }


def run_hook(argv: list[str], stdin: bytes, env: dict, cwd: Path) -> tuple[float, float, float]:
    """Run a command to its end: its start (``time.monotonic()``), ms to its exit, and the
    CPU ms it and its children took (the kernel's count for the children this process reaped:
    nothing else is reaped meanwhile)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, timeout=60)
    end = time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0 or result.stdout:
        raise SystemExit(f"{argv[:3]} misbehaved: {result.returncode} {result.stdout!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return start, (end - start) * 1000, cpu * 1000


# --- report ----------------------------------------------------------------------------------


def report(sides: list[Side], load0: tuple[float, ...], load1: tuple[float, ...]) -> None:
    rows: list[str] = []
    for side in sides:
        rows += [row for row in side.figures if row not in rows]
    width = 24
    print()
    print(f"{'p50 / p95 ms (n)':<72}" + "".join(f"{s.name:>{width}}" for s in sides))
    for row in rows:
        cells = []
        for side in sides:
            values = side.figures.get(row, [])
            if not values:
                cells.append("-")
            elif row.startswith("replies edited"):
                cells.append(f"{sum(values) / len(values):.0f} %")
            else:
                p50, p95 = percentile(values, 50), percentile(values, 95)
                cells.append(f"{p50:.0f} / {p95:.0f} ({len(values)})")
        print(f"{row:<72}" + "".join(f"{cell:>{width}}" for cell in cells))
    print(
        f"load average: {load0[0]:.1f} at the start, {load1[0]:.1f} at the end "
        f"(nproc {os.cpu_count()})"
    )
    for side in sides:
        for note in side.notes:
            print(f"{side.name}: {note}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted; cleaned up")
        raise SystemExit(130) from None
