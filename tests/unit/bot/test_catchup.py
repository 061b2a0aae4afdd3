"""The catch-up's reading of a channel's history: each message once, oldest first, whatever
the pages hold (repeated ids, overlapping pages, a page served again and again); and the
offers' buttons, which the first click takes."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from bridge.bot.turn.catchup import CatchUp, format_age
from bridge.bot.turn.handled import HandledMessages
from bridge.state import handled_messages, runtime

KEY = "123456789012345678"


class History:
    """Discord's ``GET /channels/{id}/messages?after=`` as a list of canned pages, newest first
    each, handed out in turn (the last one again and again once they run out)."""

    def __init__(self, *pages: list[int]) -> None:
        self.pages = [[{"id": str(i)} for i in sorted(page, reverse=True)] for page in pages]
        self.asked: list[int] = []

    async def logs_from(self, channel_id: int, limit: int, after: int) -> list[dict]:
        self.asked.append(after)
        return self.pages[min(len(self.asked), len(self.pages)) - 1]


def catch_up(history: History) -> CatchUp:
    bot = SimpleNamespace(cfg=SimpleNamespace(catch_up_minutes=10), http=history)
    return CatchUp(bot, HandledMessages(runtime.Runtime("/nonexistent")))  # type: ignore[arg-type]


def read(history: History, after: int) -> list[int]:
    async def collect() -> list[int]:
        return [int(raw["id"]) async for raw in catch_up(history)._pages(1, after)]

    return asyncio.run(collect())


def test_pages_are_read_oldest_first_from_the_newest_id_so_far() -> None:
    history = History(list(range(101, 201)), list(range(201, 231)))
    assert read(history, 100) == list(range(101, 231))
    assert history.asked == [100, 200]


def test_a_page_that_repeats_ids_or_overlaps_the_last_gives_each_message_once() -> None:
    first = [*range(101, 151), *range(101, 151)]  # every id twice: a full page of 100
    second = [*range(120, 160)]  # overlaps the first: 120..150 were read already
    assert read(History(first, second), 100) == list(range(101, 160))


def test_a_page_served_again_and_again_ends_the_reading() -> None:
    same = list(range(101, 201))
    history = History(same)  # whatever is asked, the same full page
    assert read(history, 100) == list(range(101, 201))
    assert history.asked == [100, 200]  # nothing new on the second: done


def test_ids_at_or_below_the_last_handled_are_never_read() -> None:
    assert read(History([5, 6, 7, 8]), 6) == [7, 8]


def test_an_offer_is_taken_by_the_first_click_only(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()

    async def clicks() -> list[bool]:
        handled = HandledMessages(rt)
        await handled.offered(KEY, 42)
        both = await asyncio.gather(handled.take_offer(KEY, 42), handled.take_offer(KEY, 42))
        again = await HandledMessages(rt).take_offer(KEY, 42)  # after a restart
        return [*both, again]

    assert asyncio.run(clicks()) == [True, False, False]
    assert handled_messages.load(rt, KEY) == handled_messages.Handled(42, None, [])


def test_ages_read_as_people_say_them() -> None:
    assert format_age(20) == "less than a minute"
    assert format_age(11 * 60) == "11 min"
    assert format_age(3600 + 4 * 60) == "1 h 4 min"
    assert format_age(3 * 86400) == "3 days"
