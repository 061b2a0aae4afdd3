"""SessionStart: record which Claude session serves the channel, so the bot can resume it.

The record (``bridge.state.session_record``) holds the Claude ``session_id``, transcript path,
cwd and pane; after a crash or a reboot the bot starts ``claude --resume <session_id>`` there.
"""

from __future__ import annotations

import os
import time

from bridge.handlers.context import HookContext
from bridge.state import session_record
from bridge.state.runtime import ENV_CHANNEL

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
    session_record.write_record(rt, context.channel_id, record)
