"""The bot process: one discord.py client per configured server, plus the outbox drainer.

``run_bridge`` starts everything, adopts running Claude Code windows (never kills them),
starts ``startup: true`` projects, and on SIGINT/SIGTERM closes the Discord connections and
leaves every tmux session running.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import aiohttp
import discord
import yarl

from bridge.bot import login as login_retry
from bridge.bot import metrics
from bridge.bot.away import schedule
from bridge.bot.away.scheduler import Scheduler
from bridge.bot.away.watch import AwayWatch
from bridge.bot.changes.review import Reviews
from bridge.bot.client import BridgeClient
from bridge.bot.control.commands import BridgeCommandTree, sync
from bridge.bot.control.panel import ControlPanel
from bridge.bot.control.threads import ThreadEvents
from bridge.bot.delivery.outbox_drain import OutboxDrainer
from bridge.bot.features import feature_modules
from bridge.bot.loop_watch import LoopWatch
from bridge.bot.operations.endpoint import OperationsEndpoint
from bridge.bot.pacing import pace_global_limit
from bridge.bot.prompts.interactions import PromptAnswerer
from bridge.bot.prompts.screens import ScreenPrompts
from bridge.bot.turn import queue
from bridge.bot.turn.catchup import CatchUp
from bridge.bot.turn.handled import HandledMessages
from bridge.bot.turn.progress import ProgressReporter
from bridge.bot.turn.queue import PromptQueue
from bridge.bot.turn.relay import Relay
from bridge.bot.turn.stalls import StallWatch
from bridge.bot.voice.replies import VoiceReplies
from bridge.config import BridgeConfig, Server
from bridge.sessions import adoption
from bridge.sessions.manager import SessionManager
from bridge.state import adoptions, hook_figures, locations, runtime

log = logging.getLogger(__name__)

# Worker threads for asyncio.to_thread: tmux commands, pane typing, file state. A typing job
# holds its thread for its whole duration (pauses, echo and submit checks) and a session start
# for up to READY_TIMEOUT, so asyncio's default pool (min(32, cpus + 4): 6 on 2 cores) queued
# 20 busy sessions behind each other; the threads mostly wait, so many cost little.
IO_THREADS = 64
# Seconds a thread may keep the interpreter while another waits for it (Python's default: 5
# ms). Each tmux reply is handed by the control connection's reader to the thread waiting for
# it, which then waits for the interpreter: 20 busy sessions, two A/B runs of bench/scale.py,
# the bridge's share p95 179 → 88 and 116 → 95 ms, p50 and the bot's CPU unchanged.
SWITCH_INTERVAL = 0.001
# Logged when a gateway session starts (READY read): from here on, a message is live, not one
# sent while the bridge was offline (the test rig waits for this line too).
CONNECTED = "connected to Discord's gateway"


class BridgeBot(BridgeClient):
    """The Discord side of one configured server: every part it holds is built here."""

    def __init__(self, cfg: BridgeConfig, server: Server, rt: runtime.Runtime) -> None:
        intents = discord.Intents.none()
        intents.guilds = True
        intents.guild_messages = True
        intents.message_content = True  # privileged: enable it in the Developer Portal
        intents.guild_reactions = True  # ✅ / ❌ on a prompt (not privileged)
        super().__init__(
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            guild_ready_timeout=server.guild_ready_timeout,
            http_trace=metrics.request_trace(),  # each answer counted by route and status
        )
        pace_global_limit(self.http)  # one pace for the drain, reactions, edits, the panel
        metrics.count_requests(self.http)  # names each request's route for the trace
        self.cfg = cfg
        self.server = server
        self.runtime = rt
        self.sessions = SessionManager(cfg, server, rt)
        self.prompts: PromptAnswerer = PromptAnswerer(rt)  # prompt buttons, selects and modals
        self.progress: ProgressReporter = ProgressReporter(self, server.name, rt)  # per turn
        self.threads: ThreadEvents = ThreadEvents(self, self.sessions)  # archive/delete, worktrees
        self.screens: ScreenPrompts = ScreenPrompts(self.sessions, rt)  # dialogs no hook reports
        self.reviews: Reviews = Reviews()  # line comments on a diff → one prompt
        self.away: AwayWatch = AwayWatch(self, cfg, server, self.sessions, rt)  # limits, budgets
        self.queue: PromptQueue = PromptQueue(self, self.sessions, rt)  # typed when turns end
        self.progress.queue = self.queue
        self.queue.turn_running = self.progress.turn_running
        self.queue.on_change = self._queue_changed  # its status message and the panel
        self.stalls: StallWatch = StallWatch(
            self, self.sessions, rt, self.progress, cfg.stall_minutes
        )
        self.progress.on_died = self.stalls.session_died
        self.sessions.notify = self.threads.notify
        channel = server.general_channel_id
        self.panel: ControlPanel | None = (
            ControlPanel(self, self.sessions, channel) if channel else None
        )
        self.schedules: Scheduler = Scheduler(self, self.sessions, self.queue)  # /schedule
        if self.panel is not None:
            self.sessions.on_change = self.panel.request_refresh
            self.schedules.on_change = self.panel.request_refresh
            self.panel.sections.append(functools.partial(schedule.panel_section, rt, server.name))
            self.panel.sections.append(self.away.panel_section)  # limits, budgets left
            self.panel.sections.append(functools.partial(queue.panel_section, self.sessions, rt))
        self.handled = HandledMessages(rt)  # the last message handled per channel
        self.catch_up: CatchUp = CatchUp(self, self.handled)  # what was sent while away
        self.tree: BridgeCommandTree = BridgeCommandTree(self)  # the slash commands' check
        for feature in feature_modules():  # each adds its items, commands, listeners
            feature.register(self)
        self.relay: Relay | None = None  # built in setup_hook: it needs the HTTP session
        self.voice_replies: VoiceReplies | None = None  # the process's, shared with the drainer
        self.control_tasks: list[asyncio.Task] = []  # the worktree watcher and the panel
        self._progress_task: asyncio.Task | None = None
        self._http_session: aiohttp.ClientSession | None = None
        self._startup: asyncio.Task | None = None
        self.setup_started = False  # login retries only what comes before setup_hook

    def _queue_changed(self, key: str) -> None:
        """A session's queued prompts changed: its status message and the panel show them."""
        self.progress.refresh(key)
        if self.panel is not None:
            self.panel.request_refresh()

    async def setup_hook(self) -> None:
        self.setup_started = True
        self._http_session = aiohttp.ClientSession()
        self.relay = Relay(
            self.cfg,
            self.server,
            self.sessions,
            self.runtime,
            self._http_session,
            self.screens,
            self.queue,
            self.voice_replies,
            self.handled,
        )
        self.catch_up.relay = self.relay
        self._progress_task = asyncio.create_task(self.progress.run())
        self.control_tasks.append(asyncio.create_task(self.away.run()))
        self.control_tasks.append(asyncio.create_task(self.queue.run()))
        self.control_tasks.append(asyncio.create_task(self.stalls.run()))
        try:
            await sync(self.tree, self.server.guild_id)
        except Exception:
            if self.is_closed():  # shutting down meanwhile (another server's token refused)
                log.debug("%s: shut down while registering the commands", self.server.name)
            else:
                log.exception("%s: could not register the slash commands", self.server.name)
        self.control_tasks.append(asyncio.create_task(self.threads.watch_worktrees()))
        self.control_tasks.append(asyncio.create_task(self.schedules.run()))
        if self.panel is not None:
            self.control_tasks.append(asyncio.create_task(_start_panel(self.panel)))
        await self.sessions.adopt_running()
        # Started in the background: on_message works meanwhile and waits on the same locks.
        self._startup = asyncio.create_task(self._start_sessions())

    async def _start_sessions(self) -> None:
        """At bot start: close sessions of threads archived or deleted meanwhile, then bring
        back the others and start ``startup: true`` projects and threads."""
        try:
            await self.threads.reconcile()
        except Exception:
            log.exception("%s: could not check threads closed while away", self.server.name)
        await self.sessions.start_startup_projects()

    async def on_connect(self) -> None:
        """A fresh gateway session (READY; a RESUME replays what was missed by itself)."""
        self.catch_up.connected()  # before any message of the session is handled
        log.info("%s: %s", self.server.name, CONNECTED)
        metrics.GATEWAY_CONNECTS.labels(self.server.name, "ready").inc()

    async def on_ready(self) -> None:
        log.info("%s: logged in as %s", self.server.name, self.user)
        await self.catch_up.run()  # the messages sent while the bot was away

    async def on_resumed(self) -> None:
        metrics.GATEWAY_CONNECTS.labels(self.server.name, "resumed").inc()
        if self.catch_up.holding():  # a READY whose on_ready never came (lost, then resumed)
            await self.catch_up.run()

    async def on_message(self, message: discord.Message) -> None:
        if self.relay is not None:
            await self.relay.on_message(message, self.user.id if self.user else None)

    async def serve(self) -> None:
        """Log in (waiting for Discord as long as it takes), then stay connected."""
        await login_retry.login(self, self.server.token, self.server.index, self.server.name)
        await login_retry.connect(self, self.server.name)

    async def close(self) -> None:
        self.progress.stop()
        self.away.stop()
        if self._http_session is not None:
            await self._http_session.close()
        await asyncio.to_thread(self.sessions.tmux.close)  # the `tmux -C` client, if any
        await super().close()


