"""HTTP response helpers. discord.py compares Content-Type to exactly "application/json"."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .state import State
from .validation import ApiError, FormErrors

JSON_TYPE = "application/json"
STATE_KEY = web.AppKey("state", State)
OUTAGE_KEY = web.AppKey("set_outage", Callable[[str | None], Awaitable[None]])
AFTER_FLUSH = web.RequestKey("after_flush", list)
BOT_KEY = web.RequestKey("bot", dict)  # the bot user whose token authorised the request
_VERSION_PREFIX = re.compile(r"^/api/v(\{version\}|\d+)")


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    # Not web.json_response: that appends "; charset=utf-8" and discord.py then treats
    # the body as text (pitfall 1).
    all_headers = {"Content-Type": JSON_TYPE, **(headers or {})}
    return web.Response(body=json.dumps(data).encode(), status=status, headers=all_headers)


def no_content() -> web.Response:
    return web.Response(status=204)


def route_key(request: web.Request) -> str:
    """'POST /channels/{channel_id}/messages' for a matched REST route."""
    resource = request.match_info.route.resource
    path = resource.canonical if resource is not None else request.path
    return route_key_of(request.method, path)


def route_key_of(method: str, path: str) -> str:
    """'POST /channels/{channel_id}/messages' for a method and an /api/v{version} path."""
    return f"{method} {_VERSION_PREFIX.sub('', path)}"


def defer(request: web.Request, action: Callable[[], None]) -> None:
    """Run `action` after the response has been written to the socket (pitfall 12).

    discord.py registers a View only once it has read the REST response, so records and
    gateway echoes of REST effects must not overtake the response.
    """
    request.setdefault(AFTER_FLUSH, []).append(action)


async def read_json(
    request: web.Request, array: bool = False, errors: FormErrors | None = None
) -> Any:
    """The JSON object (or, with ``array``, list) of the body; a REST request's is held to
    Discord's OpenAPI spec (``check_contract``)."""
    if not request.can_read_body:
        data: Any = [] if array else {}
    else:
        try:
            data = await request.json()
        except ValueError:
            data = None
        if not isinstance(data, list if array else dict):
            raise ApiError(400, 50109, "The request body contains invalid JSON.")
    check_contract(request, data, errors)
    return data


def check_contract(request: web.Request, body: Any, errors: FormErrors | None = None) -> None:
    """Raise 50035 "Invalid Form Body" when a REST body breaks its operation's schema; or,
    given ``errors``, add them there for the handler to raise with its own (Discord names
    every bad field of a body in one answer)."""
    if not _VERSION_PREFIX.match(request.path):
        return  # the control API and the web client's page API (/api/...) are not Discord's
    from .contract import check

    found = check(route_key(request), body, (request.app[STATE_KEY].contract,))
    if errors is None:
        found.raise_if_any()
    else:
        errors.merge(found)
