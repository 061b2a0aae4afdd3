"""REST plumbing: outages, counters, forced 429s, buckets, auth, errors, rate-limit headers."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .responses import AFTER_FLUSH, BOT_KEY, json_response, route_key
from .state import Bucket, State
from .validation import ApiError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
UNAUTHORIZED = {"message": "401: Unauthorized", "code": 0}
# Interaction and webhook-token routes carry their credential in the path (pitfall 4).
TOKEN_ROUTES = ("/interactions/", "/webhooks/{webhook_id}/{webhook_token}")

# Discord's limits, enforced only when ``State.rate_limits`` is on (``Emulator(rate_limits=True)``
# or ``client.settings(rate_limits=True)``): 50 requests a second per bot token (Discord's global
# limit), and the per-route buckets below.
GLOBAL_LIMIT = (50, 1.0)  # requests per window, per bot token; token routes are exempt
# Per route *and* top-level resource (the channel, guild or webhook in the path): each channel
# has its own message-create bucket. Discord does not publish these; they are the commonly
# observed values (messages ~5/5 s, reactions 1/0.25 s). Other routes get DEFAULT_ROUTE_LIMIT.
ROUTE_LIMITS = {
    "POST /channels/{channel_id}/messages": (5, 5.0),
    "PATCH /channels/{channel_id}/messages/{message_id}": (5, 5.0),
    "DELETE /channels/{channel_id}/messages/{message_id}": (5, 5.0),
    "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me": (1, 0.25),
    "DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me": (1, 0.25),
}
DEFAULT_ROUTE_LIMIT = (50, 1.0)
MAJOR_PARAMS = ("channel_id", "guild_id", "webhook_id", "interaction_id")


def _main_port_refused(request: web.Request, st: State, main_port: int) -> bool:
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    return st.outage == "refuse" and bool(sock) and sock[1] == main_port


def make_middleware(st: State, main_port: Callable[[], int]) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        is_rest = request.path.startswith("/api/")
        if _main_port_refused(request, st, main_port()) and not request.path.startswith("/_test"):
            # A keep-alive connection opened before the outage: drop it like a dead server.
            st.counters[f"REFUSED {route_key(request)}"] += 1
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=503)
        if request.path.startswith("/_test") and not _control_allowed(request, st):
            return json_response(UNAUTHORIZED, 401)
        if not is_rest:
            try:
                return await handler(request)
            except ApiError as err:
                return json_response(err.body(), err.status)
        response = await _rest(request, handler, st)
        await _flush_then_run(request, response)
        return response

    return middleware


async def _rest(request: web.Request, handler: Handler, st: State) -> web.StreamResponse:
    route = route_key(request)
    st.counters[route] += 1
    if st.outage == "503":
        st.counters[f"503 {route}"] += 1
        return json_response({"message": "503: Service Unavailable", "code": 0}, 503)
    limited = _forced_429(st, route) or _bucket_429(st, route)
    if limited is not None:
        st.counters[f"429 {route}"] += 1
        return limited
    if not _authorized(request, st, route):
        st.counters[f"401 {route}"] += 1
        return json_response(UNAUTHORIZED, 401)
    bucket = None
    if st.rate_limits and route not in st.buckets:
        bucket = _resource_bucket(request, st, route)
        limited = _global_429(request, st, route) or _take(bucket, route, st)
        if limited is not None:
            return limited
    try:
        response = await handler(request)
    except ApiError as err:
        request.pop(AFTER_FLUSH, None)  # a failed request has no effects
        response = json_response(err.body(), err.status)
    response.headers.update(_ratelimit_headers(st, route, bucket))
    return response


def _control_allowed(request: web.Request, st: State) -> bool:
    """The control API is open unless the emulator was given a control token."""
    if st.control_token is None:
        return True
    import hmac

    given = request.headers.get("Authorization") or ""
    return hmac.compare_digest(given.encode(), f"Bearer {st.control_token}".encode())


def _authorized(request: web.Request, st: State, route: str) -> bool:
    path = route.split(" ", 1)[1]
    if path.startswith(TOKEN_ROUTES):
        return True
    header = request.headers.get("Authorization") or ""
    bot = st.bots.get(header[4:]) if header.startswith("Bot ") else None
    if bot is not None:
        request[BOT_KEY] = bot
    return bot is not None


def _too_many(retry_after: float, global_: bool, scope: str, route: str) -> web.Response:
    headers = {
        "Retry-After": str(max(1, round(retry_after))),
        "X-RateLimit-Scope": scope,
        # Without Via discord.py assumes a Cloudflare ban and gives up (pitfall 2).
        "Via": "1.1 google",
        "X-RateLimit-Limit": "1",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset-After": f"{retry_after:.3f}",
        "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
        "X-RateLimit-Bucket": _bucket_hash(route),
    }
    if global_:
        headers["X-RateLimit-Global"] = "true"
    body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": global_}
    return json_response(body, 429, headers)


def _forced_429(st: State, route: str) -> web.Response | None:
    for key in (route, "*"):
        forced = st.forced.get(key)
        if forced is not None and forced.count > 0:
            forced.count -= 1
            scope = "global" if forced.global_ else "user"
            return _too_many(forced.retry_after, forced.global_, scope, route)
    return None


def _bucket_429(st: State, route: str) -> web.Response | None:
    bucket = st.buckets.get(route)
    if bucket is None:
        return None
    now = time.monotonic()
    if now >= bucket.reset_at:
        bucket.remaining, bucket.reset_at = bucket.limit, now + bucket.window
    if bucket.remaining <= 0:
        return _too_many(bucket.reset_at - now, False, "user", route)
    bucket.remaining -= 1
    return None


def _resource_bucket(request: web.Request, st: State, route: str) -> Bucket:
    """The bucket of this route for the resource named in the path (its channel, guild…)."""
    major = next((request.match_info[k] for k in MAJOR_PARAMS if k in request.match_info), "")
    key = f"{route} {major}"
    bucket = st.resource_buckets.get(key)
    if bucket is None:
        limit, window = ROUTE_LIMITS.get(route, DEFAULT_ROUTE_LIMIT)
        bucket = st.resource_buckets[key] = Bucket(limit, window)
    return bucket


def _take(bucket: Bucket, route: str, st: State, global_: bool = False) -> web.Response | None:
    """Count one request against ``bucket``: None, or the 429 once it is spent."""
    now = time.monotonic()
    if now >= bucket.reset_at:
        bucket.remaining, bucket.reset_at = bucket.limit, now + bucket.window
    if bucket.remaining <= 0:
        st.counters["429 global" if global_ else f"429 {route}"] += 1
        scope = "global" if global_ else "user"
        return _too_many(bucket.reset_at - now, global_, scope, route)
    bucket.remaining -= 1
    return None


def _global_429(request: web.Request, st: State, route: str) -> web.Response | None:
    """50 requests/s per bot token, interaction and webhook-token routes not counted."""
    path = route.split(" ", 1)[1]
    if path.startswith(TOKEN_ROUTES):
        return None
    token = request.headers.get("Authorization", "")
    bucket = st.global_buckets.get(token)
    if bucket is None:
        bucket = st.global_buckets[token] = Bucket(*GLOBAL_LIMIT)
    return _take(bucket, route, st, global_=True)


def _bucket_hash(route: str) -> str:
    return hashlib.sha1(route.encode()).hexdigest()[:16]


def _ratelimit_headers(st: State, route: str, resource: Bucket | None) -> dict[str, str]:
    bucket = st.buckets.get(route) or resource
    if bucket is not None:
        limit, remaining = bucket.limit, bucket.remaining
        reset_after = max(0.0, bucket.reset_at - time.monotonic())
    else:
        limit, remaining, reset_after = 50, 49, 1.0
    return {
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
        "X-RateLimit-Reset-After": f"{reset_after:.3f}",
        "X-RateLimit-Bucket": _bucket_hash(route),
    }


async def _flush_then_run(request: web.Request, response: web.StreamResponse) -> None:
    """Write the response out, then publish the request's deferred effects (pitfall 12)."""
    actions = request.pop(AFTER_FLUSH, None)
    if not actions:
        return
    try:
        await response.prepare(request)
        await response.write_eof()
    except ConnectionError:
        pass
    for action in actions:
        action()
