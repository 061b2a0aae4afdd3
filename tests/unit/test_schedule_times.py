"""When scheduled prompts run: the owner's words read into rules, and each rule's next run,
in the machine's local time (here Europe/Berlin, with its daylight-saving change), at clocks
the tests choose."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from bridge import schedule_times as st
from bridge.schedule_times import BadTime


@pytest.fixture(autouse=True)
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M").timestamp()


def now() -> float:
    return at(WEDNESDAY)


def shown(moment: float | None) -> str:
    assert moment is not None
    return datetime.fromtimestamp(moment).strftime("%a %Y-%m-%d %H:%M")


WEDNESDAY = "2026-11-25 10:00"  # read in the test: the zone is set by then


def test_delays_read_as_people_write_them() -> None:
    assert st.parse_delay("45m") == 45 * 60
    assert st.parse_delay("1h30m") == 5400
    assert st.parse_delay("2 h") == 7200
    assert st.parse_delay("90s") == 90
    assert st.parse_delay("1d") == 86400
    assert st.parse_delay("20") == 1200  # a bare number: minutes
    for bad in ("soon", "2x", "h", "", "1h30", "0m", "400d"):
        with pytest.raises(BadTime):
            st.parse_delay(bad)


def test_at_is_the_next_time_the_clock_shows_it_or_a_date() -> None:
    assert shown(st.parse_at("14:30", now())) == "Wed 2026-11-25 14:30"
    assert shown(st.parse_at("9:15", now())) == "Thu 2026-11-26 09:15"  # passed today
    assert shown(st.parse_at("2026-12-24 18:00", now())) == "Thu 2026-12-24 18:00"
    for bad in (
        "25:00",
        "12:60",
        "noon",
        "2026-11-24 10:00",
        "2026-02-30 10:00",
        "2028-01-01 10:00",
    ):
        with pytest.raises(BadTime):
            st.parse_at(bad, now())


def test_daily_and_weekdays_run_at_their_local_time() -> None:
    daily = {"kind": "daily", "time": st.parse_clock("9:00")}
    assert shown(st.next_run(daily, now())) == "Thu 2026-11-26 09:00"
    assert shown(st.next_run(daily, at("2026-11-25 08:59"))) == "Wed 2026-11-25 09:00"
    assert shown(st.next_run(daily, at("2026-11-25 09:00"))) == "Thu 2026-11-26 09:00"  # after
    weekdays = {"kind": "weekdays", "time": "09:00"}
    friday = at("2026-11-27 12:00")
    assert shown(st.next_run(weekdays, friday)) == "Mon 2026-11-30 09:00"
    assert shown(st.next_run(weekdays, now())) == "Thu 2026-11-26 09:00"


def test_a_daily_time_stays_on_the_clock_across_daylight_saving() -> None:
    daily = {"kind": "daily", "time": "09:00"}
    before = at("2026-03-28 10:00")  # the clocks go forward on Sunday 29 March at 02:00
    after = st.next_run(daily, before)
    assert shown(after) == "Sun 2026-03-29 09:00"
    assert after - at("2026-03-28 09:00") == 23 * 3600  # a short day, the same clock time


def test_every_n_hours_keeps_its_rhythm_from_the_first_run() -> None:
    rule = {"kind": "hours", "hours": 3, "anchor": now() + 3 * 3600}
    assert st.next_run(rule, now()) == now() + 3 * 3600
    assert st.next_run(rule, now() + 3 * 3600) == now() + 6 * 3600
    assert st.next_run(rule, now() + 7 * 3600 + 5) == now() + 9 * 3600  # not 3 h after a late run


def test_cron_expressions_are_cronsims_in_local_time() -> None:
    rule = {"kind": "cron", "cron": st.parse_cron("0  9 * * 1-5", now())}
    assert rule["cron"] == "0 9 * * 1-5"
    assert shown(st.next_run(rule, at("2026-11-27 12:00"))) == "Mon 2026-11-30 09:00"
    every_quarter = {"kind": "cron", "cron": "*/15 * * * *"}
    assert shown(st.next_run(every_quarter, now())) == "Wed 2026-11-25 10:15"  # strictly after
    for bad in ("0 9 * *", "61 * * * *", "every day", "0 0 30 2 *"):
        with pytest.raises(BadTime):
            st.parse_cron(bad, now())


def test_a_one_off_runs_once() -> None:
    rule = {"kind": "once", "at": now() + 60}
    assert st.next_run(rule, now()) == now() + 60
    assert st.next_run(rule, now() + 60) is None


def test_runs_missed_while_off_are_counted() -> None:
    hourly = {"kind": "hours", "hours": 1, "anchor": now()}
    assert st.runs_between(hourly, now(), now() + 5 * 3600 + 10) == 6  # 10:00 … 15:00
    assert st.runs_between({"kind": "once", "at": now()}, now(), now() + 86400) == 1
    assert st.runs_between({"kind": "cron", "cron": "* * * * *"}, now(), now() + 10**6) == 1000


def test_every_time_shown_names_the_local_zone() -> None:
    assert (
        st.describe({"kind": "daily", "time": "09:00"}, now()) == "daily at 09:00 (local time, CET)"
    )
    summer = at("2026-07-01 10:00")
    assert st.describe({"kind": "weekdays", "time": "09:00"}, summer).endswith("(local time, CEST)")
    assert st.show_moment(at("2026-11-25 14:30"), now()) == "14:30 (local time, CET)"
    assert st.show_moment(at("2026-11-26 09:00"), now()) == "Thu 2026-11-26 09:00 (local time, CET)"
    assert (
        st.describe({"kind": "cron", "cron": "0 9 * * 1-5"}, now())
        == "cron `0 9 * * 1-5` (local time, CET)"
    )
