"""What every hook does first: read the event, find the session's Discord channel, never fail.

Claude Code spawns a hook process for every event it is registered for, so this path must be
cheap (standard library ``os``/``sys`` and small bridge modules only) and must never break
Claude Code: every exception is logged to ``logs/hooks.log`` in the runtime dir and the
process exits 0.

Target resolution: the pane's env marker (``DISCORD_BRIDGE_CHANNEL_ID``, set by the bot on
the panes it starts) first; else, for a session adopted from Discord, the thread recorded for
its ``session_id`` (``bridge/state/adoptions.py``; released: nowhere), by the bridge home's
bot or by the running bot whose own config the bridge home routes that id to (``try``,
``run --config``: its config and dirs are used instead of the home's); else the project whose
``projectPath`` is the event's ``cwd`` or the longest one containing it; no match means the
session is not ours: exit 0, no network.

What a hook trusts from its environment: a project's ``.claude/settings.json`` ``env`` block
(or Claude itself, through ``settings.local.json``) can set any variable a hook sees, and a
hook cannot tell those from the ones the bot put on the pane. So the Discord endpoints and the
token come only from the config file (``DISCORD_BRIDGE_API_BASE`` / ``_GATEWAY_URL`` are for
the bot process), and the channel and thread markers are used only when they are snowflakes
that the loaded config maps (a thread: listed in the project's ``threads[]`` or recorded by
the bot for that project); anything else is ignored and logged.
"""

from __future__ import annotations

import os
import sys
import time

from bridge import config, fastjson
from bridge.state import adoptions, locations, private_files, runtime
from bridge.state.runtime import ENV_CHANNEL, ENV_THREAD

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeGuard

    from bridge.discord import handoff
    from bridge.discord.post import Post
    from bridge.discord.rest import DiscordREST


class HookContext:
    """A hook event of a session the bridge serves, with where its output goes."""

    __slots__ = (
        "cfg",
        "channel_id",
        "claim",
        "deferred",
        "env",
        "event",
        "home",
        "project",
        "runtime",
        "thread_id",
    )

    def __init__(
        self,
        event: dict,
        cfg: config.BridgeConfig,
        project: config.Project,
        thread_id: str | None,
        env: dict | os._Environ[str] | None = None,
    ) -> None:
        self.event = event
        self.cfg = cfg
        self.project = project
        self.thread_id = thread_id
        self.channel_id = thread_id or project.channel_id  # where messages are posted
        self.runtime = runtime.Runtime.from_env(env)
        self.env = os.environ if env is None else env  # the locations, markers, pane's tmux
        self.home = runtime.bridge_home(env)  # the bridge home the locations came from
        # what runs after the hook has answered (:meth:`defer`); None: not in a hook process
        self.deferred: list[Callable[[], None]] | None = None
        # the Stop event the bot runs (bot/delivery/stop_events), released once its messages
        # are in the outbox, which holds them until then (discord/handoff.Claim)
        self.claim: handoff.Claim | None = None

    def defer(self, job: Callable[[], None]) -> None:
        """Run ``job`` once the hook has answered, in a process Claude Code does not wait for
        (:func:`run`, :func:`detach`); at once outside a hook process. ``job`` must not
        raise: nobody is there to hear it."""
        if self.deferred is None:
            job()
        else:
            self.deferred.append(job)

    @property
    def agent(self) -> str:
        """The session's agent (``"claude"``, ``"codex"``): its thread's, else its project's."""
        if self.thread_id is None:
            return self.project.agent
        entry = next((t for t in self.project.threads if t.channel_id == self.thread_id), None)
        return config.thread_settings(self.project, entry)["agent"] or self.project.agent

    @property
    def server(self) -> config.Server:
        return self.project.server

    def rest(self) -> DiscordREST:
        """A REST client for this server; :class:`DeliveryError` when its API is gone with
        the bot (``hooksPostDirectly: false``, e.g. ``try``'s emulator) and no bot runs."""
        from bridge.discord import handoff
        from bridge.discord.post import DeliveryError
        from bridge.discord.rest import DiscordREST  # here: httpx is loaded only when there is work

        if not self.server.hooks_post_directly and not handoff.wake_bot(
            self.runtime, self.channel_id
        ):
            raise DeliveryError("the bot is not running (hooksPostDirectly: false)", retryable=True)
        return DiscordREST(self.server.api_base, self.server.token)

    def deliver(self, posts: list[Post], budget: float | None = None) -> None:
        """Post to this session's channel in order; spool what Discord does not take now."""
        from bridge.discord import delivery

        budget = delivery.HOOK_BUDGET if budget is None else budget
        delivery.deliver(self.runtime, self.server, self.channel_id, posts, budget, self.claim)


