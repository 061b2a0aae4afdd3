"""The status message a turn still shows as "Working", kept across a restart of the bot.

``bot/turn/progress.py`` records which status message of a channel is open in
``progress/<channel>.open``; a bot that starts again reads those records and closes each such
message (its turn's events are gone), so no "Working" and live ⏹ is left for ever. It is its
own module because it is file plumbing apart from following a turn's events.
"""

from __future__ import annotations

import contextlib
import logging
import os

import discord

from bridge import fastjson
from bridge.state import private_files, runtime

log = logging.getLogger(__name__)

OPEN = ".open"  # progress/<channel>.open: the status message still showing "Working"
RESTARTED = "⏹ The bridge restarted during this turn; its progress is no longer shown here."


async def close_messages_left_open(
    bot: discord.Client, rt: runtime.Runtime, server_name: str
) -> None:
    """Status messages of turns that were running when the previous bot stopped: their
    events are gone, so say so instead of leaving "Working" and a live ⏹ for ever."""
    for name in os.listdir(rt.progress):
        key = name[: -len(OPEN)]
        if not (name.endswith(OPEN) and key.isdigit()):
            continue
        path = os.path.join(rt.progress, name)
        try:
            record = fastjson.loads(private_files.read_private(path))
            if not isinstance(record, dict) or record.get("server") != server_name:
                continue
            channel = bot.get_partial_messageable(int(key))
            message = channel.get_partial_message(int(record["message_id"]))
            await message.edit(content=RESTARTED, view=None)
        except (OSError, ValueError, KeyError, discord.HTTPException) as err:
            log.warning("could not close the status message of %s: %s", key, err)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def remember_open(rt: runtime.Runtime, server_name: str, key: str, message_id: int | None) -> None:
    """Which status message of ``key`` is still open (None: none is)."""
    path = os.path.join(rt.progress, key + OPEN)
    try:
        if message_id is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return
        record = {"server": server_name, "message_id": str(message_id)}
        # progress/ is volatile (gone at a reboot): no fsync on the event loop, which a
        # disk busy flushing can hold for seconds
        private_files.write_atomic(path, fastjson.dumps(record).encode(), durable=False)
    except OSError as err:
        log.warning("could not record the status message of %s: %s", key, err)
