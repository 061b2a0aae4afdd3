"""``discord-bridge try``: the whole bridge on this machine, in a browser, no Discord needed.

It starts the Discord emulator (``discord_emulator``: REST, gateway and a small web client),
writes a config that maps one channel to the project directory (plus a control-panel
channel; with ``--worktrees`` the project's threads get git worktrees) and points it at the
emulator (``apiBaseUrl``/``gatewayUrl``), then runs the same bot as ``discord-bridge run``
(:func:`bridge.bot.app.run_bridge`). Claude Code runs in tmux as usual (session
``discord-bridge-try``) with the installed hooks.

What it writes: in ``$DISCORD_BRIDGE_HOME/try/`` a lock and, per project directory, its
config and log; its runtime and state dirs in ``try/`` of the state directory (outside the
bridge home, which Claude's file tools may not read: uploads are in there). The home's
``config.json`` and its bot's dirs are never touched: the config is registered for the hooks
(``run --config`` does the same) with its own dirs
(:func:`bridge.state.locations.record_config_locations`).

The emulator's REST, gateway and control API listen on loopback only, with a secret bot
token and control token (and no second bot: no token derived from the seed, which anyone can
compute from the project's path, is accepted); only the web client listens on ``--listen``,
and it needs the access token printed in its URL (in the fragment: the page keeps it in the
tab, never in a cookie), on loopback too. The browser is opened on a private hand-over file
(``open.html``, 0600), never on the URL itself: a command line is readable by every user.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import socket
import sys
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from bridge.sessions import worktrees
from bridge.state import locations, private_files, runtime

if TYPE_CHECKING:
    from discord_emulator import Emulator

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TMUX_SESSION = "discord-bridge-try"
PANEL_CHANNEL = "control-panel"
OWNER = "alice"  # the emulator's seeded user the page acts as: the config's owner
LOCK_NAME = "lock"
HANDOVER_NAME = "open.html"  # what the browser is opened on: it carries the token, argv not

log = logging.getLogger(__name__)


class TryError(Exception):
    """Something the user must fix before ``try`` can start: said in one sentence."""


@dataclass
class Options:
    project: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    open_browser: bool = True
    verbose: bool = False
    worktrees: bool = False  # the project's threads get git worktrees (isolation: worktree)
    budget: float | None = None  # dollars a session may spend (and Continue adds): the guard


# ----- arguments ---------------------------------------------------------------------------


def project_dir(path: str | None) -> str:
    """The absolute project directory (default: the current one); it must exist."""
    full = os.path.abspath(os.path.expanduser(path or os.getcwd()))
    if not os.path.exists(full):
        raise TryError(f"the project directory {full} does not exist")
    if not os.path.isdir(full):
        raise TryError(f"{full} is not a directory: give the project's directory")
    return full


def parse_listen(value: str | None, port: int | None) -> tuple[str, int]:
    """``--listen HOST`` or ``HOST:PORT`` (``[::]:8000`` for IPv6), ``--port`` otherwise."""
    host, chosen = DEFAULT_HOST, port
    if value:
        match = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?|([^:]+)(?::(\d+))?|([0-9a-fA-F:]+)", value)
        if not match:
            raise TryError(f"--listen {value!r}: give an address, e.g. 0.0.0.0 or 0.0.0.0:8765")
        host = match[1] or match[3] or match[5]
        given = match[2] or match[4]
        if given and chosen is None:
            chosen = int(given)
    chosen = DEFAULT_PORT if chosen is None else chosen
    if not 0 <= chosen <= 65535:
        raise TryError(f"port {chosen} is not a port number")
    return host, chosen


def parse_budget(value: str | None) -> float | None:
    """``--budget USD``: a session's spend budget, in dollars (``$`` allowed); None: none.
    Off by default: a newcomer is not stopped by a budget unless they ask for one."""
    if value is None:
        return None
    try:
        dollars = float(value.strip().removeprefix("$"))
    except ValueError:
        dollars = 0.0
    if not 0 < dollars <= 1e6:  # nan fails this too
        raise TryError(f"--budget {value!r}: give dollars a session may spend, e.g. 0.50")
    return dollars


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def slug(path: str) -> str:
    """A channel name for the project directory, as Discord would accept it (never the
    control panel's)."""
    name = re.sub(r"[^a-z0-9_-]+", "-", os.path.basename(path.rstrip("/")).lower()).strip("-")
    name = (name or "project")[:90]
    return f"{name}-project" if name == PANEL_CHANNEL else name


def seed_for(path: str) -> int:
    """The emulator's seed: stable per project directory, so its channel ids are too (the
    bot finds its Claude Code window and conversation again on the next ``try``), and
    different between directories."""
    return int(hashlib.sha256(path.encode()).hexdigest()[:8], 16) % 100_000


# ----- files -------------------------------------------------------------------------------


def try_root() -> str:
    return os.path.join(runtime.bridge_home(), "try")


def project_key(project: str) -> str:
    return f"{slug(project)}-{hashlib.sha256(project.encode()).hexdigest()[:8]}"


def work_dir(project: str) -> str:
    """The project's config and log: in the bridge home, with the home's config."""
    return os.path.join(try_root(), project_key(project))


def data_dir(project: str) -> str:
    """The project's runtime and state dirs: outside the bridge home, whose every file
    Claude's file tools are denied (the uploads Claude must read are in the state dir)."""
    return os.path.join(runtime.state_dir_path(), "try", project_key(project))


def private_dirs(*paths: str) -> None:
    """Each path created 0700 (its parent first, if missing) or checked private."""
    for path in paths:
        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        runtime.ensure_private_dir(path)


def take_lock(root: str) -> IO[str]:
    """One ``try`` at a time per bridge home: a second one says where the first one is."""
    import fcntl

    path = os.path.join(root, LOCK_NAME)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    handle = os.fdopen(fd, "r+")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read(4096).strip()
        handle.close()
        where = f" ({holder})" if holder else ""
        raise TryError(
            f"already running{where}: use that one, or stop it (Ctrl-C in its terminal) first"
        ) from None
    return handle


def note_holder(handle: IO[str], text: str) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(text)
    handle.flush()


def write_config(
    path: str,
    project: str,
    emu: Emulator,
    ids: dict[str, str],
    worktree_threads: bool = False,
    name: str = "try",
    session: str = TMUX_SESSION,
    claude_command: str | None = None,
    budget: float | None = None,
) -> None:
    """The generated config (0600): one server on the emulator, the project's channel and the
    control panel; the page's user is the owner. ``worktree_threads``: the project's threads
    work in git worktrees of their own; ``budget``: what each session may spend before the
    spend guard stops it and asks (**Continue** adds as much again). ``discord-bridge
    selftest`` writes its own with another ``name``, tmux ``session`` and the
    ``claude_command`` it checks."""
    entry: dict = {"name": slug(project), "channelId": ids[slug(project)], "projectPath": project}
    if worktree_threads:
        entry["thread"] = {"isolation": "worktree"}
    if claude_command:
        entry["claudeCommand"] = claude_command
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": name,
                "discord": {
                    "botToken": emu.bot_token,
                    "guildId": emu.ids["guild_id"],
                    "ownerUserId": emu.ids[OWNER],
                    "apiBaseUrl": emu.api_base,
                    "gatewayUrl": emu.gateway_url,
                    "guildReadyTimeout": 0.2,
                    # The emulator stops with the bot; Claude Code keeps running: its hooks
                    # must never post to the emulator's old port (anyone may listen there).
                    "hooksPostDirectly": False,
                },
                "tmux": {"session": session},
                "generalChannelId": ids[PANEL_CHANNEL],
                "projects": [entry],
            }
        ],
    }
    if budget:  # top-level: projects added with /project add get it too
        raw["budget"] = {"sessionUsd": budget, "continueUsd": budget}
    private_files.write_atomic(path, json.dumps(raw, indent=2).encode())


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


