"""The e2e rig fails a test whose bot's event loop lagged over 2 s (bot/loop_watch.py's
warning in the bot's log), and lets one that lagged less pass."""

from __future__ import annotations

import pytest

from bridge_testkit.rig import BridgeRig, long_loop_lags

WATCH = "2026-11-29 02:00:01,000 WARNING bridge.bot.loop_watch:"
UNDER = f"{WATCH} event loop lag 812 ms (over 250 ms); it was running: a.py:1 f"
OVER = f"{WATCH} event loop lag 40250 ms (over 250 ms); it was running: private_files.py:58 _write"


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
