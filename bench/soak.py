"""A soak with faults: N messages over two channels and a thread, through the real bot, the real
Claude Code CLI in tmux and the Discord emulator, while things break.

Before each message one fault may strike (a seeded random choice, so a run can be repeated):

- ``down``: the bot is SIGKILLed, the message is sent while it is down, the bot starts again
  (it must catch up on the message: Discord does not replay it);
- ``killed``: the message is sent, then the bot is SIGKILLed a random moment later (before it
  typed, while Claude works, while the reply is handed over) and started again;
- ``rest-down``: Discord's REST refuses connections (or answers 503) for a few seconds around
  the message (the gateway stays up, as when Discord's API has an outage): the reply waits in
  the outbox;
- ``tmux``: once in a run, the tmux server is killed (every Claude Code with it); the message
  must start its session again, resuming the conversation;
- ``calm``: nothing.

Each message is unique ("soak 017 …"), answered by the fake Messages API with "Model saw: <it>".
At the end, after the last replies had time to land: per kind of fault, how many messages were
lost (never reached the model, or no reply reached Discord), typed twice (the model saw it more
than once) or posted twice (its reply is in the channel more than once), and message → reply
p50/p95.

    .venv/bin/python bench/soak.py [--messages 200] [--seed 1] [--reply-timeout 120]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from bridge_testkit import wait_until
from bridge_testkit.bench import bench_rig, percentile
from fake_anthropic import echo, last_user_text

KINDS = ("calm", "down", "killed", "rest-down", "tmux")
WEIGHTS = (55, 15, 15, 15, 0)  # tmux: once, a third of the way in
WORDS = [
    "apple",
    "birch",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "grove",
    "harbor",
    "iris",
    "juniper",
    "kelp",
    "lumen",
]


@dataclass
class Sent:
    text: str
    channel: str
    kind: str
    posted_at: float
    reply_seconds: float | None = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reply-timeout", type=float, default=120.0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with bench_rig("soak-", projects=2) as rig:
        rig.api.script(*[echo() for _ in range(args.messages * 3)])  # echoes to spare
        rig.start_bot()
        thread = rig.discord.create_thread(rig.ids["project-a"], "soak-thread")
        rig.ids["soak-thread"] = thread["id"]
        channels = ["project-a", "project-b", "soak-thread"]
        sent: list[Sent] = []
        tmux_at = args.messages // 3
        started = time.monotonic()
        for i in range(args.messages):
            kind = "tmux" if i == tmux_at else rng.choices(KINDS, WEIGHTS)[0]
            message = Sent(f"soak {i:03d} {rng.choice(WORDS)}", channels[i % 3], kind, 0.0)
            send_with_fault(rig, rng, message)
            sent.append(message)
            wait_reply(rig, message, args.reply_timeout)
            if (i + 1) % 20 == 0:
                print(f"  {i + 1} sent, {time.monotonic() - started:.0f} s", flush=True)
        time.sleep(10)  # a late duplicate would land by now
        report(rig, sent, time.monotonic() - started)


def send_with_fault(rig, rng: random.Random, message: Sent) -> None:
    def post() -> None:
        message.posted_at = time.monotonic()
        rig.post(message.text, project=message.channel)

    if message.kind == "down":
        kill_bot(rig)
        post()
        time.sleep(rng.uniform(0.5, 3.0))
        rig.start_bot(timeout=60)
    elif message.kind == "killed":
        post()
        time.sleep(rng.uniform(0.0, 3.0))
        kill_bot(rig)
        time.sleep(rng.uniform(0.2, 2.0))
        rig.start_bot(timeout=60)
    elif message.kind == "rest-down":
        rig.discord.set_outage(rng.choice(["refuse", "503"]))
        post()
        time.sleep(rng.uniform(2.0, 8.0))
        rig.discord.set_outage(None)
    elif message.kind == "tmux":
        subprocess.run(["tmux", "-L", rig.socket, "kill-server"], capture_output=True)
        post()
    else:
        post()


def kill_bot(rig) -> None:
    if rig.bot is not None:
        rig.bot.kill()
        rig.bot.wait()
        rig.bot = None


def wait_reply(rig, message: Sent, timeout: float) -> None:
    """Until the message's reply is in its channel (or ``timeout``): the next message waits,
    so the fake API's answers and the faults stay one per message."""
    want = f"Model saw: {message.text}"

    def replied() -> bool:
        return any(want in (m.get("content") or "") for m in bot_messages(rig, message.channel))

    try:
        wait_until(replied, timeout, f"the reply to {message.text!r}")
        message.reply_seconds = time.monotonic() - message.posted_at
    except (AssertionError, TimeoutError):
        print(f"  no reply to {message.text!r} ({message.kind}) within {timeout:.0f} s")


def bot_messages(rig, channel: str) -> list[dict]:
    bot = rig.ids["bot_id"]
    return [m for m in rig.discord.messages(rig.ids[channel]) if m["author"]["id"] == bot]


def report(rig, sent: list[Sent], seconds: float) -> None:
    typed = Counter(last_user_text(request) for request in rig.api.requests)
    posted: Counter[str] = Counter()
    for channel in {m.channel for m in sent}:
        for reply in bot_messages(rig, channel):
            content = reply.get("content") or ""
            for line in content.splitlines():
                if line.startswith("Model saw: "):
                    posted[line.removeprefix("Model saw: ").strip()] += 1
    by_kind: dict[str, list[Sent]] = defaultdict(list)
    for message in sent:
        by_kind[message.kind].append(message)
    print(f"\n{len(sent)} messages in {seconds:.0f} s; load average {load()}")
    print(
        f"{'fault':<10} {'sent':>5} {'lost':>5} {'typed 2×':>9} {'posted 2×':>10} "
        f"{'reply p50':>10} {'p95':>7}"
    )
    totals = Counter()
    for kind in KINDS:
        messages = by_kind.get(kind, [])
        if not messages:
            continue
        lost = sum(1 for m in messages if typed[m.text] == 0 or posted[m.text] == 0)
        twice_typed = sum(1 for m in messages if typed[m.text] > 1)
        twice_posted = sum(1 for m in messages if posted[m.text] > 1)
        seconds_ = [m.reply_seconds for m in messages if m.reply_seconds is not None]
        p50 = f"{percentile(seconds_, 50):.1f} s" if seconds_ else "—"
        p95 = f"{percentile(seconds_, 95):.1f} s" if seconds_ else "—"
        print(
            f"{kind:<10} {len(messages):>5} {lost:>5} {twice_typed:>9} {twice_posted:>10} "
            f"{p50:>10} {p95:>7}"
        )
        totals.update(sent=len(messages), lost=lost, typed=twice_typed, posted=twice_posted)
    print(
        f"{'all':<10} {totals['sent']:>5} {totals['lost']:>5} {totals['typed']:>9} "
        f"{totals['posted']:>10}"
    )
    for message in sent:
        if typed[message.text] != 1 or posted[message.text] != 1:
            print(
                f"  {message.text!r} ({message.kind}): typed {typed[message.text]}×, "
                f"posted {posted[message.text]}×"
            )


def load() -> str:
    with open("/proc/loadavg") as handle:
        return " ".join(handle.read().split()[:3])


if __name__ == "__main__":
    main()