def banner(url: str, host: str, project: str, log_path: str, budget: float | None = None) -> str:
    lines = [
        "",
        "discord-bridge try: the bridge on a local Discord, in your browser",
        f"  open      {url}",
        f"  project   {project}  (channel #{slug(project)}; #{PANEL_CHANNEL} shows the sessions)",
        f"  claude    runs in tmux: tmux attach -t {TMUX_SESSION}",
        f"  log       {log_path}",
        "  stop      Ctrl-C (Claude Code keeps running in tmux, as with `run`)",
        "  restart   Enter stops the bot, Enter again starts it: it reads the messages "
        "you sent meanwhile",
    ]
    if budget:
        lines.insert(-3, f"  budget    ${budget:.2f} per session: a warning at 80 %, at 100 % "
                         "Claude stops before its next tool call and asks you")  # fmt: skip
    if not is_loopback(host):
        lines.insert(3, "  note      anyone with this address (and its token) can drive Claude "
                        "Code here as you: keep it private")  # fmt: skip
    return "\n".join(lines) + "\n"


def can_open_browser() -> bool:
    """A graphical browser is likely there (never a text browser in this terminal)."""
    if sys.platform == "darwin":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def warnings() -> list[str]:
    from bridge.claude import settings as claude_settings

    found = []
    try:
        stop = claude_settings.installed_events().get("Stop")
    except (OSError, ValueError):
        stop = ""
    if stop is None:
        found.append("the Claude Code hooks are not installed, so replies will not show: "
                     "run `discord-bridge hooks install`")  # fmt: skip
    elif stop and hook_home(stop) not in (None, os.path.abspath(runtime.bridge_home())):
        found.append(f"the Claude Code hooks are installed for the bridge home {hook_home(stop)}, "
                     "so replies will not show: run `discord-bridge hooks install` with this "
                     "DISCORD_BRIDGE_HOME")  # fmt: skip
    if shutil.which("tmux") is None:
        found.append("tmux is not installed: Claude Code sessions cannot start")
    if shutil.which("claude") is None:
        found.append("the claude CLI is not on PATH: npm install -g @anthropic-ai/claude-code")
    return found


