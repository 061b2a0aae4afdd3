"""The ``metrics`` section of config.json checked (``bridge/config/validate.py`` asks only when a
config has one: a hook that validates the file does not load these checks otherwise)."""

from __future__ import annotations

from bridge.config.defaults import (
    DEFAULT_METRICS_PORT,
    DEFAULT_OUTBOX_STUCK_SECONDS,
    METRICS_KEYS,
)


def check_metrics(metrics: object, problems: list[str]) -> None:
    """The ``metrics`` section's problems, each with its path."""
    if not isinstance(metrics, dict):
        problems.append(f"metrics: expected an object ({', '.join(METRICS_KEYS)})")
        return
    unknown = sorted(str(key) for key in metrics if key not in METRICS_KEYS)
    if unknown:
        problems.append(
            f"metrics.{unknown[0]}: unknown key; expected one of {', '.join(METRICS_KEYS)}"
        )
    check_bool(metrics, "enabled", "metrics", problems)
    if "host" in metrics and not _is_ip_address(metrics["host"]):
        problems.append(
            'metrics.host: expected an IP address to listen on, e.g. "127.0.0.1" (the '
            'default, this machine only) or "::1"; "0.0.0.0" exposes the metrics to the network'
        )
    port = metrics.get("port", DEFAULT_METRICS_PORT)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        problems.append("metrics.port: expected a TCP port from 1 to 65535 (0: any free port)")
    stuck = metrics.get("outboxStuckSeconds", DEFAULT_OUTBOX_STUCK_SECONDS)
    if not is_number(stuck) or not 10 <= stuck <= 86400:
        problems.append("metrics.outboxStuckSeconds: expected seconds between 10 and 86400")


def _is_ip_address(value: object) -> bool:
    """An IPv4 or IPv6 address's shape (no ``ipaddress`` import: hooks validate the file
    too); the bot's listen call has the last word."""
    if not isinstance(value, str) or not value.isascii() or not 2 <= len(value) <= 45:
        return False
    if ":" in value:
        return all(c in "0123456789abcdefABCDEF:." for c in value)
    parts = value.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) <= 255 for p in parts)


def check_bool(obj: dict, key: str, where: str, problems: list) -> None:
    if key in obj and not isinstance(obj[key], bool):
        problems.append(f"{where}.{key}: expected true or false")


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
