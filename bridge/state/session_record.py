"""What the SessionStart hook records about a session, for the bot to read back.

``sessions/<channel>.json`` holds the Claude ``session_id``, transcript path, cwd and pane of
the session serving that channel or thread, so the bot can resume the conversation after a
crash and tell which Claude session is which.
"""

from __future__ import annotations

import os
import time

from bridge import fastjson
from bridge.handlers.context import ENV_CHANNEL, HookContext
from bridge.state import runtime

FIELDS = ("session_id", "transcript_path", "cwd", "source", "model")


def on_session_start(context: HookContext) -> None:
    if not os.environ.get(ENV_CHANNEL):
        # Not a pane the bot started (the owner's own `claude` in the project directory,
        # found by cwd): its session is not the one to resume after a restart.
        return
    record = {key: context.event.get(key) for key in FIELDS}
    record["pane_id"] = os.environ.get("TMUX_PANE")
    record["channel_id"] = context.channel_id
    record["recorded_at"] = time.time()
    rt = context.runtime.ensure()
    runtime.write_atomic(record_path(rt, context.channel_id), fastjson.dumps(record).encode())


def record_path(rt: runtime.Runtime, channel_id: str) -> str:
    return os.path.join(rt.sessions, f"{channel_id}.json")


def read_record(rt: runtime.Runtime, channel_id: str) -> dict | None:
    try:
        record = fastjson.loads(runtime.read_private(record_path(rt, channel_id)))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None
