"""``state/queued-<key>.json``: queued prompts kept in order, durable, owner-only."""

from __future__ import annotations

import os
import stat

import pytest

from bridge.config import BridgeConfig, ConfigError
from bridge.state import queued_prompts, runtime

KEY = "123456789012345678"


def make_rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()


def test_prompts_come_back_in_order_and_go_one_by_one(tmp_path) -> None:
    rt = make_rt(tmp_path)
    first = queued_prompts.queue_prompt(rt, KEY, "one", message_id="1")
    second = queued_prompts.queue_prompt(rt, KEY, "two", source="schedule")
    assert [e["text"] for e in queued_prompts.entries(rt, KEY)] == ["one", "two"]
    assert queued_prompts.keys_with_entries(rt) == [KEY]
    path = os.path.join(rt.state, f"queued-{KEY}.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert queued_prompts.remove(rt, KEY, first["id"])["text"] == "one"
    assert queued_prompts.remove(rt, KEY, first["id"]) is None
    assert [e["source"] for e in queued_prompts.entries(make_rt(tmp_path), KEY)] == ["schedule"]
    queued_prompts.remove(rt, KEY, second["id"])
    assert not os.path.exists(path) and queued_prompts.keys_with_entries(rt) == []


def test_a_full_queue_refuses_and_a_bad_key_or_planted_link_is_not_followed(tmp_path) -> None:
    rt = make_rt(tmp_path)
    for i in range(queued_prompts.MAX_QUEUED):
        queued_prompts.queue_prompt(rt, KEY, f"p{i}")
    with pytest.raises(queued_prompts.QueueFull):
        queued_prompts.queue_prompt(rt, KEY, "one too many")
    with pytest.raises(ValueError):
        queued_prompts.queue_prompt(rt, "../etc", "x")
    other = "223456789012345678"
    secret = tmp_path / "secret.json"
    secret.write_text('{"queued": [{"id": "x", "text": "planted"}]}')
    os.symlink(secret, os.path.join(rt.state, f"queued-{other}.json"))
    assert queued_prompts.entries(rt, other) == []  # a link is not read


def test_queue_prefix_and_stall_minutes_are_checked() -> None:
    def raw(**extra: object) -> dict:
        project = {"name": "a", "channelId": KEY, "projectPath": "/tmp"}
        owner = {"botToken": "t", "ownerUserId": "223456789012345678"}
        server = {"name": "s", "discord": owner, "projects": [project]}
        return {"schemaVersion": 2, "servers": [server], **extra}

    cfg = BridgeConfig(raw())
    assert cfg.queue_prefix == ">>" and cfg.stall_minutes == 10 and not cfg.notify_when_attached
    cfg = BridgeConfig(
        raw(queue={"prefix": "q:"}, stallMinutes=0.5, notifications={"whenAttached": True})
    )
    assert cfg.queue_prefix == "q:" and cfg.stall_minutes == 0.5 and cfg.notify_when_attached
    with pytest.raises(ConfigError) as err:
        BridgeConfig(raw(queue={"prefix": " "}, stallMinutes=0))
    assert "queue.prefix" in str(err.value) and "stallMinutes" in str(err.value)


def test_adds_and_updates_from_worker_threads_lose_nothing(tmp_path) -> None:
    """The bot changes queues from asyncio.to_thread: an add racing a notice's update once
    lost the added entry."""
    from concurrent.futures import ThreadPoolExecutor

    rt = make_rt(tmp_path)
    first = queued_prompts.queue_prompt(rt, KEY, "first")
    with ThreadPoolExecutor(8) as pool:
        adds = [pool.submit(queued_prompts.queue_prompt, rt, KEY, f"p{i}") for i in range(15)]
        for i in range(15):
            pool.submit(queued_prompts.update, rt, KEY, first["id"], notice_id=str(i))
    assert len(queued_prompts.entries(rt, KEY)) == 16
    assert {a.result()["id"] for a in adds} <= {e["id"] for e in queued_prompts.entries(rt, KEY)}