def hook_env(argv: list[str], environ: dict | os._Environ[str]) -> dict[str, str]:
    """What this hook process may take from its command line and environment: the trusted
    locations (:func:`locations.hook_locations`), the pane's channel and thread markers
    (checked against the config in :func:`resolve`) and its tmux (``notify.DeskQuery``)."""
    env = locations.hook_locations(argv, environ)
    for name in (ENV_CHANNEL, ENV_THREAD, "TMUX", "TMUX_PANE"):
        if environ.get(name):
            env[name] = environ[name]
    return env


def resolve(event: dict, env: dict[str, str] | None = None) -> HookContext | None:
    """The session's context, or None when the event is not for the bridge. ``env``: the
    locations and markers to use, default :func:`hook_env` of this process."""
    if env is None:
        from bridge.handlers import Found

        env = Found.env if Found.env is not None else hook_env(sys.argv, os.environ)
    marker = env.get(ENV_CHANNEL)
    if not marker:  # adopted by a running bot of a config of its own (try, run --config)?
        adoptions.follow_route(env, event.get("session_id"))
    path = runtime.config_path(env)
    if not marker and not os.path.exists(path):
        return None  # someone else's Claude Code session on a machine without our config
    locations.claim_runtime_dir(env)  # a bridge is set up here: take the name before others do
    cfg = config.load(path, {})  # endpoints from the file only: never from a hook's env
    rt = runtime.Runtime.from_env(env)
    project = cfg.project_for_channel(marker) if is_snowflake(marker) else None
    if marker and project is None:
        note(rt, f"ignored {ENV_CHANNEL}={marker[:40]!r}: not a channel of {path}")
    thread_id = None
    if project is not None:
        thread_id = env.get(ENV_THREAD) or None
        if thread_id is not None and not is_thread_of(cfg, rt, project, thread_id):
            note(rt, f"ignored {ENV_THREAD}={thread_id[:40]!r}: not a thread of {project.name}")
            thread_id = None
    if project is None and not marker:
        adopted = adoptions.lookup(rt, event.get("session_id"))
        if adopted is not None:  # adopted (or released): its record decides, never its cwd
            return _adopted_context(event, cfg, rt, adopted, env)
    if project is None:
        cwd = event.get("cwd") or os.getcwd()
        project = cfg.project_for_cwd(cwd) if isinstance(cwd, str) else None
    if project is None:
        return None
    refused = env.get(locations.REFUSED_RUNTIME_DIR)
    if refused and event.get("hook_event_name") in ("SessionStart", "Stop"):  # not every tool
        note(
            rt,
            f"refused the runtime dir {refused} (not a private directory of yours, "
            f"perhaps another user's after a reboot); using {rt.root}",
        )
    return HookContext(event, cfg, project, thread_id, env)


def _adopted_context(
    event: dict, cfg: config.BridgeConfig, rt: runtime.Runtime, adopted: dict, env: dict
) -> HookContext | None:
    """A session adopted from Discord posts to the thread recorded at adoption (while that
    thread is still one of its project's); a released one posts nowhere."""
    if adopted.get("released"):
        if event.get("hook_event_name") == "Stop":  # once a turn, not on every tool call
            note(rt, f"session {adopted.get('session_id')} was released: its reply not posted")
        return None
    parent, key = adopted.get("parent_id"), adopted.get("key")
    project = cfg.project_for_channel(parent) if is_snowflake(parent) else None
    if project is None or not isinstance(key, str) or not is_thread_of(cfg, rt, project, key):
        note(rt, f"adopted session {event.get('session_id')}: its thread is gone; not posted")
        return None
    return HookContext(event, cfg, project, key, env)


