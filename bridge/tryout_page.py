"""What ``discord-bridge try`` announces: the page's address, the banner, the warnings.

The page's address (its token in the fragment, no request carries it), the private hand-over
file the browser is opened on (never the address on a command line), the banner printed once
the bot is in, what is missing for replies to show, and a port that cannot be listened on said
plainly. Its own module: what the user is told and shown, apart from what ``try`` runs.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import sys

from bridge.state import private_files, runtime
from bridge.tryout_setup import PANEL_CHANNEL, TMUX_SESSION, is_loopback, slug

HANDOVER_NAME = "open.html"  # what the browser is opened on: it carries the token, argv not


# ----- addresses and the banner ------------------------------------------------------------


def page_url(host: str, port: int, token: str) -> str:
    """The page's address; the token in the fragment, which no request carries (the page
    moves it into the tab's storage and out of the address bar)."""
    if host in ("0.0.0.0", "::", ""):
        host = lan_address(host == "::") or "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/#token={token}"


def write_handover(path: str, url: str) -> str:
    """A page (0600, in try's private dir) that forwards the browser to ``url``; returns its
    ``file://`` address, which is what goes on the browser's command line (readable in
    ``/proc/*/cmdline`` by every user of the machine), never the token."""
    import html
    from urllib.request import pathname2url

    shown = html.escape(url, quote=True)
    page = (
        '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
        f'<meta http-equiv="refresh" content="0;url={shown}"><title>discord-bridge try</title>'
        f'<p><a href="{shown}">Open discord-bridge try</a></p>'
    )
    private_files.write_atomic(path, page.encode())
    return "file://" + pathname2url(path)


def lan_address(ipv6: bool = False) -> str | None:
    """This machine's address on its network (no packet is sent)."""
    family, probe = (socket.AF_INET6, "fd00::1") if ipv6 else (socket.AF_INET, "10.255.255.255")
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect((probe, 1))
            return sock.getsockname()[0]
    except OSError:
        return None


def banner(
    url: str,
    host: str,
    project: str,
    log_path: str,
    budget: float | None = None,
    codex_home: str | None = None,
) -> str:
    """What ``try`` prints once the bot is in; ``codex_home``: the project runs Codex, with
    the user's own CODEX_HOME (their login and config)."""
    agent = "Codex" if codex_home else "Claude Code"
    lines = [
        "",
        "discord-bridge try: the bridge on a local Discord, in your browser",
        f"  open      {url}",
        f"  project   {project}  (channel #{slug(project)}; #{PANEL_CHANNEL} shows the sessions)",
        f"  {'codex ' if codex_home else 'claude'}    runs in tmux: tmux attach -t {TMUX_SESSION}",
        f"  log       {log_path}",
        f"  stop      Ctrl-C ({agent} keeps running in tmux, as with `run`)",
        "  restart   Enter stops the bot, Enter again starts it: it reads the messages "
        "you sent meanwhile",
    ]
    if codex_home:
        lines.insert(
            5,
            f"  home      your CODEX_HOME, {codex_home}: your Codex login and config (the "
            "bridge only reads it; its hooks there are `discord-bridge hooks install`'s)",
        )
    if budget:
        lines.insert(
            -3,
            f"  budget    ${budget:.2f} per session: a warning at 80 %, at 100 % "
            "Claude stops before its next tool call and asks you",
        )
    if not is_loopback(host):
        lines.insert(
            3,
            "  note      anyone with this address (and its token) can drive Claude "
            "Code here as you: keep it private",
        )
    return "\n".join(lines) + "\n"


def can_open_browser() -> bool:
    """A graphical browser is likely there (never a text browser in this terminal)."""
    if sys.platform == "darwin":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def warnings(agent: str = "claude") -> list[str]:
    if agent == "codex":
        return codex_warnings()
    from bridge.claude import settings as claude_settings

    found = []
    try:
        stop = claude_settings.installed_events().get("Stop")
    except (OSError, ValueError):
        stop = ""
    if stop is None:
        found.append(
            "the Claude Code hooks are not installed, so replies will not show: "
            "run `discord-bridge hooks install`"
        )
    elif stop and hook_home(stop) not in (None, os.path.abspath(runtime.bridge_home())):
        found.append(
            f"the Claude Code hooks are installed for the bridge home {hook_home(stop)}, "
            "so replies will not show: run `discord-bridge hooks install` with this "
            "DISCORD_BRIDGE_HOME"
        )
    if shutil.which("tmux") is None:
        found.append("tmux is not installed: Claude Code sessions cannot start")
    if shutil.which("claude") is None:
        found.append("the claude CLI is not on PATH: npm install -g @anthropic-ai/claude-code")
    return found


def codex_warnings() -> list[str]:
    """What stops Codex's replies from showing: the bridge's hooks missing from the user's
    Codex hooks.json, or installed for another bridge home (read only: ``try`` never writes
    the user's Codex files)."""
    from bridge.codex import hooks_file

    path = hooks_file.default_hooks_path()
    try:
        stop = hooks_file.installed_events(path).get("Stop")
    except (OSError, ValueError):
        stop = ""
    found = []
    if stop is None:
        found.append(
            f"the bridge's hooks are not in Codex's {path}, so replies will not show: "
            "run `discord-bridge hooks install`"
        )
    elif stop and hook_home(stop) not in (None, os.path.abspath(runtime.bridge_home())):
        found.append(
            f"the Codex hooks in {path} are installed for the bridge home {hook_home(stop)}, "
            "so replies will not show: run `discord-bridge hooks install` with this "
            "DISCORD_BRIDGE_HOME"
        )
    if shutil.which("tmux") is None:
        found.append("tmux is not installed: Codex sessions cannot start")
    return found


def hook_home(command: str) -> str | None:
    """The ``--home`` an installed hook command names (None: none, the default)."""
    import shlex

    try:
        argv = shlex.split(command, comments=True)
    except ValueError:
        return None
    return argv[argv.index("--home") + 1] if "--home" in argv[:-1] else None


def bind_error(host: str, port: int, err: OSError) -> str:
    if err.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is already in use (another discord-bridge try, or "
            "another program): choose another with --port"
        )
    if err.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) or isinstance(err, socket.gaierror):
        return f"cannot listen on {host}: not an address of this machine ({err.strerror or err})"
    if err.errno == errno.EACCES:
        return f"not allowed to listen on port {port} (ports below 1024 need root): use --port"
    return f"cannot listen on {host}:{port}: {err}"
