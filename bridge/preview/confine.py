"""The Chromium of ``/preview`` kept to this machine's loopback, in its sandbox.

playwright's request routing sees neither a redirect nor a WebSocket, and WebRTC's STUN
packets are no requests at all, so the browser itself is closed:

- **A proxy that answers nothing** for every host but loopback: ``--proxy-server`` names a
  port of ours bound and never listened on (a connection to it is refused at once, and no
  one else can listen there while it is held), and Chromium does not fall back to a direct
  connection when its only proxy fails. ``<-loopback>`` takes away Chromium's implicit
  bypass (localhost, all of 127/8, link-local 169.254/16 too); the three loopback names the
  preview loads (``address.LOOPBACK_HOSTS``) go direct. A hostname is never resolved: it is
  the proxy's to resolve.
- **WebRTC** may use no UDP that is not proxied (an HTTP proxy proxies none): no STUN, no
  host candidates, no mDNS. No QUIC, no DNS prefetch.
- **The sandbox**: Chromium refuses its sandbox to root; as root it runs in a user namespace
  of its own, as an unprivileged user there, where its sandbox works. Where that fails (no
  user namespaces), it runs without, and the preview says so.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bridge.preview.address import LOOPBACK_HOSTS

NO_SANDBOX_NOTE = "Chromium ran without its sandbox here: {why}"
INNER_UID = 1000  # any user but root: Chromium keeps its sandbox off for root only


@contextmanager
def dead_proxy() -> Iterator[int]:
    """A loopback port bound and never listened on, for as long as the browser runs."""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        held.bind(("127.0.0.1", 0))  # no SO_REUSEADDR: nobody can listen on it meanwhile
        yield held.getsockname()[1]
    finally:
        held.close()


def network_args(proxy_port: int) -> list[str]:
    """Chromium's switches that send every host but loopback to the dead proxy."""
    hosts = sorted(LOOPBACK_HOSTS)
    direct = ";".join("[::1]" if host == "::1" else host for host in hosts)  # a URL's form
    excluded = ", ".join(f"EXCLUDE {host}" for host in hosts)  # the resolver's: no brackets
    return [
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        f"--proxy-bypass-list=<-loopback>;{direct}",
        f"--host-resolver-rules=MAP * ~NOTFOUND, {excluded}",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]


def launch(
    playwright: Any, executable: str | None, args: list[str], timeout: float
) -> tuple[Any, str]:
    """(the browser, a note for the channel): sandboxed where it can be, else without and
    the note says why. Raises playwright's ``Error`` when Chromium does not start at all."""
    from playwright.sync_api import Error

    with tempfile.TemporaryDirectory(prefix="discord-bridge-chromium-") as directory:
        sandboxed = sandboxed_executable(executable, directory)
        try:
            browser = playwright.chromium.launch(
                executable_path=sandboxed, args=args, chromium_sandbox=True, timeout=timeout
            )
            return browser, ""
        except Error as err:
            why = _sandbox_failure(err)
            if why is None:
                raise
    browser = playwright.chromium.launch(
        executable_path=executable, args=args, chromium_sandbox=False, timeout=timeout
    )
    return browser, NO_SANDBOX_NOTE.format(why=why)


def sandboxed_executable(executable: str | None, directory: str) -> str | None:
    """What to launch for a sandboxed Chromium: ``executable`` itself, or (as root) a script
    in the private ``directory`` that starts it in a user namespace as an ordinary user."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or executable is None or unshare is None:
        return executable
    script = os.path.join(directory, "chromium")
    command = [
        unshare,
        "--user",
        f"--map-user={INNER_UID}",
        f"--map-group={INNER_UID}",
        "--",
        executable,
    ]
    text = f'#!/bin/sh\nexec {shlex.join(command)} "$@"\n'
    descriptor = os.open(script, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o700)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    return script


def _sandbox_failure(err: BaseException) -> str | None:
    """Why the sandboxed start failed, when it was the sandbox (None: something else)."""
    text = str(err)
    if os.geteuid() == 0 and not shutil.which("unshare"):
        return "the bot runs as root and `unshare` is missing"
    for line in text.splitlines():
        lowered = line.lower()
        if "sandbox" in lowered or "namespace" in lowered or "unshare" in lowered:
            return line.strip()[:200]
    return None