def hook_home(command: str) -> str | None:
    """The ``--home`` an installed hook command names (None: none, the default)."""
    import shlex

    try:
        argv = shlex.split(command, comments=True)
    except ValueError:
        return None
    return argv[argv.index("--home") + 1] if "--home" in argv[:-1] else None


# ----- running -----------------------------------------------------------------------------


def run(opts: Options) -> int:
    """Start everything, serve until Ctrl-C; 0, or 2 with a message for a :class:`TryError`."""
    try:
        return _run(opts)
    except TryError as err:
        print(f"discord-bridge try: {err}", file=sys.stderr)
        return 2


def _run(opts: Options) -> int:
    try:
        from discord_emulator import Emulator
    except ImportError:
        raise TryError(
            "the Discord emulator is not installed: run ./install.sh again, or "
            "pip install packages/discord-emulator from the discord-bridge checkout"
        ) from None
    project = project_dir(opts.project)
    if opts.worktrees and worktrees.repo_root(project) is None:
        raise TryError(f"{project} is not in a git repository: --worktrees needs one")
    root = try_root()
    work = work_dir(project)
    data = data_dir(project)
    rt_dir, state_dir = os.path.join(data, "runtime"), os.path.join(data, "state")
    try:
        state_root = runtime.state_dir_path()  # created private, as the bot would create it
        private_dirs(root, work, state_root, os.path.dirname(data), data, rt_dir, state_dir)
    except runtime.UnsafeRuntimeDir as err:
        raise TryError(str(err)) from None
    lock = take_lock(root)
    try:
        return _serve(opts, Emulator, project, work, rt_dir, state_dir, lock)
    finally:
        lock.close()


