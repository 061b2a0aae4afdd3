"""What ``/preview`` may load: a page of this machine's loopback, never any other host.

The argument is a port (``5173``) or an ``http(s)`` URL whose host is ``127.0.0.1``,
``localhost`` or ``::1``; anything else is refused with a line that says so. The URL the
browser gets is rebuilt from the checked parts, so what is loaded is what was checked (the
browser also refuses every request to another host: ``browser.py``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
REFUSED = (
    "⚠️ `/preview` loads this machine's own pages only: a port (`5173`) or an http(s) URL of "
    "127.0.0.1, localhost or [::1]."
)


class NotLoopback(ValueError):
    """The argument names something other than a loopback page (its text says what)."""


def preview_url(argument: str) -> str:
    """The URL to load for ``argument`` (a port or a loopback URL); :class:`NotLoopback`."""
    argument = argument.strip()
    if argument.isascii() and argument.isdigit():
        number = int(argument)
        if not 0 < number < 65536:
            raise NotLoopback(f"⚠️ `{argument}` is no TCP port (1–65535).")
        return f"http://127.0.0.1:{number}/"
    if not argument.isascii() or any(c.isspace() or c == "\\" or ord(c) < 32 for c in argument):
        raise NotLoopback(REFUSED)
    parts = urlsplit(argument)
    try:
        port = parts.port
    except ValueError:
        raise NotLoopback(REFUSED) from None
    host = (parts.hostname or "").lower()
    if parts.scheme.lower() not in ("http", "https") or host not in LOOPBACK_HOSTS:
        raise NotLoopback(REFUSED)
    if parts.username is not None or parts.password is not None:
        raise NotLoopback(REFUSED)
    shown = "[::1]" if host == "::1" else host
    where = f"{shown}:{port}" if port else shown
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{where}{parts.path or '/'}{query}"


def is_loopback_url(url: str) -> bool:
    """Whether the browser may request ``url``: loopback http(s), or a page's own ``data:``
    and ``blob:`` resources (they reach no host)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("data", "blob", "about"):
        return True
    return scheme in ("http", "https", "ws", "wss") and (parts.hostname or "") in LOOPBACK_HOSTS
