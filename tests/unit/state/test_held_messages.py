from __future__ import annotations

import os
import stat

import pytest

from bridge.state import held_messages, runtime


def test_messages_are_held_in_order_once_each_privately(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    held_messages.hold(rt, "123456789012345678", "1", "123456789012345678", "first")
    held_messages.hold(rt, "123456789012345678", "2", "123456789012345678", "second")
    record = held_messages.hold(rt, "123456789012345678", "1", "123456789012345678", "again")
    assert [m["prompt"] for m in record["messages"]] == ["first", "second"]
    path = rt.path("screens", "123456789012345678.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert held_messages.load(rt, "123456789012345678")["messages"] == record["messages"]
    held_messages.clear(rt, "123456789012345678")
    assert held_messages.load(rt, "123456789012345678")["messages"] == []
    held_messages.clear(rt, "123456789012345678")  # nothing there: no error


def test_keys_are_channel_ids(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    with pytest.raises(ValueError):
        held_messages.load(rt, "../x")
