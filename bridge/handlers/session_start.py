"""SessionStart: record which Claude session serves the channel, so the bot can resume it.

The record (``bridge.state.session_record``) holds the Claude ``session_id``, transcript path,
cwd and pane; after a crash or a reboot the bot starts ``claude --resume <session_id>`` there.
A new id in the same pane (``/clear``, a branch) replaces it; a branch is also said on Discord.
"""

from __future__ import annotations

import os
import time

from bridge.handlers.context import HookContext
from bridge.state import private_files, session_record
from bridge.state.runtime import ENV_CHANNEL

FIELDS = ("session_id", "transcript_path", "cwd", "source", "model")
# A resumed or forked conversation whose prompt cache expired is written to the cache again
# on its next request; Claude Code 2.1.332 estimates that (``estimated_cache_write_usd``).
# From this many dollars it is said in the channel: it counts against a spend budget.
CACHE_WRITE_NOTE = 0.50


def on_session_start(context: HookContext) -> None:
    if not os.environ.get(ENV_CHANNEL):
        # Not a pane the bot started (the owner's own `claude` in the project directory,
        # found by cwd): its session is not the one to resume after a restart.
        return
    record = {key: context.event.get(key) for key in FIELDS}
    record["pane_id"] = os.environ.get("TMUX_PANE")
    record["channel_id"] = context.channel_id
    record["project_path"] = context.project.path  # resumed only in this project (the bot)
    record["recorded_at"] = time.time()
    rt = context.runtime.ensure()
    before = session_record.read_record(rt, context.channel_id) or {}
    # On disk once the hook has answered (HookContext.defer): its two fsyncs were most of
    # the hook's time past python's start on a disk (measured: 1.31× python -c pass).
    session_record.write_record(rt, context.channel_id, record, durable=False)
    context.defer(lambda: _sync(session_record.record_path(rt, context.channel_id)))
    if record["source"] == "fork" and before.get("session_id") not in (None, record["session_id"]):
        say_branched(context, str(before["session_id"]), str(record["session_id"]))
    if record["source"] in ("resume", "fork"):
        say_cache_cost(context)


def say_cache_cost(context: HookContext) -> None:
    """A resumed conversation that will cost much to re-cache: said before the next prompt."""
    cost = context.event.get("estimated_cache_write_usd")
    if not isinstance(cost, int | float) or isinstance(cost, bool) or cost < CACHE_WRITE_NOTE:
        return
    from bridge.discord.post import Post, message_payload

    tokens = context.event.get("context_tokens")
    size = f" ({tokens:,} tokens)" if isinstance(tokens, int) and tokens > 0 else ""
    text = (
        f"💸 This conversation was resumed with a cold prompt cache: its next message writes "
        f"the whole context{size} to the cache again, about ${cost:.2f}. `/compact` or `/new` "
        "first costs less."
    )
    context.deliver([Post(message_payload(text))], budget=5.0)


def _sync(path: str) -> None:
    try:
        private_files.make_durable(path)
    except OSError:
        pass  # gone meanwhile (a newer record took its place: that one is synced)


def say_branched(context: HookContext, original: str, branch: str) -> None:
    """A branch of the conversation (``/branch``; 2.1.332's SessionStart ``source: "fork"``)
    goes on under a new id: the channel follows it (the record above), and says so, with how
    to go back to the conversation before it."""
    from bridge.discord.post import Post, message_payload

    text = (
        f"🌿 Claude Code branched this conversation: this channel goes on in the branch "
        f"`{_id(branch)}`. The conversation before it is kept: `claude --resume {_id(original)}`."
    )
    context.deliver([Post(message_payload(text))], budget=5.0)


def _id(value: str) -> str:
    """A session id as shown: Claude Code's are UUIDs; anything else is cut and defused."""
    return "".join(c for c in value if c.isalnum() or c == "-")[:64]
