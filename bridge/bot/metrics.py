"""The bot's metrics: instruments the rooms count into, kept in a registry of their own.

prometheus_client's instruments are plain in-memory numbers (a lock and an add): counting is
as cheap with metrics off as on, so the rooms count unconditionally and only the endpoint
(``bot/operations/endpoint.py``) is opt-in. Labels never carry message text, paths or ids:
a project's name (the owner chose it), a server's name, a Discord route's template
(``POST /channels/{channel_id}/messages``), an HTTP status, a hook event's name.

Discord requests are seen twice: :func:`count_requests` wraps the client's ``request`` to
know the route (its template, from discord.py's ``Route``), and :func:`request_trace` (an
aiohttp trace on discord.py's session) sees each attempt's status, 429s included, which
discord.py waits out and retries inside one ``request``.
"""

from __future__ import annotations

import contextvars
import functools
from typing import Any

import aiohttp
from discord.http import HTTPClient, Route
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)
PREFIX = "discord_bridge_"

MESSAGES_RELAYED = Counter(
    PREFIX + "messages_relayed",
    "Discord messages typed into a session",
    ["project"],
    registry=REGISTRY,
)
OUTBOX_POSTED = Counter(
    PREFIX + "outbox_posted",
    "Outbox entries the bot posted (hand-offs and spooled replies)",
    registry=REGISTRY,
)
HOOK_POSTS = Counter(
    PREFIX + "hook_posts",
    "Messages of the hooks by way: handoff (to the bot), direct (the hook's own REST), spooled",
    ["way"],
    registry=REGISTRY,
)
HOOK_DURATION = Histogram(
    PREFIX + "hook_duration_seconds",
    "Time a hook's handler took, by event",
    ["event"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900),
    registry=REGISTRY,
)
DISCORD_REQUESTS = Counter(
    PREFIX + "discord_requests",
    "Requests to Discord's REST API by route template and status (each attempt)",
    ["route", "status"],
    registry=REGISTRY,
)
DISCORD_RATE_LIMITED = Counter(
    PREFIX + "discord_rate_limited",
    "429 answers from Discord by route template",
    ["route"],
    registry=REGISTRY,
)
GATEWAY_CONNECTS = Counter(
    PREFIX + "gateway_connects",
    "Gateway sessions by kind: ready (a new session; after the first, a reconnect), resumed",
    ["server", "kind"],
    registry=REGISTRY,
)
TURNS = Counter(
    PREFIX + "turns",
    "Turns that ended, by project and outcome",
    ["project", "outcome"],
    registry=REGISTRY,
)
TURN_COST = Counter(
    PREFIX + "turn_cost_usd",
    "What the ended turns cost (Claude Code's figure), USD",
    ["project"],
    registry=REGISTRY,
)
LOOP_LAG = Histogram(
    PREFIX + "event_loop_lag_seconds",
    "How late the bot's event loop woke for its beat",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=REGISTRY,
)
# Read at each scrape (bot/operations/snapshot.py)
SESSIONS = Gauge(
    PREFIX + "sessions",
    "Sessions by project and state (working, waiting, idle, dead, stopped)",
    ["project", "state"],
    registry=REGISTRY,
)
OUTBOX_DEPTH = Gauge(PREFIX + "outbox_entries", "Messages waiting in the outbox", registry=REGISTRY)
OUTBOX_OLDEST = Gauge(
    PREFIX + "outbox_oldest_age_seconds",
    "Age of the oldest outbox entry (0: empty)",
    registry=REGISTRY,
)
PROMPTS_WAITING = Gauge(
    PREFIX + "prompts_waiting", "Prompts waiting for a decision", registry=REGISTRY
)
PROMPTS_OLDEST = Gauge(
    PREFIX + "prompts_oldest_age_seconds",
    "Age of the oldest waiting prompt (0: none)",
    registry=REGISTRY,
)
LIMIT_WAITS = Gauge(
    PREFIX + "usage_limit_waits", "Sessions waiting for a usage limit's reset", registry=REGISTRY
)
COST_TODAY = Gauge(
    PREFIX + "cost_today_usd", "What every session cost today (local day), USD", registry=REGISTRY
)
UP = Gauge(PREFIX + "ready", "1 while every server's bot is logged in and ready", registry=REGISTRY)

_route: contextvars.ContextVar[str] = contextvars.ContextVar("discord_route", default="")


def count_requests(http: HTTPClient) -> None:
    """Name the route (its template) of each request ``http`` makes, for the trace."""
    request = http.request

    @functools.wraps(request)
    async def named(route: Route, **kwargs: Any) -> Any:
        token = _route.set(route_label(route))
        try:
            return await request(route, **kwargs)
        finally:
            _route.reset(token)

    http.request = named  # type: ignore[method-assign]  # discord.py has no hook before a request


def route_label(route: Route) -> str:
    """``POST /channels/{channel_id}/messages``: discord.py's template, never the ids."""
    return f"{route.method} {route.path}"


def request_trace() -> aiohttp.TraceConfig:
    """Counts each attempt's answer by the route :func:`count_requests` named (an
    interaction's answer, sent by discord.py's webhook adapter, counts as ``interactions``)."""
    trace = aiohttp.TraceConfig()

    async def ended(_session: Any, _context: Any, params: Any) -> None:
        _count(_label_of(params.url), str(params.response.status))

    async def failed(_session: Any, _context: Any, params: Any) -> None:
        _count(_label_of(params.url), "error")

    trace.on_request_end.append(ended)
    trace.on_request_exception.append(failed)
    return trace


def _label_of(url: Any) -> str:
    named = _route.get()
    if named:
        return named
    path = str(getattr(url, "path", ""))
    if "/interactions/" in path or "/webhooks/" in path:
        return "interactions"
    return "gateway" if path.endswith("/gateway") or path == "/" else "other"


def _count(route: str, status: str) -> None:
    if route == "gateway":
        return  # the websocket's upgrade: gateway_connects counts those
    DISCORD_REQUESTS.labels(route, status).inc()
    if status == "429":
        DISCORD_RATE_LIMITED.labels(route).inc()


def count_turn(bot: object, project: object, outcome: str) -> str:
    """A turn ended: counted under its project's label (returned)."""
    label = project_label(bot, project)
    TURNS.labels(label, outcome).inc()
    return label


def project_label(bot: object, name: object) -> str:
    """``name`` if it is a project of the bot's config (a hook's file said it), else
    ``other``: a label's values stay the owner's own names, and few."""
    cfg = getattr(bot, "cfg", None)
    known = cfg is not None and any(project.name == name for project in cfg.projects())
    return name if known and isinstance(name, str) else "other"
