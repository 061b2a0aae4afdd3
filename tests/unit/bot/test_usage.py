"""What /usage and the panel say about cost, context and the plan's limits."""

from __future__ import annotations

import pytest

from bridge.bot.away.usage import NOT_REPORTED, compact_line, plan_text, usage_text
from bridge.state import runtime, usage_totals

NOW = 1_800_000_000.0


@pytest.fixture
def rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()


def test_a_subscription_shows_both_windows_with_their_resets() -> None:
    record = {
        "rate_limits": {"five_hour": 23.4, "seven_day": 41.0},
        "rate_limit_resets": {"five_hour": NOW + 3600, "seven_day": NOW - 5},
    }
    text = plan_text(record, NOW)
    reset = int(NOW + 3600)
    assert text == (
        f"Plan: 5-hour 23% used, resets <t:{reset}:R> (<t:{reset}:f>); 7-day 41% used"
    )  # (a reset in the past is not shown)


def test_an_api_key_account_says_plainly_that_it_is_not_reported() -> None:
    assert plan_text({}, NOW) == NOT_REPORTED
    assert plan_text({"rate_limits": {"five_hour": "x"}}, NOW) == NOT_REPORTED
    assert "API key" in NOT_REPORTED


def test_usage_text_has_the_session_today_and_the_plan(rt) -> None:
    usage_totals.add(rt, "s1", 0.75, NOW)
    usage_totals.add(rt, "s2", 0.50, NOW)
    record = {"cost_usd": 0.75, "context_percent": 12.2, "model_name": "Opus *5*"}
    text = usage_text(rt, "my_project", record, NOW).splitlines()
    assert text[0] == "**my\\_project**"
    assert text[1] == "This session: $0.75 so far · context 12% used · Opus \\*5\\*"
    assert text[2] == f"Today ({usage_totals.day(NOW)}): $1.25 across 2 sessions of this bridge"
    assert text[3] == NOT_REPORTED
    assert usage_text(rt, "p", {}, NOW).splitlines()[1].startswith("This session: no figures")


def test_the_panel_line_is_compact_and_leaves_the_model_out() -> None:
    record = {
        "model_name": "Opus 5.5",
        "context_percent": 12,
        "cost_usd": 0.4321,
        "rate_limits": {"five_hour": 23},
    }
    assert compact_line(record) == "ctx 12% · $0.43 · 5h 23%"
    assert compact_line({}) == ""
