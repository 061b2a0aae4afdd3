"""Bringing a reply's footer in by an edit, once the turn's record lands in the transcript.

The Stop hook hands its reply over without waiting for the transcript's record of it (see
``bridge/handlers/reply_footer.py``): the outbox entry of the reply's last text message then
says what the footer needs (``footer``). Once that message is posted, the bot watches the
transcript (a ``stat`` every :data:`POLL` seconds, a read only when the file changed) until
the record is there or :data:`~bridge.handlers.reply_footer.FOOTER_WAIT` passed, works the
footer out as the hook would have (the record and the statusLine cache), and edits the
message when its footer line changes (often it does not: then no request at all). The edit
keeps the message's mention; an edit notifies no one, so the owner is pinged once, by the
post. A bot that stops meanwhile leaves the footer the message was posted with.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable

from bridge.discord.post import DeliveryError
from bridge.handlers import reply_footer as footers
from bridge.state import runtime

log = logging.getLogger(__name__)

POLL = 0.02  # seconds between looks at the transcript's size (a stat on the event loop)

Edit = Callable[[str, dict], Awaitable[object]]  # (message id, payload) → the edit made


class FooterEdits:
    """The footers being brought in, one task per reply."""

    def __init__(self, rt: runtime.Runtime) -> None:
        self.runtime = rt
        self._tasks: set[asyncio.Task] = set()

    def bring_in(self, spec: dict, message: dict, allowed_mentions: object, edit: Edit) -> None:
        """Bring the footer of ``message`` (just posted, with ``allowed_mentions``) in."""
        task = asyncio.create_task(self._bring_in(spec, message, allowed_mentions, edit))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def _bring_in(
        self, spec: dict, message: dict, allowed_mentions: object, edit: Edit
    ) -> None:
        footer = await self._footer(spec)
        content = footers.edited_content(str(message.get("content") or ""), spec, footer)
        if content is None:
            return  # the footer it was posted with was right
        payload: dict = {"content": content}
        if isinstance(allowed_mentions, dict):
            payload["allowed_mentions"] = allowed_mentions  # the mention stays one
        try:
            await edit(str(message.get("id")), payload)
        except (DeliveryError, TimeoutError, OSError) as err:
            log.warning("could not bring the footer in on message %s: %s", message.get("id"), err)

    async def _footer(self, spec: dict) -> str:
        """The footer once the record is in the transcript, or when the wait is over."""
        deadline = time.monotonic() + footers.FOOTER_WAIT
        seen = None
        while True:
            stamp = _stamp(spec["transcript_path"])
            if stamp != seen or time.monotonic() >= deadline:
                seen = stamp
                footer, final = await asyncio.to_thread(
                    footers.current_footer,
                    self.runtime,
                    spec["session_id"],
                    spec["transcript_path"],
                    spec["reply"],
                )
                if final or time.monotonic() >= deadline:
                    return footer
            await asyncio.sleep(POLL)


def _stamp(path: str) -> tuple[int, int] | None:
    """Size and modification time of the transcript: whether it changed since last time."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns
