"""What a voice reply costs for text that speaks long: peak memory and the audio's length.

A reply is read aloud within ``voice.maxReplySeconds`` (default 60 s). Text with few spaces
(CJK, a long number) used to slip past the word count that enforced it. Cases: (a) 4 KB of
CJK, (b) 4 KB of digits without a space, (c) 32 KiB of prose (what the Stop hook hands the
bot at most) and (d) 32 KiB of CJK. Each runs as the bot runs it (``prose.spoken``, then
``tts.speak`` with espeak-ng) in a fresh Python process, which reports the voice message's
duration and size, the wall time and the peak RSS (``ru_maxrss``) of the process and of its
largest child (espeak-ng). "hello" is the floor: the interpreter and PyAV.

``--checkout DIR`` measures another checkout's ``bridge`` (``git worktree add --detach
/tmp/before main``), e.g. before the bounds; (d) is not run with code that has none: it
would take gigabytes.

    .venv/bin/python bench/voice_reply_bounds.py [--budget 60] [--checkout DIR] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    "hello": "Hello, this is a short reply.",
    "(a) 4 KB of CJK": "汉字测试语音" * (4096 // 18),  # 3 bytes each in UTF-8
    "(b) 4 KB of digits": ("1234567890" * 410)[:4096],
    "(c) 32 KiB of prose": "\n\n".join(
        "The parser now keeps the line numbers of every token, so an error points at the "
        "place it happened. I ran the whole suite again and it passes; two tests were slow "
        "and I left them as they were."
        for _ in range(32 * 1024 // 200)
    )[: 32 * 1024],
    "(d) 32 KiB of CJK": ("汉字测试语音" * 2000)[: 32 * 1024 // 3],  # bounded code only
}
UNSAFE_BEFORE = {"(d) 32 KiB of CJK"}  # ~13 GB and 2.7 h of audio without the bounds

# Runs in the child: the bot's own path from reply text to voice message.
PROBE = """
import inspect, json, resource, sys, time
from bridge.voice import prose, tts
text, budget = sys.stdin.read(), float(sys.argv[1])
started = time.perf_counter()
spoken = prose.spoken(text, budget)
if len(inspect.signature(tts.speak).parameters) > 1:
    clip = tts.speak(spoken, budget)
elif sys.argv[2] == "unsafe":  # the code before the bounds would take the machine's memory
    raise SystemExit(0)
else:  # the code before the bounds
    clip = tts.speak(spoken)
print(json.dumps({
    "duration": clip.duration, "bytes": len(clip.data), "chars": len(spoken),
    "seconds": time.perf_counter() - started,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "children_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
}))
"""


def measure(checkout: Path, text: str, budget: float, unsafe: bool) -> dict | None:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(budget), "unsafe" if unsafe else "safe"],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        cwd=checkout,
        check=True,
    )
    return json.loads(done.stdout) if done.stdout.strip() else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=60.0, help="voice.maxReplySeconds")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="whose bridge to measure")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    print(f"checkout {checkout}, budget {args.budget:g} s, load {os.getloadavg()[0]:.2f}")
    print(
        f"{'case':<22} {'chars':>6} {'audio s':>8} {'ogg KB':>7} {'wall s':>7} "
        f"{'RSS MB':>7} {'engine MB':>9}"
    )
    for name, text in CASES.items():
        for _ in range(args.runs):
            r = measure(checkout, text, args.budget, name in UNSAFE_BEFORE)
            if r is None:
                print(f"{name:<22} (not run: unbounded)")
                continue
            print(
                f"{name:<22} {r['chars']:>6} {r['duration']:>8.1f} {r['bytes'] / 1024:>7.0f} "
                f"{r['seconds']:>7.2f} {r['rss_mb']:>7.0f} {r['children_mb']:>9.0f}"
            )


if __name__ == "__main__":
    main()
