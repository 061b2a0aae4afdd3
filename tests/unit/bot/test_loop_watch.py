"""The event loop's lag is logged with what held the loop: a callback that blocks it for
0.6 s is named in the warning."""

from __future__ import annotations

import asyncio
import logging
import re
import time

import pytest

from bridge.bot.loop_watch import LoopWatch


def fsync_on_a_busy_disk() -> None:
    time.sleep(0.6)  # the loop's thread held, as by a blocking call


async def watched(work) -> None:
    watch = asyncio.create_task(LoopWatch().run())
    await asyncio.sleep(0.3)  # a few beats first
    await work()
    await asyncio.sleep(0.3)  # the beat after the stall reports it
    watch.cancel()
    await asyncio.gather(watch, return_exceptions=True)


def lags(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "event loop lag" in r.getMessage()]


def test_a_blocked_loop_is_logged_with_the_code_that_blocked_it(caplog) -> None:
    caplog.set_level(logging.WARNING, "bridge.bot.loop_watch")

    async def block() -> None:
        fsync_on_a_busy_disk()

    asyncio.run(watched(block))
    # one line for the stall (a loaded machine may add lags of its own, caught elsewhere)
    [line] = [line for line in lags(caplog) if "fsync_on_a_busy_disk" in line]
    lag = int(re.search(r"lag (\d+) ms", line).group(1))  # type: ignore[union-attr]
    assert lag >= 500, line
    assert "fsync_on_a_busy_disk" in line and "(over 250 ms, " in line, line
    # read while the loop was held (the process ran), not once it woke
    seen = int(re.search(r"running at (\d+) ms", line).group(1))  # type: ignore[union-attr]
    assert 250 <= seen < lag, line
