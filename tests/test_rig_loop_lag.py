"""The e2e rig fails a test whose bot's event loop lagged over 2 s (bot/loop_watch.py's
warning in the bot's log) because the bot held it, and lets pass one that lagged less, or in
which the bot's process did not run (frozen by the test, or starved of a CPU)."""

from __future__ import annotations

import pytest

from bridge_testkit.rig import BridgeRig, long_loop_lags

WATCH = "2026-11-29 02:00:01,000 WARNING bridge.bot.loop_watch:"
UNDER = (
    f"{WATCH} event loop lag 812 ms (over 250 ms, 5 ms of CPU); it was running at 300 ms: a.py:1 f"
)
OVER = (
    f"{WATCH} event loop lag 40250 ms (over 250 ms, 12 ms of CPU); "
    "it was running at 260 ms: private_files.py:58 _write"
)
COMPUTING = (
    f"{WATCH} event loop lag 3100 ms (over 250 ms, 3050 ms of CPU); it was running: (not caught)"
)
FROZEN = f"{WATCH} event loop lag 25629 ms (over 250 ms, 0 ms of CPU); it was running: (not caught)"
STARVED = (
    f"{WATCH} event loop lag 2279 ms (over 250 ms, 40 ms of CPU); "
    "it was running at 2200 ms: selectors.py:468 select ← base_events.py:1884 _run_once"
)


def rig_with_log(tmp_path, text: str) -> BridgeRig:
    rig = BridgeRig.__new__(BridgeRig)  # only its log: no emulator, tmux or CLI needed
    rig.bot_log = tmp_path / "bot.log"
    rig.bot_log.write_text(text)
    return rig


def test_a_lag_over_two_seconds_fails_the_test(tmp_path) -> None:
    assert long_loop_lags(f"{UNDER}\n{OVER}\n") == [OVER]
    with pytest.raises(AssertionError, match="event loop lag 40250 ms"):
        rig_with_log(tmp_path, f"started\n{UNDER}\n{OVER}\n").assert_loop_kept_up()


def test_shorter_lags_pass(tmp_path) -> None:
    rig_with_log(tmp_path, f"started\n{UNDER}\n").assert_loop_kept_up()


def test_code_computing_on_the_loop_fails_even_when_no_stack_was_caught() -> None:
    assert long_loop_lags(COMPUTING) == [COMPUTING]


RESUMED = (
    f"{WATCH} event loop lag 2142 ms (over 250 ms, 31 ms of CPU); it was running at 2140 ms: "
    "selector_events.py:1057 write ← writer.py:171 _write_websocket_frame"
)


def test_a_bot_that_did_not_run_is_not_a_bot_that_held_its_loop(tmp_path) -> None:
    """Frozen (SIGSTOP), starved, or its stack read only once it ran again: what it was doing
    then is not what held it."""
    rig_with_log(tmp_path, f"{FROZEN}\n{STARVED}\n{RESUMED}\n").assert_loop_kept_up()
