"""Per-day cost totals in the state dir, kept by the statusLine command."""

from __future__ import annotations

import os
import stat
import time

import pytest

from bridge.handlers.status_line import count_cost
from bridge.state import runtime, usage_totals


@pytest.fixture
def rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()


def test_increases_add_up_per_day_across_sessions(rt) -> None:
    count_cost(rt, "s1", None, 0.25)  # the first figure of a session: all of it is new
    count_cost(rt, "s1", 0.25, 0.40)
    count_cost(rt, "s1", 0.40, 0.40)  # a refresh with nothing new
    count_cost(rt, "s2", None, 1.00)
    count_cost(rt, "s2", 1.00, 0.10)  # a new process of that session: its whole cost
    count_cost(rt, "s3", None, 0)  # nothing spent: no file
    spent, sessions = usage_totals.total(rt)
    assert spent == pytest.approx(1.50) and sessions == 2
    folder = rt.path("usage", usage_totals.day())
    assert sorted(os.listdir(folder)) == ["s1.json", "s2.json"]
    assert stat.S_IMODE(os.stat(os.path.join(folder, "s1.json")).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_days_are_separate_and_old_days_are_forgotten(rt) -> None:
    now = time.time()
    usage_totals.add(rt, "s1", 2.0, now - 86400 * 100)
    usage_totals.add(rt, "s1", 1.0, now - 86400)
    usage_totals.add(rt, "s1", 0.5, now)  # a new day: folders past KEEP_DAYS go
    assert usage_totals.total(rt)[0] == pytest.approx(0.5)
    assert usage_totals.total(rt, usage_totals.day(now - 86400))[0] == pytest.approx(1.0)
    assert not os.path.exists(rt.path("usage", usage_totals.day(now - 86400 * 100)))


def test_a_planted_symlink_is_not_followed(rt, tmp_path) -> None:
    usage_totals.add(rt, "s1", 0.5)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"cost_usd": 100}')
    os.symlink(target, os.path.join(rt.path("usage", usage_totals.day()), "s2.json"))
    assert usage_totals.total(rt) == (0.5, 1)