async def _start_panel(panel: ControlPanel) -> None:
    try:
        await panel.start()
    except Exception:
        log.exception("could not show the control panel in %s", panel.channel_id)


def point_discord_py_at(api_base: str, gateway_url: str) -> None:
    """discord.py has no base-URL setting; these two class attributes are what it reads."""
    discord.http.Route.BASE = api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


def prepare_directories(
    own_locations: str | None = None, own_dirs: tuple[str, str] | None = None
) -> runtime.Runtime:
    """The runtime and state directories, created private; durable files an older bridge
    kept in the runtime directory move to the state directory. ``own_locations``: the config
    file of a bot whose dirs (``own_dirs``: runtime, state) are its own (``try``): recorded
    for that config only."""
    rt = (runtime.Runtime(*own_dirs) if own_dirs else runtime.Runtime()).ensure()
    if own_locations:
        locations.record_config_locations(own_locations, rt)
    else:
        locations.record_locations(rt)
    if rt.root == runtime.tmp_fallback_path():
        log.warning(
            "%s belongs to someone else or is not private; using %s",
            runtime.shared_tmp_path(),
            rt.root,
        )
    moved = rt.move_legacy_state()
    if moved:
        log.info(
            "moved %d file(s) of durable state from %s to %s", len(moved), rt.root, rt.state_root
        )
    log.info("runtime dir %s, state dir %s", rt.root, rt.state_root)
    return rt


