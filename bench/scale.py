"""Scale on one machine: N sessions at once (default 20) on the end-to-end rig (the emulator
enforcing Discord's rate limits, the fake Messages API, the real Claude Code CLI, the bot).

For each bot measured (``--baseline DIR`` adds "today": the bot of another checkout, e.g.
``git worktree add /tmp/today <commit>``, run on the same rig; its columns print first):

- start: one message posted to each of the N channels at the same moment starts N sessions;
  time from the message to its ✅ (Claude Code started, prompt ready, message typed);
- idle: the bot's RSS (VmRSS) and CPU (utime+stime of the bot and its reaped children, the
  tmux clients, from /proc/<pid>/stat) over ``--idle`` seconds with N idle sessions;
- busy: ``--rounds`` rounds of one message to every channel at the same moment; message
  (the emulator's MESSAGE_CREATE) → the bot's ✅ reaction (typed into the pane and Enter
  pressed), p50/p95, the bot's CPU and RSS meanwhile and the CPU of the Claude Code
  processes (every process under the tmux server), which compete for the same cores;
- burst: 200 replies spooled into the outbox (10 per channel for 20 channels) and drained by
  the bot: time to the last one at Discord against the bound Discord's limits set
  (per channel 5 messages / 5 s, global 50/s), each delivered once and in order per channel,
  and the 429s the emulator answered (per route and global).

    .venv/bin/python bench/scale.py [--sessions 20] [--rounds 3] [--baseline /tmp/today]

Not part of the test suite (it takes minutes: 2 × N Claude Code processes on this machine).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bridge.discord.outbox import Outbox
from bridge.discord.post import Post, message_payload
from bridge_testkit import BridgeRig, bench_rig, percentile
from bridge_testkit.rig import TMUX_SESSION
from fake_anthropic.claude_cli import box_shows, claude_available, screen_is_idle

TICK = os.sysconf("SC_CLK_TCK")
BURST_PER_CHANNEL = 10
CHANNEL_LIMIT = (5, 5.0)  # the emulator's message bucket per channel (Discord's, observed)
GLOBAL_LIMIT = 50  # requests per second per bot token
BRIDGE_SHARE = "box + type"  # the bridge's own share of a message (the rest is Claude Code's)


@dataclass
class Figures:
    start_ms: list[float] = field(default_factory=list)
    busy_ms: list[float] = field(default_factory=list)
    idle_rss_mb: float = 0.0
    idle_cpu_pct: float = 0.0
    busy_rss_mb: float = 0.0
    busy_cpu_pct: float = 0.0
    claude_cpu_pct: float = 0.0  # of one core, all Claude Code processes, during the busy rounds
    claude_idle_pct: float = 0.0  # the same with every session idle
    tmux_cpu_pct: float = 0.0  # the tmux server (it runs every command the bot sends)
    start_claude_s: float = 0.0  # CPU seconds all Claude Code processes took to start
    tmux_cmd_ms: list[float] = field(default_factory=list)  # one tmux command, during busy
    tmux_control_ms: list[float] = field(default_factory=list)  # the same over ``tmux -C``
    phases_ms: dict[str, list[float]] = field(default_factory=dict)  # busy typing, from the log
    burst_s: float = math.nan
    burst_ok: str = ""
    burst_429: str = ""
    notes: list[str] = field(default_factory=list)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20, help="mapped channels (1-26)")
    parser.add_argument("--rounds", type=int, default=3, help="busy rounds (N messages each)")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle sampling")
    parser.add_argument("--baseline", type=Path, help="a checkout with today's bridge")
    parser.add_argument("--baseline-only", action="store_true", help="measure only --baseline")
    parser.add_argument(
        "--tmux-control", choices=("on", "off"), help="set tmux.controlMode for the new bot"
    )
    parser.add_argument("--claude-nice", type=int, help="set claudeNice for the new bot")
    parser.add_argument(
        "--burst-only", action="store_true", help="only the burst (no Claude Code sessions)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure each bot this often, alternating (today, new, new, today…): the load "
        "of a shared machine drifts over the minutes one measurement takes",
    )
    args = parser.parse_args()
    if not claude_available():
        raise SystemExit("the pinned Claude Code CLI is missing (./scripts/test.sh installs it)")
    bots: list[tuple[str, Path | None]] = []
    if args.baseline:
        bots.append(("today", args.baseline.resolve()))
    if not (args.baseline and args.baseline_only):
        bots.append(("new", None))
    measured: dict[str, list[Figures]] = {name: [] for name, _ in bots}
    loads = [os.getloadavg()[0]]
    for repeat in range(args.repeat):
        for name, checkout in bots if repeat % 2 == 0 else bots[::-1]:
            measured[name].append(measure(args, checkout))
            loads.append(os.getloadavg()[0])
    report(args, [(name, merged(figures)) for name, figures in measured.items()], loads)


def merged(runs: list[Figures]) -> Figures:
    """The figures of several measurements of one bot: samples pooled, the rest averaged."""
    if len(runs) == 1:
        return runs[0]
    fig = Figures()
    for name, value in vars(runs[0]).items():
        values = [getattr(run, name) for run in runs]
        if isinstance(value, list):
            setattr(fig, name, [x for v in values for x in v])
        elif isinstance(value, dict):
            setattr(fig, name, {k: [x for v in values for x in v.get(k, [])] for k in value})
        elif isinstance(value, float):
            setattr(fig, name, sum(values) / len(values))
        else:  # the burst's outcome: one line per measurement
            setattr(fig, name, "; ".join(values))
    return fig


def measure(args: argparse.Namespace, checkout: Path | None) -> Figures:
    fig = Figures()
    label = checkout or "this checkout"
    with bench_rig("scale-bench-", projects=args.sessions, rate_limits=True) as rig:
        print(
            f"--- bot of {label}: {args.sessions} sessions, load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if checkout is None and (args.tmux_control or args.claude_nice is not None):
            raw = rig.config()
            if args.tmux_control:
                raw["servers"][0]["tmux"]["controlMode"] = args.tmux_control == "on"
            if args.claude_nice is not None:
                raw["servers"][0]["claudeNice"] = args.claude_nice
            rig.write_config(raw)
        rig.start_bot(checkout=checkout)
        pid = rig.bot.pid
        names = list(rig.projects)
        if args.burst_only:
            burst(rig, names, fig)
            print(f"burst: {fig.burst_s:.1f} s ({fig.burst_ok}, {fig.burst_429})", flush=True)
            return fig

        fig.start_ms = fire(rig, names, "start", fig.notes)
        fig.start_claude_s = claude_cpu(rig)  # the tmux server started with the sessions
        settle(rig, names, fig.notes)
        print(f"started: p50 {percentile(fig.start_ms, 50):.0f} ms", flush=True)

        time.sleep(2)
        cpu0, claude0, t0 = bot_cpu(pid), claude_cpu(rig), time.monotonic()
        time.sleep(args.idle)
        fig.idle_cpu_pct = (bot_cpu(pid) - cpu0) / (time.monotonic() - t0) * 100
        fig.claude_idle_pct = (claude_cpu(rig) - claude0) / (time.monotonic() - t0) * 100
        fig.idle_rss_mb = rss_mb(pid)

        rss, bot_busy, claude_busy, tmux_busy, wall = 0.0, 0.0, 0.0, 0.0, 0.0
        log_start = rig.bot_log.stat().st_size
        server = tmux_server_pid(rig)
        for round_ in range(args.rounds):
            cpu0, claude0, t0 = bot_cpu(pid), claude_cpu(rig), time.monotonic()
            tmux0 = bot_cpu(server)
            with TmuxProbe(rig) as probe:
                fig.busy_ms += fire(rig, names, f"round {round_ + 1}", fig.notes)
            fig.tmux_cmd_ms += probe.samples
            fig.tmux_control_ms += probe.control_samples
            wall += time.monotonic() - t0
            bot_busy += bot_cpu(pid) - cpu0
            claude_busy += claude_cpu(rig) - claude0
            tmux_busy += bot_cpu(server) - tmux0
            rss = max(rss, rss_mb(pid))
            settle(rig, names, fig.notes)
        fig.busy_rss_mb = rss
        fig.phases_ms = typing_phases(rig.bot_log.read_text(errors="replace")[log_start:])
        fig.busy_cpu_pct = bot_busy / wall * 100
        fig.claude_cpu_pct = claude_busy / wall * 100
        fig.tmux_cpu_pct = tmux_busy / wall * 100
        print(f"busy: p95 {percentile(fig.busy_ms, 95):.0f} ms", flush=True)

        burst(rig, names, fig)
        print(f"burst: {fig.burst_s:.1f} s ({fig.burst_ok})", flush=True)
        if fig.notes:  # kept: the rig's directory goes with it
            kept = Path(tempfile.gettempdir()) / f"scale-bench-bot-{os.getpid()}-{id(fig)}.log"
            shutil.copy(rig.bot_log, kept)
            fig.notes.append(f"bot log kept in {kept}")
    return fig


# --- Discord → pane under load ----------------------------------------------------------------


def fire(rig: BridgeRig, names: list[str], what: str, notes: list[str]) -> list[float]:
    """One message to every channel at the same moment; ms from each MESSAGE_CREATE to its ✅."""
    since = rig.discord.mark()
    rig.last_post_mark = since
    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        sent = list(pool.map(lambda n: rig.discord.post_message(rig.ids[n], f"{what} {n}"), names))
    ids = {m["id"] for m in sent}
    deadline = time.monotonic() + 180
    while True:
        reacted = {
            r["message_id"]: r["t"]
            for r in rig.discord.records(since=since, kind="reaction_add")
            if r["message_id"] in ids and r["emoji"] == "✅"
        }
        if len(reacted) == len(ids) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    created = {
        r["message_id"]: r["t"]
        for r in rig.discord.records(since=since, kind="user_message")
        if r["message_id"] in ids
    }
    missing = len(ids) - len(reacted)
    if missing:
        notes.append(f"{what}: {missing} message(s) got no ✅ within 180 s")
    return [(reacted[i] - created[i]) * 1000 for i in reacted]


def settle(rig: BridgeRig, names: list[str], notes: list[str]) -> None:
    """Wait until every session has answered (its reply at Discord) and is idle again. A prompt
    still in the input box lost its Enter: press it for it, and note it."""
    since = rig.last_post_mark
    for name in names:
        pane = rig.pane(name)
        if pane is None:
            notes.append(f"{name}: no pane")
            continue
        try:
            rig.wait_bot_message(name, timeout=90, since=since)
        except AssertionError:
            screen = rig.tmux.capture(pane.pane_id)
            if box_shows(screen, name):
                notes.append(f"{name}: lost Enter, pressed by the bench")
                rig.tmux.press(pane.pane_id, "Enter")
            else:
                notes.append(f"{name}: no reply within 90 s")
        try:
            rig.tmux.wait_for(pane.pane_id, screen_is_idle, timeout=60, poll=0.2)
        except Exception:
            notes.append(f"{name}: not idle after 60 s")


class TmuxProbe:
    """While busy: the round trip of one tmux command every 0.2 s from a thread of this
    process, run as the bot runs each one today (a ``tmux`` process) and, for comparison, over
    one persistent control-mode connection (``tmux -C``: no process per command)."""

    def __init__(self, rig: BridgeRig) -> None:
        self.base = ["tmux", "-L", rig.socket]
        self.samples: list[float] = []
        self.control_samples: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.control = subprocess.Popen(
            [*self.base, "-C", "attach", "-t", f"={TMUX_SESSION}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            errors="backslashreplace",  # a notification may cut a character (the probe died)
        )
        self.command("refresh-client -f no-output")  # no %output of 20 busy panes

    def command(self, line: str) -> None:
        """Send one command line and read up to its ``%end``/``%error``."""
        assert self.control.stdin and self.control.stdout
        self.control.stdin.write(line + "\n")
        self.control.stdin.flush()
        begun = False
        for out in self.control.stdout:
            begun = begun or out.startswith("%begin")
            if begun and out.startswith(("%end", "%error")):
                return

    def run(self) -> None:
        argv = [*self.base, "display-message", "-p", "-t", TMUX_SESSION, "x"]
        while not self.stop.wait(0.2):
            start = time.monotonic()
            subprocess.run(argv, capture_output=True)
            self.samples.append((time.monotonic() - start) * 1000)
            start = time.monotonic()
            self.command(f"display-message -p -t {TMUX_SESSION} x")
            self.control_samples.append((time.monotonic() - start) * 1000)

    def __enter__(self) -> TmuxProbe:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()
        self.control.kill()
        self.control.wait()


def typing_phases(log: str) -> dict[str, list[float]]:
    """The bot's "typed message … in N ms (box …, type …, echo …, enter …)" lines: where each
    busy message's time went (the rest of "total" is finding or starting the pane)."""
    phases: dict[str, list[float]] = {}
    for match in re.finditer(r"typed message \d+ into .*? in (\d+) ms \((.*)\)", log):
        phases.setdefault("total", []).append(float(match[1]))
        message = {}
        for part in match[2].split(", "):
            name, _, ms = part.rpartition(" ")
            message[name] = float(ms)
            phases.setdefault(name, []).append(float(ms))
        # What the message waits for the bridge itself: the box checked and the text typed,
        # summed per message (a sum of per-phase percentiles says more than any message waits).
        phases.setdefault(BRIDGE_SHARE, []).append(message.get("box", 0) + message.get("type", 0))
    return phases


