"""Claude.ai usage limits as the Messages API reports them, for the scripted turns in ``turns``.

Measured with Claude Code 2.1.332:
the CLI reads the ``anthropic-ratelimit-unified-*`` response headers only for a claude.ai
subscriber login (``CLAUDE_CODE_OAUTH_TOKEN``, see ``claude_cli.claude_env``). Then a 429 with
them shows "You've hit your 5-hour limit · resets 1:51pm (UTC)", StopFailure reports
``error: "rate_limit"``, the statusLine gets ``rate_limits.five_hour`` and the CLI arms its
own continue at the reset; a 200 with them past 75 % shows "You've used 86% of your 5-hour
limit". With an API key the same 429 is a plain "API Error: Request rejected (429) · …".
"""

from __future__ import annotations

import time

# The CLI's window names and the short forms in the header names.
WINDOWS = {"five_hour": "5h", "seven_day": "7d"}
WARNING_THRESHOLD = 0.75  # the first threshold the CLI warns at ("surpassed-threshold")
LIMIT_MESSAGE = "This request would exceed your account's rate limit. Please try again later."


def usage_headers(utilization: float, resets_at: int, window: str = "five_hour") -> dict[str, str]:
    """The headers for a subscriber at ``utilization`` (1.0 = the limit) of ``window``, which
    resets at ``resets_at`` (Unix seconds)."""
    if window not in WINDOWS:
        raise ValueError(f"window must be one of {sorted(WINDOWS)}, not {window!r}")
    status = _status(utilization)
    prefix = f"anthropic-ratelimit-unified-{WINDOWS[window]}"
    headers = {
        "anthropic-ratelimit-unified-status": status,
        "anthropic-ratelimit-unified-representative-claim": window,
        "anthropic-ratelimit-unified-reset": str(resets_at),
        f"{prefix}-status": status,
        f"{prefix}-utilization": f"{utilization:.2f}",
        f"{prefix}-reset": str(resets_at),
    }
    if status == "allowed_warning":
        headers[f"{prefix}-surpassed-threshold"] = str(WARNING_THRESHOLD)
    return headers


def limit_headers(resets_at: int, window: str = "five_hour") -> dict[str, str]:
    """The headers of the 429 that refuses a request at the limit: the usage headers plus
    ``retry-after`` (seconds to the reset) and ``x-should-retry: false`` (no SDK retries)."""
    retry_after = max(1, resets_at - int(time.time()))
    return {
        **usage_headers(1.0, resets_at, window),
        "retry-after": str(retry_after),
        "x-should-retry": "false",
    }


def _status(utilization: float) -> str:
    if utilization >= 1:
        return "rejected"
    return "allowed_warning" if utilization >= WARNING_THRESHOLD else "allowed"
