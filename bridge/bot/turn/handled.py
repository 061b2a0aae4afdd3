"""Which messages of each channel or thread the bot has handled (``state/handled_messages``),
and the gate that keeps live messages back while the history is read.

The relay asks :meth:`HandledMessages.admit` before it handles a live message (no: this
process handled it already, a catch-up found it in the history), records :meth:`typing` just
before the keys go in and :meth:`done` after. On a fresh gateway session the catch-up
(``bot/turn/catchup.py``) holds (:meth:`hold`) every channel it will read first: a live message
there waits until the channel's history has been read, so nothing is typed out of order and nothing
twice (a message that came in meanwhile is in that history).

Every file write runs in a worker thread: an fsync (~8 ms) never holds up the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from bridge.claude.transcript import prompt_digest
from bridge.state import handled_messages, runtime
from bridge.state.handled_messages import Handled, Typing

log = logging.getLogger(__name__)

MAX_SEEN = 2000  # message ids per key this process remembers having handled


class HandledMessages:
    def __init__(self, rt: runtime.Runtime) -> None:
        self.runtime = rt
        self._records: dict[str, Handled | None] = {}  # read once per key, then kept here
        self._gates: dict[str, asyncio.Event] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._seen: dict[str, set[int]] = {}  # ids handled by this process, per key

    # --- the gate ----------------------------------------------------------------------

    def hold(self, keys: list[str]) -> None:
        """Live messages of these keys wait until :meth:`release` (their history is read)."""
        for key in keys:
            gate = self._gates.get(key)
            if gate is None or gate.is_set():
                self._gates[key] = asyncio.Event()

    def release(self, key: str) -> None:
        gate = self._gates.pop(key, None)
        if gate is not None:
            gate.set()

    def release_all(self) -> None:
        for key in list(self._gates):
            self.release(key)

    def holding(self) -> bool:
        return bool(self._gates)

    async def admit(self, key: str, message_id: int) -> bool:
        """Whether a live message is new: not at or below the last one handled. Waits while
        the key's history is being read."""
        gate = self._gates.get(key)
        if gate is not None:
            await gate.wait()
        return await self.is_new(key, message_id)

    async def is_new(self, key: str, message_id: int) -> bool:
        """Whether this process has not handled ``message_id`` yet. Discord sends a live
        message once (a RESUME replays only what this session missed), so what a live message
        can meet again is only this process's own doing: a catch-up that found it in the
        history, a replay. (Not the record's ``last``: a channel first seen at this start
        begins at its newest message, which may be one that is waiting here.)"""
        return message_id not in self._seen.get(key, ())

    # --- the record --------------------------------------------------------------------

    async def get(self, key: str) -> Handled | None:
        if key not in self._records:
            record = await asyncio.to_thread(handled_messages.load, self.runtime, key)
            self._records.setdefault(key, record)
        return self._records[key]

    async def start_at(self, key: str, message_id: int) -> None:
        """A key the bot has no record of (or none it trusts): everything up to
        ``message_id`` counts as handled."""
        await self._update(key, lambda _: Handled(last=message_id))

    async def typing(self, key: str, message_id: int, prompt: str) -> None:
        """The prompt of ``message_id`` is about to be typed. Atomic, in the page cache (what
        a killed bot needs), not fsynced: this is on the way to the keys."""
        marked = Typing(message_id, time.time(), prompt_digest(prompt))
        await self._update(key, lambda r: Handled(r.last, marked, r.offers), durable=False)

    async def done(self, key: str, message_id: int) -> None:
        """``message_id`` is handled (typed, held, refused or offered): durable."""
        self._saw(key, message_id)
        await self._update(key, lambda r: Handled(max(r.last, message_id), None, r.offers))

    async def offered(self, key: str, message_id: int) -> None:
        """``message_id`` is handled by offering Send now / Drop: durable."""
        self._saw(key, message_id)

        def offer(r: Handled) -> Handled:
            offers = [o for o in r.offers if o != message_id] + [message_id]
            return Handled(max(r.last, message_id), None, offers)

        await self._update(key, offer)

    async def take_offer(self, key: str, message_id: int) -> bool:
        """A click on an offer's button: True for the first one only (durable, before the
        message is typed: a second click or a click after a restart does nothing)."""
        taken = False

        def take(r: Handled) -> Handled:
            nonlocal taken
            taken = message_id in r.offers
            return Handled(r.last, r.typing, [o for o in r.offers if o != message_id])

        await self._update(key, take)
        return taken

    def _saw(self, key: str, message_id: int) -> None:
        seen = self._seen.setdefault(key, set())
        if len(seen) >= MAX_SEEN:  # the oldest go: a live message is never that late
            for old in sorted(seen)[: MAX_SEEN // 2]:
                seen.discard(old)
        seen.add(message_id)

    async def _update(
        self, key: str, change: Callable[[Handled], Handled], durable: bool = True
    ) -> None:
        """One read-modify-write of the key's record at a time, written in that order."""
        async with self._locks.setdefault(key, asyncio.Lock()):
            record = change(await self.get(key) or Handled(last=0))
            record.offers = record.offers[-handled_messages.MAX_OFFERS :]
            self._records[key] = record
            try:
                await asyncio.to_thread(handled_messages.save, self.runtime, key, record, durable)
            except OSError as err:
                log.warning("could not record the messages handled in %s: %s", key, err)
