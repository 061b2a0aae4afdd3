"""The blocking sender: a small Discord REST client for hooks, rate limits and retries.

discord.py does all of this for the bot's own calls (``bridge.bot.courier`` is the bot's
sender); hooks post over REST directly and must do it themselves. What to send and what an
answer means is decided in :mod:`bridge.discord.post`; this module only does the I/O: the
request, waiting out a route's bucket, retrying 429s, 5xx and connection errors. httpx is
imported when the first request is made, never on a hook's fast path. Retries are bounded by a
budget (≈ 20 s in all) so a hook never hangs Claude Code; what cannot be delivered in time is
spooled to the outbox by the caller.
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

DEFAULT_BUDGET = 20.0  # seconds a caller may spend on one request, retries included
ENV_BUDGET = "DISCORD_BRIDGE_RETRY_SECONDS"
USER_AGENT = "DiscordBot (https://github.com/discord-bridge/discord-bridge, 0.1.0)"

from bridge.discord import post as posting  # noqa: E402
from bridge.discord.post import DeliveryError, Post  # noqa: E402  (re-exported)


def load_site_packages() -> None:
    """Hook commands run with ``python -S`` (no site: a faster start); httpx lives in
    site-packages, so set site up now, once, when a request is really about to be made."""
    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()


def budget_from_env() -> float:
    try:
        return float(os.environ.get(ENV_BUDGET, DEFAULT_BUDGET))
    except ValueError:
        return DEFAULT_BUDGET


class DiscordREST:
    """Blocking REST calls with Discord's rate-limit headers honoured."""

    def __init__(self, api_base: str, token: str, budget: float | None = None) -> None:
        load_site_packages()
        import httpx  # deferred: hooks import this module only when they have work

        self._httpx = httpx
        self.api_base = api_base.rstrip("/")
        self.budget = budget_from_env() if budget is None else budget
        self._client = httpx.Client(
            headers={"Authorization": f"Bot {token}", "User-Agent": USER_AGENT},
            timeout=httpx.Timeout(10.0, connect=3.0),
        )
        self._blocked_until: dict[str, float] = {}  # route -> monotonic time its bucket resets

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> DiscordREST:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- endpoints -------------------------------------------------------------------

    def send_post(self, channel_id: str, post: Post) -> dict:
        """Create the message (returns it); when Discord refuses its files for good, send
        what :func:`~bridge.discord.post.instead_of_refused_files` says instead."""
        try:
            return self.create_message(channel_id, post)
        except DeliveryError as err:
            instead = posting.instead_of_refused_files(post, err)
            if not instead:
                raise
            sent = [self.create_message(channel_id, other) for other in instead]
            return sent[0]  # the text, or the note when there was none

    def create_message(self, channel_id: str, post: Post) -> dict:
        path = f"/channels/{channel_id}/messages"
        if not post.files:
            return self.request("POST", path, json=post.payload)
        payload_json, parts = posting.multipart(post)
        files = [(field, (name, data, "application/octet-stream")) for field, name, data in parts]
        return self.request("POST", path, data={"payload_json": payload_json}, files=files)

    def edit_message(self, channel_id: str, message_id: str, payload: dict) -> dict:
        return self.request("PATCH", f"/channels/{channel_id}/messages/{message_id}", json=payload)

    def get(self, path: str) -> dict:
        return self.request("GET", path)

    # --- retry loop ------------------------------------------------------------------

    def request(self, method: str, path: str, **kwargs: Any) -> dict:
        """Send one request, retrying 429s, 5xx and connection errors within the budget."""
        route = f"{method} {_route_key(path)}"
        deadline = time.monotonic() + self.budget
        attempt = 0
        while True:
            self._wait_for_bucket(route, deadline)
            # A server that accepts and never answers must not hold us past the budget.
            remaining = max(0.1, deadline - time.monotonic())
            timeout = self._httpx.Timeout(min(10.0, remaining), connect=min(3.0, remaining))
            try:
                response = self._client.request(
                    method, self.api_base + path, timeout=timeout, **kwargs
                )
            except self._httpx.TransportError as err:
                delay, why = _backoff(attempt), str(posting.unreachable(err))
            else:
                self._remember_bucket(route, response.headers)
                if response.status_code < 300:
                    return response.json() if response.content else {}
                delay, why = self._retry_delay(response, attempt)
            attempt += 1
            if time.monotonic() + delay > deadline:
                raise DeliveryError(f"{method} {path}: {why}; gave up", retryable=True)
            time.sleep(delay)

    def _retry_delay(self, response: httpx.Response, attempt: int) -> tuple[float, str]:
        """How long to wait before sending again (429 and 5xx: within the budget, as
        discord.py does for the bot); any other answer is final: its :func:`refusal`."""
        status = response.status_code
        if status == 429:
            return _retry_after(response), "rate limited"
        if status >= 500:
            return _backoff(attempt), f"Discord answered {status}"
        # A 401 is not sent again now (it only counts against Discord's invalid-request
        # limit); whether it is worth trying later is the refusal's to say.
        raise posting.refusal(status, response.text, _error_code(response))

    def _wait_for_bucket(self, route: str, deadline: float) -> None:
        until = self._blocked_until.pop(route, 0.0)
        pause = until - time.monotonic()
        if pause > 0:
            if time.monotonic() + pause > deadline:
                raise DeliveryError(f"{route}: rate limit resets too late", retryable=True)
            time.sleep(pause)

    def _remember_bucket(self, route: str, headers: httpx.Headers) -> None:
        if headers.get("X-RateLimit-Remaining") == "0":
            try:
                reset_after = float(headers.get("X-RateLimit-Reset-After", "0"))
            except ValueError:
                return
            self._blocked_until[route] = time.monotonic() + reset_after


def _route_key(path: str) -> str:
    """The path without its query: one bucket per route and channel, which is how Discord
    scopes message buckets (by top-level resource)."""
    return path.split("?")[0]


def _retry_after(response: httpx.Response) -> float:
    try:
        return float(response.json()["retry_after"])
    except (ValueError, KeyError, TypeError):
        try:
            return float(response.headers.get("Retry-After", "1"))
        except ValueError:
            return 1.0


def _error_code(response: httpx.Response) -> int | None:
    try:
        code = response.json().get("code")
    except (ValueError, AttributeError, RecursionError):
        return None
    return code if isinstance(code, int) else None


def _backoff(attempt: int) -> float:
    """0.25 s, 0.5 s, 1 s … capped at 4 s, with jitter so retries from many hooks spread out."""
    return min(4.0, 0.25 * 2**attempt) * random.uniform(0.8, 1.2)
