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

Here: the generated config and the run (the emulator, the page, the bot, its log); its
arguments and files are :mod:`bridge.tryout_setup`'s, what it announces :mod:`bridge.tryout_page`'s.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import sys
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from bridge.sessions import worktrees
from bridge.state import locations, private_files, runtime
from bridge.tryout_page import (
    HANDOVER_NAME,
    banner,
    bind_error,
    can_open_browser,
    page_url,
    warnings,
    write_handover,
)
from bridge.tryout_setup import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    OWNER,
    PANEL_CHANNEL,
    SECOND_USER,
    TMUX_SESSION,
    TryError,
    data_dir,
    note_holder,
    private_dirs,
    project_dir,
    seed_for,
    slug,
    take_lock,
    try_root,
    work_dir,
)

if TYPE_CHECKING:
    from discord_emulator import Emulator

log = logging.getLogger(__name__)


@dataclass
class Options:
    project: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    open_browser: bool = True
    verbose: bool = False
    worktrees: bool = False  # the project's threads get git worktrees (isolation: worktree)
    budget: float | None = None  # dollars a session may spend (and Continue adds): the guard
    agent: str = "claude"  # "codex": the project runs the user's Codex CLI


# ----- the generated config ----------------------------------------------------------------


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
    agent: str | None = None,
    agent_command: str | None = None,
) -> None:
    """The generated config (0600): one server on the emulator, the project's channel and the
    control panel; the page's user is the owner. ``worktree_threads``: the project's threads
    work in git worktrees of their own; ``budget``: what each session may spend before the
    spend guard stops it and asks (**Continue** adds as much again). ``discord-bridge
    selftest`` writes its own with another ``name``, tmux ``session`` and the
    ``claude_command`` it checks. ``agent``: the project's agent (``"codex"``; None: Claude
    Code), ``agent_command`` its ``codexCommand``."""
    entry: dict = {"name": slug(project), "channelId": ids[slug(project)], "projectPath": project}
    if worktree_threads:
        entry["thread"] = {"isolation": "worktree"}
    if claude_command:
        entry["claudeCommand"] = claude_command
    if agent == "codex":
        entry["agent"] = "codex"
        if agent_command:
            entry["codexCommand"] = agent_command
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
                # The page's second user (its switcher) has this role: drives, may not approve.
                "roles": {emu.ids["drivers_role_id"]: ["drive"]},
                "projects": [entry],
            }
        ],
    }
    if budget:  # top-level: projects added with /project add get it too
        raw["budget"] = {"sessionUsd": budget, "continueUsd": budget}
    private_files.write_atomic(path, json.dumps(raw, indent=2).encode())


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
    codex = find_codex() if opts.agent == "codex" else None
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
        return _serve(opts, Emulator, project, work, rt_dir, state_dir, lock, codex)
    finally:
        lock.close()


def _serve(
    opts: Options,
    emulator_class: type,
    project: str,
    work: str,
    rt_dir: str,
    state_dir: str,
    lock: IO[str],
    codex: str | None = None,
) -> int:
    from bridge import config

    log_path = os.path.join(work, "try.log")
    setup_logging(log_path, opts.verbose)
    emu = emulator_class(
        seed=seed_for(project, opts.agent),
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
        emu.state.member_roles[emu.ids[SECOND_USER]] = [emu.ids["drivers_role_id"]]
        token = secrets.token_urlsafe(24)
        try:
            port = emu.serve_web(
                opts.host, opts.port, token, OWNER, ids[slug(project)], also_as=(SECOND_USER,)
            )
        except OSError as err:
            raise TryError(bind_error(opts.host, opts.port, err)) from None
        url = page_url(opts.host, port, token)
        note_holder(lock, f"pid {os.getpid()}, {project}, page on port {port}")
        cfg_path = os.path.join(work, "config.json")
        agent = {"agent": "codex", "agent_command": codex} if codex else {}
        write_config(cfg_path, project, emu, ids, opts.worktrees, budget=opts.budget, **agent)
        # The bot and its panes use this directory's runtime and state (given to the bot, not
        # set in the environment: a tmux server the bot starts keeps its environment for every
        # window), and only this config.
        for name in (config.ENV_API_BASE, config.ENV_GATEWAY_URL):
            os.environ.pop(name, None)
        locations.register_config(cfg_path)
        cfg = config.load(cfg_path)
        for warning in warnings(opts.agent):
            print(f"warning: {warning}", file=sys.stderr)
        import threading

        # The page is announced once the bot is connected: a message typed before that
        # would never be answered.
        since = emu.client.mark()
        opening = opts.open_browser and can_open_browser()
        opened = write_handover(handover, url) if opening else None
        text = banner(url, opts.host, project, log_path, opts.budget, codex_home_of(codex))
        show = (emu, since, emu.state.ids["bot_id"], text, opened)
        threading.Thread(target=announce_when_ready, args=show, daemon=True).start()
        _run_bot(cfg, (rt_dir, state_dir))
        print(
            f"discord-bridge try: stopped; {'Codex' if codex else 'Claude Code'} keeps running "
            f"in tmux (tmux attach -t {TMUX_SESSION})"
        )
        return 0
    finally:
        emu.stop()
        if os.path.lexists(handover):
            os.unlink(handover)  # its token dies with this run anyway


def find_codex() -> str:
    """The ``codex`` on PATH the project runs (its absolute path goes in the config): a
    :class:`TryError` when there is none."""
    import shutil

    from bridge.doctor_codex import install_hint

    path = shutil.which("codex")
    if path is None:
        raise TryError(
            f"--agent codex: Codex is not installed (`codex` is not on PATH): {install_hint()}"
        )
    return path


def codex_home_of(codex: str | None) -> str | None:
    """The user's CODEX_HOME the project's Codex runs with (None: no Codex)."""
    from bridge.codex import hooks_file

    return hooks_file.codex_home() if codex else None


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