def is_snowflake(value: object) -> TypeGuard[str]:
    """A Discord id: 15-21 ASCII digits (env values become file names and URL parts)."""
    return isinstance(value, str) and value.isascii() and value.isdigit() and 15 <= len(value) <= 21


def is_thread_of(
    cfg: config.BridgeConfig, rt: runtime.Runtime, project: config.Project, thread_id: str
) -> bool:
    """``thread_id`` is a snowflake the config lists under ``project`` or the bot recorded as
    one of its threads (its entry may not be in the file yet, or could not be written)."""
    if not is_snowflake(thread_id) or cfg.project_for_channel(thread_id) is not None:
        return False
    if any(entry.channel_id == thread_id for entry in project.threads):
        return True
    from bridge.state import session_state

    record = session_state.load(rt, thread_id) or {}
    return record.get("thread_id") == thread_id and record.get("project") == project.name


def note(rt: runtime.Runtime, line: str) -> None:
    """A line in the hook log; never raises (a hook must not fail over its log)."""
    try:
        private_files.append_log(rt.ensure().hook_log, f"{sys.argv[0]}: {line}")
    except Exception:
        pass


def run(load_handler: Callable[[], Callable[[HookContext], dict | None]]) -> None:
    """Run the handler ``load_handler`` gives for this process's hook event, if the event is a
    bridge session's (only then is the handler imported); print its answer; always exit 0."""
    try:
        event = fastjson.loads(sys.stdin.buffer.read() or b"{}")
        if not isinstance(event, dict):
            raise ValueError("hook input is not a JSON object")
        context = resolve(event)
        if context is not None:
            started = time.monotonic()
            context.deferred = []
            answer = load_handler()(context)
            if answer is not None:
                sys.stdout.write(fastjson.dumps(answer))
                sys.stdout.flush()
            name = event.get("hook_event_name")  # the metrics' hook durations: one append
            if isinstance(name, str) and name.isalpha():  # (state/hook_figures.py reads it)
                took = time.monotonic() - started
                private_files.append_if_there(
                    context.runtime.hook_figures, f"hook {name} {took:.4f}\n"
                )
            if context.deferred:
                detach(context.deferred)
    except BaseException as err:  # a hook must never break Claude Code, whatever happened
        log_error(err)
    leave(0)


def leave(status: int) -> None:
    """Exit now, without the interpreter's tear-down: freeing every module and object on the
    way out was 7.9 M of a bridge session's 46 M instructions (bench/hooks_fast_path.py
    --instructions), and after :func:`detach` it copied the memory it touched (the child
    shares it). Nothing is lost by it: the hooks write their files whole (``os.write``,
    ``with`` blocks), start no thread that must finish (the Stop hook's comparison is joined
    or abandoned, as before) and register nothing ``atexit``; the standard streams are
    flushed here."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(status)


def detach(jobs: list[Callable[[], None]]) -> None:
    """Run ``jobs`` in a child process and return at once (the hook then exits). Claude Code
    waits for the hook's pipes to close as well as for its exit, so they go first: this
    process's standard streams become ``/dev/null`` before the fork, and the child holds no
    pipe of Claude Code's; it leaves the process group too (``setsid``), so that what stops
    the hook's group does not stop it. Without a child to be had, the jobs run here."""
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    try:
        child = os.fork()
    except OSError:
        for job in jobs:
            job()
        return
    if child:
        return
    try:
        os.setsid()
        os.nice(10)  # behind the hook's own exit and Claude Code's request (a loaded machine)
        for job in jobs:
            job()
    except BaseException as err:
        log_error(err)
    finally:
        os._exit(0)


def log_error(err: BaseException) -> None:
    import traceback

    text = "".join(traceback.format_exception(err))
    try:
        rt = runtime.Runtime.from_env(hook_env(sys.argv, os.environ)).ensure()
        private_files.append_log(rt.hook_log, f"{sys.argv[0]}: {text}")
    except Exception as log_err:  # the runtime dir itself may be the problem
        sys.stderr.write(f"discord-bridge hook: {text}\n(log unavailable: {log_err})\n")