# --- burst of replies -------------------------------------------------------------------------


def burst(rig: BridgeRig, names: list[str], fig: Figures) -> None:
    outbox = Outbox(str(rig.state_dir / "outbox"))
    before = rig.discord.counters()
    since = rig.discord.mark()
    start = time.monotonic()
    expected: dict[str, list[str]] = {}
    for name in names:
        channel = rig.ids[name]
        expected[channel] = [f"burst {name} {i:02d}" for i in range(BURST_PER_CHANNEL)]
        for content in expected[channel]:
            outbox.enqueue(channel, "e2e", Post(message_payload(content)))
    total = len(names) * BURST_PER_CHANNEL
    deadline = start + 300
    while True:
        records = [
            r
            for r in rig.discord.records(since=since, kind="message_create")
            if r["message"]["content"].startswith("burst ")
        ]
        if len(records) >= total or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    fig.burst_s = (records[-1]["t"] - start) if records else math.nan
    got: dict[str, list[str]] = {}
    for r in records:
        got.setdefault(r["message"]["channel_id"], []).append(r["message"]["content"])
    in_order = all(got.get(c, []) == want for c, want in expected.items())
    fig.burst_ok = f"{len(records)}/{total}" + (
        " once, in order" if in_order and len(records) == total else " NOT in order/once"
    )
    after = rig.discord.counters()
    route = "429 POST /channels/{channel_id}/messages"
    per_route = after.get(route, 0) - before.get(route, 0)
    global_ = after.get("429 global", 0) - before.get("429 global", 0)
    fig.burst_429 = f"{per_route} per-channel, {global_} global"


