"""``metrics``: the operator's endpoint (Prometheus text and ``/health``), validated and as
an object. Off unless the file turns it on; it listens on loopback unless told otherwise.

On the hooks' fast path (``model`` imports it): ``os`` only at import.
"""

from __future__ import annotations

DEFAULT_METRICS_HOST = "127.0.0.1"
DEFAULT_METRICS_PORT = 9464  # Prometheus' registry of default ports: free for exporters
# An outbox entry older than this makes /health say the outbox is stuck (the drain retries
# every minute at most; five missed rounds is more than a blip).
DEFAULT_OUTBOX_STUCK_SECONDS = 300.0
LOOPBACK_NAMES = ("localhost",)
KEYS = ("enabled", "host", "port", "outboxStuckSeconds")


class MetricsSettings:
    """``metrics``: ``enabled`` (default false), ``host`` (default loopback), ``port`` (0: a
    free port, logged), ``outbox_stuck`` seconds."""

    __slots__ = ("enabled", "host", "outbox_stuck", "port")

    def __init__(self, raw: dict) -> None:
        self.enabled: bool = raw.get("enabled", False) is True
        self.host: str = raw.get("host", DEFAULT_METRICS_HOST)
        self.port: int = int(raw.get("port", DEFAULT_METRICS_PORT))
        self.outbox_stuck: float = float(
            raw.get("outboxStuckSeconds", DEFAULT_OUTBOX_STUCK_SECONDS)
        )

    def __repr__(self) -> str:
        return f"<MetricsSettings {'on' if self.enabled else 'off'} {self.host}:{self.port}>"


def check_metrics(raw: dict, problems: list[str]) -> None:
    """Every problem of ``metrics``, as ``metrics.key: what is wrong, how to fix it``."""
    metrics = raw.get("metrics")
    if metrics is None:
        return
    if not isinstance(metrics, dict):
        problems.append(f"metrics: expected an object ({', '.join(KEYS)})")
        return
    unknown = sorted(str(key) for key in metrics if key not in KEYS)
    if unknown:
        problems.append(f"metrics.{unknown[0]}: unknown key; expected one of {', '.join(KEYS)}")
    if not isinstance(metrics.get("enabled", False), bool):
        problems.append("metrics.enabled: expected true or false")
    if not _is_address(metrics.get("host", DEFAULT_METRICS_HOST)):
        problems.append(
            'metrics.host: expected an IP address to listen on, e.g. "127.0.0.1" (the '
            'default, this machine only) or "::1"; "0.0.0.0" exposes the metrics to the network'
        )
    port = metrics.get("port", DEFAULT_METRICS_PORT)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        problems.append("metrics.port: expected a TCP port from 1 to 65535 (0: any free port)")
    stuck = metrics.get("outboxStuckSeconds", DEFAULT_OUTBOX_STUCK_SECONDS)
    if not isinstance(stuck, int | float) or isinstance(stuck, bool) or not 10 <= stuck <= 86400:
        problems.append("metrics.outboxStuckSeconds: expected seconds between 10 and 86400")


def is_loopback(host: str) -> bool:
    import ipaddress

    return host in LOOPBACK_NAMES or ipaddress.ip_address(host).is_loopback


def _is_address(value: object) -> bool:
    if not isinstance(value, str):
        return False
    if value in LOOPBACK_NAMES:
        return True
    import ipaddress  # only when the section is there: the hooks never get this far

    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