def _serve(opts: Options, emulator_class: type, project: str, work: str, rt_dir: str,
           state_dir: str, lock: IO[str]) -> int:  # fmt: skip
    from bridge import config

    log_path = os.path.join(work, "try.log")
    setup_logging(log_path, opts.verbose)
    emu = emulator_class(
        seed=seed_for(project),
        bot_token=secrets.token_urlsafe(32),
        control_token=secrets.token_urlsafe(32),
        second_bot=False,
    )
    emu.start()
    handover = os.path.join(work, HANDOVER_NAME)
    try:
        me = os.environ.get("USER") or "you"
        names = {OWNER: me, "bot_id": "discord-bridge"}
        ids = emu.configure_world("discord-bridge try", [PANEL_CHANNEL, slug(project)], names)
        token = secrets.token_urlsafe(24)
        try:
            port = emu.serve_web(opts.host, opts.port, token, OWNER, ids[slug(project)])
        except OSError as err:
            raise TryError(bind_error(opts.host, opts.port, err)) from None
        url = page_url(opts.host, port, token)
        note_holder(lock, f"pid {os.getpid()}, {project}, page on port {port}")
        cfg_path = os.path.join(work, "config.json")
        write_config(cfg_path, project, emu, ids, opts.worktrees, budget=opts.budget)
        # The bot and its panes use this directory's runtime and state (given to the bot, not
        # set in the environment: a tmux server the bot starts keeps its environment for every
        # window), and only this config.
        for name in (config.ENV_API_BASE, config.ENV_GATEWAY_URL):
            os.environ.pop(name, None)
        locations.register_config(cfg_path)
        cfg = config.load(cfg_path)
        for warning in warnings():
            print(f"warning: {warning}", file=sys.stderr)
        import threading

        # The page is announced once the bot is connected: a message typed before that
        # would never be answered.
        since = emu.client.mark()
        opening = opts.open_browser and can_open_browser()
        opened = write_handover(handover, url) if opening else None
        text = banner(url, opts.host, project, log_path, opts.budget)
        show = (emu, since, emu.state.ids["bot_id"], text, opened)
        threading.Thread(target=announce_when_ready, args=show, daemon=True).start()
        _run_bot(cfg, (rt_dir, state_dir))
        print("discord-bridge try: stopped; Claude Code keeps running in tmux "
              f"(tmux attach -t {TMUX_SESSION})")  # fmt: skip
        return 0
    finally:
        emu.stop()
        if os.path.lexists(handover):
            os.unlink(handover)  # its token dies with this run anyway


def _run_bot(cfg: Any, own_dirs: tuple[str, str]) -> None:
    """The bot until Ctrl-C; stopped and started again in between on Enter (``tryout_pause``)."""
    from bridge.bot.app import run_bridge
    from bridge.tryout_pause import STARTING, STOPPED, BotPause

    pause = BotPause()
    pause.install()
    try:
        while True:
            asyncio.run(run_bridge(cfg, own_dirs=own_dirs))
            if not pause.paused:
                return  # SIGTERM, or Ctrl-C that run_bridge took
            sys.stdout.write(STOPPED)
            sys.stdout.flush()
            pause.wait_to_resume()
            sys.stdout.write(STARTING)
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass


READY_WAIT = 60.0  # seconds the page waits for the bot before it is announced anyway


def announce_when_ready(emu: Any, since: int, bot_id: str, text: str, opened: str | None) -> None:
    """Print the page's address once the bot is connected to the emulator, and open the
    browser on ``opened`` (the hand-over file's address; None: never)."""
    try:
        emu.client.wait(since=since, kind="gateway_ready", timeout=READY_WAIT, user_id=bot_id)
    except TimeoutError:
        text += "(the bot is still connecting: messages are answered once it is in)\n"
    except Exception:  # the emulator is stopping: nothing to announce
        return
    sys.stdout.write(text)
    sys.stdout.flush()
    if opened:
        import webbrowser

        webbrowser.open(opened)


def bind_error(host: str, port: int, err: OSError) -> str:
    if err.errno == errno.EADDRINUSE:
        return (f"port {port} on {host} is already in use (another discord-bridge try, or "
                "another program): choose another with --port")  # fmt: skip
    if err.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) or isinstance(err, socket.gaierror):
        return f"cannot listen on {host}: not an address of this machine ({err.strerror or err})"
    if err.errno == errno.EACCES:
        return f"not allowed to listen on port {port} (ports below 1024 need root): use --port"
    return f"cannot listen on {host}:{port}: {err}"


def setup_logging(path: str, verbose: bool) -> None:
    """Everything to the log file; warnings and errors to the terminal too."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    to_file = logging.StreamHandler(os.fdopen(fd, "a"))
    to_file.setFormatter(fmt)
    to_terminal = logging.StreamHandler(sys.stderr)
    to_terminal.setLevel(logging.WARNING)
    to_terminal.setFormatter(fmt)
    to_terminal.addFilter(_not_noise)
    root.addHandler(to_file)
    root.addHandler(to_terminal)
    logging.getLogger("discord").setLevel(logging.INFO if verbose else logging.WARNING)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)


# discord.py's notes that mean nothing here: no voice; and "Can't keep up", which a gateway on
# loopback triggers when its heartbeat ack arrives before discord.py has noted the send.
NOISE = ("voice will NOT be supported", "Can't keep up")


def _not_noise(record: logging.LogRecord) -> bool:
    return not any(text in record.getMessage() for text in NOISE)