def burst_bound(channels: int) -> float:
    """Seconds Discord's limits need at least for the burst: a channel's messages past its
    first bucket wait a window after its first one, and all of those wait their turn under
    the global limit (so at least ``window`` plus the last round's messages at 50/s)."""
    limit, window = CHANNEL_LIMIT
    rounds = math.ceil(BURST_PER_CHANNEL / limit)
    last_round = channels * (BURST_PER_CHANNEL - (rounds - 1) * limit)
    if rounds == 1:
        return channels * BURST_PER_CHANNEL / GLOBAL_LIMIT
    return (rounds - 1) * window + last_round / GLOBAL_LIMIT


# --- /proc ------------------------------------------------------------------------------------


def stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def bot_cpu(pid: int) -> float:
    """CPU seconds of the bot and its reaped children (a tmux client per libtmux command)."""
    fields = stat_fields(pid)
    return sum(int(x) for x in fields[11:15]) / TICK


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return math.nan


def tmux_server_pid(rig: BridgeRig) -> int:
    out = subprocess.run(
        ["tmux", "-L", rig.socket, "display-message", "-p", "-t", TMUX_SESSION, "#{pid}"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return int(out) if out.isdigit() else -1


def claude_cpu(rig: BridgeRig) -> float:
    """CPU seconds of every live process under the rig's tmux server (Claude Code, its hooks
    and tools), with their reaped children."""
    server = tmux_server_pid(rig)
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                children.setdefault(int(stat_fields(int(entry))[1]), []).append(int(entry))
            except (OSError, IndexError):
                continue
    total, todo = 0, list(children.get(server, []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            total += sum(int(x) for x in stat_fields(pid)[11:15])
        except OSError:
            continue
    return total / TICK


# --- report -----------------------------------------------------------------------------------


def phase_figures(phase: str) -> Callable[[Figures], str]:
    def figures(f: Figures) -> str:
        values = f.phases_ms.get(phase)
        if not values:
            return "-"
        return f"{percentile(values, 50):.0f} / {percentile(values, 95):.0f}"

    return figures


def burst_s(f: Figures) -> str:
    return f"{f.burst_s:.1f}"


def report(args: argparse.Namespace, runs: list[tuple[str, Figures]], loads: list[float]) -> None:
    n = args.sessions
    bound = burst_bound(n)

    def pct(values: list[float], p: float, digits: int = 0) -> str:
        return f"{percentile(values, p):.{digits}f}" if values else "-"

    rows = [
        (f"{n} sessions started at once → ✅, p50 ms", lambda f: pct(f.start_ms, 50), ""),
        (f"{n} sessions started at once → ✅, p95 ms", lambda f: pct(f.start_ms, 95), ""),
        ("  Claude Code CPU until then, s", lambda f: f"{f.start_claude_s:.0f}", ""),
        ("bot RSS idle, MB", lambda f: f"{f.idle_rss_mb:.0f}", "≤ 150"),
        ("bot CPU idle, % of a core", lambda f: f"{f.idle_cpu_pct:.2f}", "≤ 1"),
        ("Claude Code CPU idle, % of a core", lambda f: f"{f.claude_idle_pct:.0f}", ""),
        (f"message → ✅, {n} busy, p50 ms", lambda f: pct(f.busy_ms, 50), ""),
        (f"message → ✅, {n} busy, p95 ms", lambda f: pct(f.busy_ms, 95), "≤ 200"),
        ("bot RSS busy, MB (max)", lambda f: f"{f.busy_rss_mb:.0f}", "≤ 150"),
        ("bot CPU busy, % of a core", lambda f: f"{f.busy_cpu_pct:.0f}", ""),
        ("Claude Code CPU busy, % of a core", lambda f: f"{f.claude_cpu_pct:.0f}", ""),
        ("tmux server CPU busy, % of a core", lambda f: f"{f.tmux_cpu_pct:.0f}", ""),
        ("one tmux command busy, p50 ms", lambda f: pct(f.tmux_cmd_ms, 50), ""),
        ("one tmux command busy, p95 ms", lambda f: pct(f.tmux_cmd_ms, 95), ""),
        ("  the same over tmux -C, p50 ms", lambda f: pct(f.tmux_control_ms, 50, 1), ""),
        ("  the same over tmux -C, p95 ms", lambda f: pct(f.tmux_control_ms, 95, 1), ""),
        *(
            (f"  typing: {phase}, p50 / p95 ms", phase_figures(phase), "")
            for phase in ("total", "box", "type", "echo", "enter")
        ),
        (
            f"  the bridge's share ({BRIDGE_SHARE}) per message, p50 / p95 ms",
            phase_figures(BRIDGE_SHARE),
            "p95 ≤ 50",
        ),
        (f"burst of {n * BURST_PER_CHANNEL} replies, s", burst_s, f"≥ {bound:.1f} (bound)"),
        ("burst delivery", lambda f: f.burst_ok, ""),
        ("burst 429s", lambda f: f.burst_429, ""),
    ]
    names = [name for name, _ in runs]
    width = max(len(f.burst_429) for _, f in runs) + 2
    print()
    print(f"{'path':<58}" + "".join(f"{name:>{width}}" for name in names) + "  target")
    for title, get, target in rows:
        print(f"{title:<58}" + "".join(f"{get(f):>{width}}" for _, f in runs) + f"  {target}")
    print(
        f"({len(runs[-1][1].busy_ms)} busy messages per column; nproc {os.cpu_count()}; "
        f"load average {' → '.join(f'{load:.1f}' for load in loads)})"
    )
    for name, f in runs:
        for note in f.notes:
            print(f"{name}: {note}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted; cleaned up")
        raise SystemExit(130) from None
