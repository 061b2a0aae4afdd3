"""The Stop hook's hot path: hand the whole event to the warm bot, which lays out and posts.

While the bot runs, the Stop hook does no bridge work itself: it writes the event (and the
locations and pane markers it may trust, :func:`bridge.handlers.context.hook_env`) to
``stops/<name>.json`` in the runtime dir, wakes the bot with ``stop:<name>`` on ``bot.sock``
and waits until the bot has claimed the file (renamed it). The bot, whose imports are warm,
then runs the very handler the hook would have run (``bot/delivery/stop_events``): the reply
first. Before, the hook process spent ≈ 25 ms of CPU on its imports, the config and the layout
before its hand-off, on two cores that Claude Code and its other hooks want at that moment.

Exactly once: whoever renames the file owns the event. The hook gives the bot
:data:`TAKE_WAIT`; a bot that did not claim it by then (stopped, hung) loses it to the hook,
which claims it back and runs the handler itself as before (posting directly or spooling
through the outbox). No bot listening: the hook runs the handler at once. A bot that dies
after its claim finds the claimed file when it starts again (``stop_events.recover``).

Imported by ``hooks/stop.py`` before anything else: only ``os``, ``sys`` and the locations.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.state import runtime

STOPS = "stops"  # in the runtime dir
CLAIMED = ".taken"  # a claimed event's suffix (the bot's)
TAKE_WAIT = 2.0  # seconds the bot has to claim the event (handoff.HANDOFF_WAIT)
POLL = 0.001  # seconds between looks at the event file while the bot claims it
MAX_EVENT = 64 << 20  # bytes of a spooled event the bot reads (a reply of many megabytes)
PANE_ENV = ("TMUX", "TMUX_PANE")  # the desk question's tmux (handlers/notify.DeskQuery)


def hand_to_bot() -> None:
    """Give this process's Stop event to the bot and exit; return (stdin put back) when no
    bot took it, for the hook to run its handler itself."""
    import gc
    import io
    import time

    started = time.monotonic()
    gc.disable()  # (bridge.handlers.hook_process)
    data = sys.stdin.buffer.read()
    try:
        if handed_over(data, sys.argv, os.environ, started):
            os._exit(0)  # nothing to print; no tear-down (context.leave)
    except Exception:  # whatever went wrong, the hook's own path still posts the reply
        pass
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")  # no locale lookup


def handed_over(
    data: bytes, argv: list[str], environ: dict | os._Environ[str], started: float | None = None
) -> bool:
    """True once the bot claimed the event; False (no file left behind) when it did not.
    ``started``: when the hook began, for the metrics' Stop hook duration (what Claude Code
    waited for: the hand-off), as ``context.run`` records it for a hook that runs its handler."""
    from bridge.handlers import Found
    from bridge.state import runtime

    env = Found.env = trusted_env(argv, environ)  # the handler's path takes it if it runs here
    rt = runtime.Runtime.from_env(env)
    if not os.path.exists(rt.path("bot.sock")):  # handoff.bot_listening: no bot
        return False
    path = spool(rt, env, data)
    from bridge.discord import handoff

    taken = handoff.wake_bot(rt, "stop:" + os.path.basename(path)) and claimed(path, TAKE_WAIT)
    if not taken and take_back(path):  # (a failed take-back: the bot claimed it just now)
        handoff.give_up_on_bot()  # the hook posts it: no second wait for a bot that did not come
        return False
    if started is not None:
        _duration_figure(rt, started)
    return True


def trusted_env(argv: list[str], environ: dict | os._Environ[str]) -> dict[str, str]:
    """:func:`bridge.handlers.context.hook_env` (without importing the config) and the pane's
    tmux, for the bot to resolve the event exactly as this hook would."""
    from bridge.state import locations
    from bridge.state.runtime import ENV_CHANNEL, ENV_THREAD

    env = locations.hook_locations(argv, environ)
    for name in (ENV_CHANNEL, ENV_THREAD, *PANE_ENV):
        if environ.get(name):
            env[name] = environ[name]
    return env


def spool(rt: runtime.Runtime, env: dict[str, str], data: bytes) -> str:
    """``stops/<name>.json``: the env as one JSON line, then the event as Claude Code sent it."""
    from bridge import fastjson
    from bridge.state import private_files
    from bridge.state.runtime import ensure_private_dir

    folder = ensure_private_dir(rt.ensure().path(STOPS))
    path = os.path.join(folder, f"{os.urandom(8).hex()}.json")
    # Not fsynced: the bot claims it within milliseconds, or this hook takes it back.
    private_files.write_atomic(path, fastjson.dumps(env).encode() + b"\n" + data, durable=False)
    return path


def claimed(path: str, wait: float) -> bool:
    """The bot renamed ``path`` within ``wait`` seconds."""
    import time

    until = time.monotonic() + wait
    while os.path.lexists(path):
        if time.monotonic() >= until:
            return False
        time.sleep(POLL)
    return True


def take_back(path: str) -> bool:
    """Claim the event back from a bot that did not take it; False: the bot just did."""
    try:
        os.rename(path, path + ".hook")
    except FileNotFoundError:
        return False
    os.unlink(path + ".hook")
    return True


def read_event(path: str) -> tuple[dict, dict] | None:
    """A spooled event: its env and the event; None for a file of another shape."""
    from bridge import fastjson
    from bridge.state import private_files

    try:  # only this user's private file decides where a reply goes
        raw = private_files.read_private(path, MAX_EVENT, own=True)
    except OSError:
        return None
    head, _, body = raw.partition(b"\n")
    try:
        env, event = fastjson.loads(head), fastjson.loads(body or b"{}")
    except ValueError:
        return None
    if not isinstance(env, dict) or not isinstance(event, dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        return None
    return env, event


def _duration_figure(rt: runtime.Runtime, started: float) -> None:
    """The Stop hook's duration in the metrics' figures (``state/hook_figures.py``): one append,
    only while a bot reads them."""
    import time

    from bridge.state import private_files

    took = time.monotonic() - started
    private_files.append_if_there(rt.hook_figures, f"hook Stop {took:.4f}\n")
