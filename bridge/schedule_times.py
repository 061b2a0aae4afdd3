"""When a scheduled prompt runs: the owner's words (``in 2h``, ``at 14:30``, ``daily 09:00``,
``every 3 hours``, a cron expression) read into a rule, and a rule's next run after a moment.

Every time is the machine's local time (the bot's ``TZ``), and every message says so with the
zone's name (:func:`zone_name`): the owner is told "09:00 (local time, CET)", never a bare
clock. A rule is a small dict (what ``bridge/state/schedules.py`` stores)::

    {"kind": "once", "at": <epoch seconds>}
    {"kind": "daily", "time": "HH:MM"}          every day at that local time
    {"kind": "weekdays", "time": "HH:MM"}       Monday to Friday at that local time
    {"kind": "hours", "hours": N, "anchor": <epoch>}   every N hours from the anchor
    {"kind": "cron", "cron": "<5 fields>"}      read by cronsim (a maintained, dependency-free
                                                cron parser, Healthchecks.io's)

Nothing here reads a clock: the moment is always passed in (``now``), so tests choose it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

from cronsim import CronSim, CronSimError

MAX_HOURS = 24 * 7  # "every N hours": up to a week
MAX_AHEAD = 366 * 24 * 3600.0  # a one-off at most a year ahead
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DELAY = re.compile(r"(\d{1,5})\s*([smhd])")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")
_DATE_CLOCK = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{1,2}):(\d{2})")


class BadTime(ValueError):
    """What the owner typed is not a time this reads; the text says what would be."""


def zone_name(moment: float) -> str:
    """The machine's time zone at ``moment`` as its abbreviation (``UTC``, ``CET``, ``CEST``)."""
    return datetime.fromtimestamp(moment).astimezone().tzname() or "local"


def parse_delay(text: str) -> float:
    """``2h``, ``1h30m``, ``45m``, ``90s``, ``1d`` (a bare number: minutes) → seconds."""
    words = text.strip().lower().replace(" ", "")
    if words.isdigit():
        words += "m"
    parts = _DELAY.findall(words)
    if not parts or "".join(n + u for n, u in parts) != words:
        raise BadTime(f"`{text}` is not a delay: write e.g. `45m`, `2h`, `1h30m` or `1d`.")
    seconds = sum(int(n) * _UNITS[u] for n, u in parts)
    if not 1 <= seconds <= MAX_AHEAD:
        raise BadTime("A delay is at least a second and at most a year.")
    return float(seconds)


def parse_clock(text: str) -> str:
    """``9:00`` or ``09:00`` → ``"09:00"`` (24-hour clock)."""
    found = _CLOCK.fullmatch(text.strip())
    if not found or int(found[1]) > 23 or int(found[2]) > 59:
        raise BadTime(f"`{text}` is not a time of day: write it as `HH:MM`, e.g. `09:00`.")
    return f"{int(found[1]):02d}:{found[2]}"


def parse_at(text: str, now: float) -> float:
    """``14:30`` (the next time the clock shows it: today, or tomorrow once passed) or
    ``2026-12-24 14:30``, local time → epoch seconds, in the future."""
    words = text.strip()
    dated = _DATE_CLOCK.fullmatch(words)
    if dated:
        year, month, day, hour, minute = (int(part) for part in dated.groups())
        try:
            moment = datetime(year, month, day, hour, minute).timestamp()
        except ValueError:
            raise BadTime(f"`{text}` is not a date and time.") from None
        if moment <= now:
            raise BadTime(f"{show_moment(moment, now)} has passed.")
        if moment - now > MAX_AHEAD:
            raise BadTime("A one-off prompt is at most a year ahead.")
        return moment
    try:
        clock = parse_clock(words)
    except BadTime:
        raise BadTime(
            f"`{text}` is not a time: write `HH:MM` (today, or tomorrow once passed) or "
            "`YYYY-MM-DD HH:MM`, local time."
        ) from None
    return _next_clock(clock, now, lambda day: True)


