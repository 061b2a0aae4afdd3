"""A headless Chromium loads a loopback page: two screenshots, its title, status and errors.

Through playwright (the ``preview`` extra), driving a Chromium already on the machine:
Debian's ``chromium`` package (what the browser test of ``discord-bridge try`` uses too) or
the one ``playwright install chromium`` downloads. playwright is imported here only, when a
preview runs: never by the hooks, nor at the bot's start.

Bounded: the whole load of both sizes within :data:`TIME_LIMIT`; screenshots of the viewport
only (a page cannot make them large); at most :data:`MAX_ERRORS` console errors, each cut
short. The browser reaches this machine's loopback and nothing else (``confine.py``: a dead
proxy for every other host, no WebRTC UDP, no DNS, its sandbox); a page that navigates to
another host (a redirect, a script) is refused whole: neither its title nor a screenshot is
returned. The requests the browser refused are named.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Any

from bridge.preview import confine
from bridge.preview.address import is_loopback_url

SIZES = (("phone", 390, 844), ("desktop", 1280, 800))  # CSS pixels, as the devices show them
TIME_LIMIT = 20.0  # seconds for everything: start the browser, load twice, screenshot
MAX_ERRORS = 10
MAX_ERROR_CHARS = 300
DEBIAN_CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOW_TO_ADD = (
    "⚠️ Preview needs playwright and a Chromium: run `./install.sh --preview` (playwright into "
    "the bridge's venv), then `apt install chromium` (Debian, Ubuntu) or "
    "`playwright install chromium`."
)


class NoBrowser(RuntimeError):
    """playwright or a Chromium is missing (the text says how to add them)."""


class LoadFailed(RuntimeError):
    """The page did not load (refused, timed out): the text says why."""


@dataclass
class Capture:
    url: str
    status: int | None  # the main document's HTTP status (None: no HTTP response)
    title: str
    errors: list[str] = field(default_factory=list)
    shots: dict[str, bytes] = field(default_factory=dict)  # "phone"/"desktop" → PNG
    refused: dict[str, str] = field(default_factory=dict)  # URL of another host → why it failed
    note: str = ""  # how the browser ran, when the channel should know (no sandbox)


class LeftLoopback(LoadFailed):
    """The page navigated to another host: nothing of it is shown."""


def find_chromium() -> str | None:
    """A Chromium installed on this machine (Debian's package, or one on PATH); None when
    there is none (playwright's own download may still be there: :func:`launch` tries it)."""
    for path in DEBIAN_CHROMIUM:
        if os.access(path, os.X_OK):
            return path
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def launch_args() -> list[str]:
    """A test's own Chromium (the try page's): Chromium refuses to run as root with its
    sandbox on (containers, CI). The preview's is started by :func:`confine.launch`."""
    return [*CHROMIUM_ARGS, "--no-sandbox"] if os.geteuid() == 0 else list(CHROMIUM_ARGS)


def capture(url: str, time_limit: float = TIME_LIMIT) -> Capture:
    """Load ``url`` at each of :data:`SIZES` (blocking: run it in a worker thread)."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        raise NoBrowser(HOW_TO_ADD) from None
    deadline = time.monotonic() + time_limit
    with sync_playwright() as playwright, confine.dead_proxy() as proxy:
        executable = find_chromium()
        args = [*CHROMIUM_ARGS, *confine.network_args(proxy)]
        try:
            browser, note = confine.launch(playwright, executable, args, _left(deadline))
        except Error as err:
            if executable is None:
                raise NoBrowser(HOW_TO_ADD) from None
            raise LoadFailed(f"⚠️ Chromium did not start: {_first_line(err)}") from None
        try:
            result = Capture(url, None, "", note=note)
            for name, width, height in SIZES:
                _load(browser, result, name, width, height, deadline, Error)
            return result
        finally:
            browser.close()


def _load(
    browser: Any,
    result: Capture,
    name: str,
    width: int,
    height: int,
    deadline: float,
    error: type[Exception],
) -> None:
    phone = name == "phone"
    context = browser.new_context(
        viewport={"width": width, "height": height},
        is_mobile=phone,
        has_touch=phone,
        device_scale_factor=2 if phone else 1,
        service_workers="block",
    )
    try:
        context.route("**/*", _only_loopback)
        page = context.new_page()
        errors: list[str] = []
        left: list[str] = []  # navigations (a redirect too) to another host
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        _watch_requests(context, page, result.refused, left)
        try:
            response = page.goto(result.url, timeout=_left(deadline), wait_until="load")
        except error as err:
            _refuse_if_left(result.url, left)
            raise LoadFailed(f"⚠️ {result.url} did not load: {_first_line(err)}") from None
        _refuse_if_left(result.url, left)
        if not phone:  # the desktop load is the one reported
            result.status = response.status if response is not None else None
            result.title = page.title()[:200]
        for text in errors:
            short = text.strip()[:MAX_ERROR_CHARS]
            if short and short not in result.errors and len(result.errors) < MAX_ERRORS:
                result.errors.append(short)
        result.shots[name] = page.screenshot(type="png", timeout=_left(deadline))
        _refuse_if_left(result.url, [*left, page.url])  # a script may navigate meanwhile
    finally:
        context.close()


def _watch_requests(context: Any, page: Any, refused: dict[str, str], left: list[str]) -> None:
    """Note every request to another host (why it failed) and every navigation there."""

    def requested(request: Any) -> None:
        if request.is_navigation_request() and request.frame == page.main_frame:
            left.append(request.url)

    def failed(request: Any) -> None:
        if not is_loopback_url(request.url) and len(refused) < MAX_ERRORS:
            refused.setdefault(request.url, request.failure or "refused")

    def websocket(socket: Any) -> None:
        if not is_loopback_url(socket.url) and len(refused) < MAX_ERRORS:
            refused.setdefault(socket.url, "refused")
            socket.on("socketerror", lambda why: refused.update({socket.url: why}))

    context.on("request", requested)
    context.on("requestfailed", failed)
    page.on("websocket", websocket)


def _refuse_if_left(url: str, navigations: list[str]) -> None:
    """Raise :class:`LeftLoopback` when the page went to another host."""
    for target in navigations:
        if not is_loopback_url(target) and not target.startswith("chrome-error:"):
            raise LeftLoopback(
                f"⚠️ {url} sent the browser to {target[:200]}, another host: `/preview` "
                "shows this machine's own pages only, so nothing of it is shown."
            )


def _only_loopback(route: Any) -> None:
    if is_loopback_url(route.request.url):
        route.continue_()
    else:
        route.abort("blockedbyclient")


def _left(deadline: float) -> float:
    """Milliseconds left (playwright's unit); at least one, so a late step fails fast."""
    return max(1.0, (deadline - time.monotonic()) * 1000)


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return (lines[0] if lines else type(err).__name__)[:300]
