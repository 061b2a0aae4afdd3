"""The global pacer: a burst goes at once, then requests are spaced so that no second ever
holds more than Discord's 50; interaction responses are not held back."""

from __future__ import annotations

import asyncio

from discord.http import Route

from bridge.bot.pacing import BURST, RATE, GlobalPacer, pace_global_limit


def test_the_burst_goes_at_once_then_requests_are_spaced_at_the_rate() -> None:
    pacer = GlobalPacer()
    delays = [pacer.delay(100.0) for _ in range(BURST + 3)]
    assert delays[:BURST] == [0.0] * BURST
    gaps = [round(b - a, 6) for a, b in zip(delays[BURST - 1 :], delays[BURST:], strict=False)]
    assert gaps == [round(1 / RATE, 6)] * 3


def test_no_second_ever_holds_more_than_fifty_requests() -> None:
    pacer = GlobalPacer()
    sent = [10.0 + pacer.delay(10.0) for _ in range(300)]  # everyone asks at once
    assert max(sum(t <= s < t + 1.0 for s in sent) for t in sent) <= 50


def test_a_quiet_second_refills_the_burst() -> None:
    pacer = GlobalPacer()
    for _ in range(BURST * 3):
        pacer.delay(0.0)
    assert pacer.delay(60.0) == 0.0


class FakeHTTP:
    def __init__(self) -> None:
        self.paths: list[str] = []

    async def request(self, route: Route, **kwargs: object) -> str:
        self.paths.append(route.path)
        return "ok"


def test_interaction_responses_skip_the_pacer() -> None:
    http = FakeHTTP()
    pacer = pace_global_limit(http, GlobalPacer(rate=1.0, burst=1))  # type: ignore[arg-type]
    pacer.delay(0.0)  # the bucket is empty: a counted request would wait a second

    async def respond() -> str:
        route = Route("POST", "/interactions/{id}/{token}/callback", id=1, token="t")
        return await asyncio.wait_for(http.request(route), 0.5)

    assert asyncio.run(respond()) == "ok"
    assert http.paths == ["/interactions/{id}/{token}/callback"]