def parse_cron(expression: str, now: float) -> str:
    """A five-field cron expression, checked (and that it ever runs) → itself, tidied."""
    tidy = " ".join(expression.split())
    try:
        next(CronSim(tidy, datetime.fromtimestamp(now)))
    except (CronSimError, StopIteration) as err:
        raise BadTime(
            f"`{expression}` is not a cron expression cronsim reads ({err}): five fields, "
            "minute hour day-of-month month day-of-week, e.g. `0 9 * * 1-5`."
        ) from None
    return tidy


def next_run(rule: dict, after: float) -> float | None:
    """The first moment strictly after ``after`` at which ``rule`` runs (None: never again,
    a one-off already past)."""
    kind = rule["kind"]
    if kind == "once":
        return rule["at"] if rule["at"] > after else None
    if kind == "daily":
        return _next_clock(rule["time"], after, lambda day: True)
    if kind == "weekdays":
        return _next_clock(rule["time"], after, lambda day: day.weekday() < 5)
    if kind == "hours":
        step, anchor = rule["hours"] * 3600.0, rule["anchor"]
        if after < anchor:
            return anchor
        return anchor + (int((after - anchor) // step) + 1) * step
    if kind == "cron":
        start = datetime.fromtimestamp(after).replace(microsecond=0)
        for moment in CronSim(rule["cron"], start):
            stamp = moment.timestamp()
            if stamp > after:
                return stamp
        return None
    raise ValueError(f"unknown schedule kind {kind!r}")


def runs_between(rule: dict, start: float, end: float, limit: int = 1000) -> int:
    """How many times ``rule`` would have run in ``[start, end]`` (at most ``limit``): what a
    bot that was off missed."""
    count, moment = 0, start
    while count < limit:
        if count:
            found = next_run(rule, moment)
            if found is None or found > end:
                break
            moment = found
        elif moment > end:
            break
        count += 1
    return count


def describe(rule: dict, now: float, said: str | None = None) -> str:
    """The rule in words, with the zone: ``daily at 09:00 (local time, CET)``; without it when
    it is ``said`` already (a list whose heading names it once)."""
    name = zone_name(now)
    kind, zone = rule["kind"], "" if name == said else f" (local time, {name})"
    if kind == "once":
        return f"once at {show_moment(rule['at'], now, said)}"
    if kind == "daily":
        return f"daily at {rule['time']}{zone}"
    if kind == "weekdays":
        return f"weekdays (Mon–Fri) at {rule['time']}{zone}"
    if kind == "hours":
        hours = rule["hours"]
        return "every hour" if hours == 1 else f"every {hours} hours"
    if kind == "cron":
        return f"cron `{rule['cron']}`{zone}"
    return kind


def show_moment(moment: float, now: float, said: str | None = None) -> str:
    """``14:30 (local time, CET)`` today, else ``Thu 2026-11-26 14:30 (local time, CET)``; the
    zone left out when it is ``said`` already (a moment past a DST change still names its own)."""
    local = datetime.fromtimestamp(moment)
    same_day = local.date() == datetime.fromtimestamp(now).date()
    shown = local.strftime("%H:%M") if same_day else local.strftime("%a %Y-%m-%d %H:%M")
    if local.second and abs(moment - now) < 3600:
        shown = local.strftime("%H:%M:%S") if same_day else shown
    zone = zone_name(moment)
    return shown if zone == said else f"{shown} (local time, {zone})"


def _next_clock(clock: str, after: float, day_ok: Callable[[datetime], bool]) -> float:
    """The first local ``HH:MM`` strictly after ``after`` on a day ``day_ok`` accepts."""
    hour, minute = (int(part) for part in clock.split(":"))
    day = datetime.fromtimestamp(after).replace(hour=hour, minute=minute, second=0, microsecond=0)
    for _ in range(8):
        stamp = day.timestamp()
        if stamp > after and day_ok(day):
            return stamp
        day = (day + timedelta(days=1)).replace(hour=hour, minute=minute)
    raise AssertionError("no day in a week was accepted")  # weekdays has five
