"""The ``metrics`` section: off and on loopback by default, each wrong value named."""

from __future__ import annotations

import copy

from bridge import config
from tests.unit.config.test_config import GOOD


def test_metrics_are_off_and_on_loopback_by_default() -> None:
    metrics = config.BridgeConfig(copy.deepcopy(GOOD), env={}).metrics
    assert (metrics.enabled, metrics.host, metrics.port, metrics.outbox_stuck) == (
        False,
        "127.0.0.1",
        9464,
        300.0,
    )


def test_metrics_settings_are_read() -> None:
    raw = copy.deepcopy(GOOD)
    raw["metrics"] = {"enabled": True, "host": "::1", "port": 0, "outboxStuckSeconds": 60}
    metrics = config.BridgeConfig(raw, env={}).metrics
    assert (metrics.enabled, metrics.host, metrics.port, metrics.outbox_stuck) == (
        True,
        "::1",
        0,
        60.0,
    )


def test_wrong_metrics_settings_are_named() -> None:
    raw = copy.deepcopy(GOOD)
    raw["metrics"] = {
        "enabled": "yes",
        "host": "localhost",
        "port": 70000,
        "outboxStuckSeconds": 1,
        "path": "/x",
    }
    assert config.validate(raw) == [
        "metrics.path: unknown key; expected one of enabled, host, port, outboxStuckSeconds",
        "metrics.enabled: expected true or false",
        'metrics.host: expected an IP address to listen on, e.g. "127.0.0.1" (the default, this '
        'machine only) or "::1"; "0.0.0.0" exposes the metrics to the network',
        "metrics.port: expected a TCP port from 1 to 65535 (0: any free port)",
        "metrics.outboxStuckSeconds: expected seconds between 10 and 86400",
    ]
    raw["metrics"] = True
    assert config.validate(raw) == [
        "metrics: expected an object (enabled, host, port, outboxStuckSeconds)"
    ]
