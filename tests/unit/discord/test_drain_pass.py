"""A pass of a channel's drain as a sender drives it (bridge/discord/outbox.py's DrainPass): the
entries due in order, each removed only once told it went out, the pass ended by a retryable
failure, and an entry whose outcome was never told not taken for posted. The whole drain, over
real HTTP: test_outbox.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.discord.outbox import Outbox
from bridge.discord.post import DeliveryError, Post, message_payload
from bridge.state.runtime import Runtime

CHANNEL = "1000000000000000001"


@pytest.fixture
def outbox(tmp_path: Path) -> Outbox:
    outbox = Outbox(Runtime(str(tmp_path / "runtime")).ensure().outbox)
    for text in ("m0", "m1", "m2"):
        outbox.enqueue(CHANNEL, "main", Post(message_payload(text)))
    return outbox


def waiting(outbox: Outbox) -> list[str]:
    return [outbox.load(path)[1].payload["content"] for path in outbox.pending(CHANNEL)]


def test_every_entry_told_posted_leaves_the_outbox_in_order(outbox: Outbox) -> None:
    given = []
    with outbox.drain_pass(CHANNEL) as steps:
        for _path, entry in steps:
            given.append(entry["payload"]["content"])
            steps.tell(None)
    assert given == ["m0", "m1", "m2"] and steps.all_out
    assert waiting(outbox) == []


def test_a_retryable_failure_ends_the_pass_and_keeps_the_rest_in_order(outbox: Outbox) -> None:
    with outbox.drain_pass(CHANNEL) as steps:
        for _path, entry in steps:
            failed = entry["payload"]["content"] == "m1"
            steps.tell(DeliveryError("503", retryable=True) if failed else None)
    assert not steps.all_out
    assert waiting(outbox) == ["m1", "m2"]


def test_an_entry_whose_outcome_was_not_told_stays(outbox: Outbox) -> None:
    with outbox.drain_pass(CHANNEL) as steps:
        next(steps)
        with pytest.raises(RuntimeError, match="tell"):
            next(steps)
    assert not steps.all_out
    assert waiting(outbox) == ["m0", "m1", "m2"]