def _logged_in_http(bots: list[BridgeBot]) -> Callable[[str], discord.http.HTTPClient | None]:
    """Server name → that bot's discord.py HTTP client, once it has logged in."""
    by_name = {bot.server.name: bot for bot in bots}

    def http_for(server_name: str) -> discord.http.HTTPClient | None:
        bot = by_name.get(server_name)
        if bot is None or bot.user is None or bot.is_closed():
            return None
        return bot.http

    return http_for


async def run_bridge(cfg: BridgeConfig, own_dirs: tuple[str, str] | None = None) -> None:
    """Run every configured server's bot until SIGINT/SIGTERM. ``own_dirs``: this bot's
    runtime and state dirs, its own (``discord-bridge try``), not the bridge home's. They are
    not put in the environment: a tmux server this bot starts would keep them for every
    window the user opens there."""
    rt = prepare_directories(cfg.path if own_dirs else None, own_dirs)
    try:  # sessions it adopted with a config of its own (try's) follow it again
        if routed := adoption.route_live(rt, cfg.path):  # before anything runs: a few reads
            log.info("the hooks of %d adopted session(s) route to this bot again", routed)
    except (OSError, runtime.UnsafeRuntimeDir) as err:
        log.warning("could not route the adopted sessions' hooks to this bot: %s", err)
    try:
        await _run_bots(cfg, rt)
    finally:  # its adopted sessions' hooks stop coming here (the sessions keep running)
        try:
            adoptions.unroute_all()
        except (OSError, runtime.UnsafeRuntimeDir) as err:
            log.warning("could not unroute the adopted sessions' hooks: %s", err)


async def _run_bots(cfg: BridgeConfig, rt: runtime.Runtime) -> None:
    first = cfg.servers[0]
    if any(s.api_base != first.api_base for s in cfg.servers):
        log.warning("servers use different apiBaseUrl values; all use %s", first.api_base)
    point_discord_py_at(first.api_base, first.gateway_url)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(IO_THREADS, thread_name_prefix="bridge-io"))
    sys.setswitchinterval(SWITCH_INTERVAL)
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    watch = asyncio.create_task(LoopWatch().run())  # lag over 250 ms logged with its cause

    bots = [BridgeBot(cfg, server, rt) for server in cfg.servers]
    voice_replies = VoiceReplies(cfg)  # replies spoken after voice prompts (voice.replies)
    for bot in bots:
        bot.voice_replies = voice_replies
    login_retry.quiet_reconnect_tracebacks()
    # Each server logs in on its own: one waiting for the network does not hold up the others;
    # a rejected token (TokenRejected) ends the process, like any other config error.
    tasks = [asyncio.create_task(bot.serve(), name=bot.server.name) for bot in bots]
    endpoint = await _start_endpoint(cfg, bots, rt)  # metrics and /health, when asked for
    drainer = OutboxDrainer(cfg, rt, _logged_in_http(bots), voice_replies)
    tasks.append(asyncio.create_task(drainer.run(stop)))
    stopper = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait([*tasks, stopper], return_when=asyncio.FIRST_COMPLETED)
    stop.set()
    log.info("shutting down; tmux sessions keep running")
    await voice_replies.close()  # a reply being spoken is dropped: its text is posted
    if endpoint is not None:
        await endpoint.stop()
    for bot in bots:
        await bot.close()
    for task in tasks:
        task.cancel()
    watch.cancel()
    await asyncio.gather(*tasks, watch, return_exceptions=True)
    for finished in done:
        if finished is not stopper and (err := finished.exception()):
            raise err  # a rejected token or intent ends the process


async def _start_endpoint(
    cfg: BridgeConfig, bots: list[BridgeBot], rt: runtime.Runtime
) -> OperationsEndpoint | None:
    """The operator's endpoint if ``metrics.enabled``; one that cannot listen is logged, and
    the bridge serves Discord all the same."""
    if not cfg.metrics.enabled:
        hook_figures.FigureReader(rt.hook_figures).stop()  # no reader: the hooks append nothing
        return None
    endpoint = OperationsEndpoint(cfg, bots, rt)
    try:
        await endpoint.start()
    except OSError as err:
        log.error(
            "metrics: cannot listen on %s:%d (%s); serving Discord without them",
            cfg.metrics.host,
            cfg.metrics.port,
            err,
        )
        await endpoint.stop()
        return None
    return endpoint
