"""Pinging the owner when Claude waits for them, once per wait, and Claude Code's notices.

A *wait* starts when Claude stops with a reply and ends with the user's next (human) prompt.
The reply itself mentions the owner, so the phone notifies at once; ``waits/<session>``
remembers that, so the ``idle_prompt`` notice Claude Code sends 60 s later, or the extra Stop
of a background task, pings nobody again. A prompt that asks for a decision mentions the
owner in its own message (``bridge/handlers/permission.py``); the ``permission_prompt``
notice about the same dialog is then dropped rather than posted twice.

None of these mention the owner while they sit at the session's terminal: a tmux client
attached to it and active within ``notifications.activeWithinSeconds`` (unless
``notifications.whenAttached``).
"""

from __future__ import annotations

import os

from bridge.handlers.context import HookContext

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from collections.abc import Mapping

DESK_TIMEOUT = 2.0  # seconds tmux has to say who is attached
FAILURE_BUDGET = 6.0  # seconds to post a turn's failure (the StopFailure hook's timeout: 10)
_SESSION_CHARS = frozenset("0123456789abcdefABCDEF-")
# Notices that Claude waits for the owner: they ping (2.1.332: ``agent_needs_input`` also says
# that a session in the background needs an answer, or that auto mode cannot check actions
# and asks what to do; ``agent_completed``, a background session finished, does not).
WAITS = (
    "permission_prompt",
    "idle_prompt",
    "elicitation_dialog",
    "elicitation_url_dialog",
    "agent_needs_input",
)


def mention_for(context: HookContext, desk: DeskQuery | None = None) -> str:
    """``<@owner>`` if the owner should be pinged now, else "" (also while the owner sits at
    this session's terminal, unless ``notifications.whenAttached``). ``desk``: the question
    :func:`ask_desk` put to tmux earlier (asked now when not given)."""
    if not context.cfg.mention_owner:
        return ""
    if not context.cfg.notify_when_attached:
        desk = desk or DeskQuery.start()
        if desk is not None and desk.at_desk(context.cfg.active_within):
            return ""
    from bridge.discord.post import mention

    return mention(context.server.owner_id)


def ask_desk(context: HookContext) -> DeskQuery | None:
    """Start asking tmux whether the owner is at the desk, when a mention may depend on it:
    the answer comes while the hook lays out its message (:func:`mention_for` reads it)."""
    cfg = context.cfg
    if not cfg.mention_owner or cfg.notify_when_attached:
        return None
    return DeskQuery.start(context.env)


class DeskQuery:
    """Whether the owner is at the desk: a tmux client is attached to the session of this
    hook's pane and was active (a key pressed, or attached) within the last ``within``
    seconds. One ``tmux list-clients`` of this hook's pane (~3 ms), started as soon as a hook
    knows it may ping and read when it must decide, so that tmux answers while the hook works.

    Asked of the tmux server the pane runs in (``$TMUX``, ``$TMUX_PANE``, inherited through
    Claude Code). Spawned with ``posix_spawn`` and read from a pipe: ``subprocess`` (locale,
    re, enum, threading, selectors…) and the wait for tmux took 18 ms of the 47 from a Stop
    hook's spawn to its reply at Discord (``bench/reply_latency.py``'s probe, a mention due).
    No tmux, or tmux not answering within :data:`DESK_TIMEOUT`: not at the desk (a ping too
    many beats one missed). Control-mode clients (``tmux -C``: the bot's own,
    ``tmux.controlMode``) are programs, not a person.
    """

    __slots__ = ("_deadline", "_fd", "_pid")

    def __init__(self, pid: int, fd: int, deadline: float) -> None:
        self._pid, self._fd, self._deadline = pid, fd, deadline

    @classmethod
    def start(cls, env: Mapping[str, str] | None = None) -> DeskQuery | None:
        """The question asked; None when this hook runs in no tmux pane (or tmux is missing)."""
        import time

        env = os.environ if env is None else env
        pane, server = env.get("TMUX_PANE", ""), env.get("TMUX", "").split(",")[0]
        if not pane.startswith("%") or not server.startswith("/"):
            return None
        argv = [
            "tmux",
            "-S",
            server,
            "list-clients",
            "-t",
            pane,
            "-F",
            "#{client_control_mode} #{client_activity}",
        ]
        read_end, write_end = os.pipe()  # both close-on-exec; dup2 onto 1 clears it for tmux
        try:
            pid = os.posix_spawnp(
                "tmux",
                argv,
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, write_end, 1),
                    (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                ],
                setsigdef=_python_ignored_signals(),
            )
        except OSError:
            os.close(read_end)
            return None
        finally:
            os.close(write_end)
        return cls(pid, read_end, time.monotonic() + DESK_TIMEOUT)

    def at_desk(self, within: float) -> bool:
        """Whether a person's client was active within ``within`` seconds (tmux's answer)."""
        import time

        try:
            listed = self._answer()
        except OSError:  # whatever became of tmux, the reply must go
            listed = None
        now = time.time()
        for line in (listed or "").splitlines():
            control, _, activity = line.partition(" ")
            if control == "0" and activity.isdigit() and now - int(activity) <= within:
                return True
        return False

    def _answer(self) -> str | None:
        """tmux's output once it exited with 0; None if it failed or took too long (then it
        is killed)."""
        import select
        import time

        chunks: list[bytes] = []
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        try:
            while True:
                left = self._deadline - time.monotonic()
                if left <= 0 or not poller.poll(left * 1000):
                    os.kill(self._pid, 9)  # SIGKILL: tmux is not answering
                    os.waitpid(self._pid, 0)
                    return None
                data = os.read(self._fd, 1 << 16)
                if not data:
                    break
                chunks.append(data)
        finally:
            os.close(self._fd)
        _, status = os.waitpid(self._pid, 0)
        return b"".join(chunks).decode(errors="replace") if status == 0 else None


def _python_ignored_signals() -> tuple[int, ...]:
    """Python ignores SIGPIPE and SIGXFSZ; a child gets the defaults back (as ``subprocess``
    does)."""
    import _signal  # the C module: ``signal`` would import enum (milliseconds)

    return tuple(
        getattr(_signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, name)
    )


def claim_wait(context: HookContext) -> bool:
    """True the first time in this wait (the caller then mentions the owner)."""
    path = _wait_path(context)
    if path is None:
        return True
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        os.close(os.open(path, flags, 0o600))
    except FileExistsError:
        return False
    except FileNotFoundError:  # no runtime dir yet: nothing remembers, so mention
        return True
    return True


def end_wait(context: HookContext) -> None:
    """The user answered (a human prompt, not a background task's report): the next wait may
    ping again."""
    path = _wait_path(context)
    if path is not None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _wait_path(context: HookContext) -> str | None:
    session = context.event.get("session_id")
    if not isinstance(session, str) or not session or not set(session) <= _SESSION_CHARS:
        return None
    return os.path.join(context.runtime.waits, session)


# --- the Notification hook ------------------------------------------------------------------


def on_notification(context: HookContext) -> None:
    """Forward a Claude Code notice unless Discord already shows it."""
    event = context.event
    kind = event.get("notification_type")
    message = str(event.get("message") or "").strip()
    if not message:
        return
    if kind == "permission_prompt" and _prompt_open(context):
        return  # the Discord prompt for this dialog is already there (and pinged)
    waiting = kind in WAITS
    if kind == "idle_prompt" and not claim_wait(context):
        return  # the reply already pinged the owner for this wait
    mention = mention_for(context) if waiting else ""
    _post(context, f"🔔 {_clean(message)}" + (f" {mention}" if mention else ""), mention)


def post_turn_failure(context: HookContext, text: str) -> None:
    """A turn an API error ended: no reply comes, so this notice takes its place, and pings
    the owner as the reply would have (once per wait). Within ``FAILURE_BUDGET``: Claude Code
    kills the StopFailure hook after 10 s (``hook_table``), and what is not posted by then
    must be in the outbox."""
    mention = mention_for(context)
    mention = mention if mention and claim_wait(context) else ""
    _post(context, text + (f" {mention}" if mention else ""), mention, FAILURE_BUDGET)


def _prompt_open(context: HookContext) -> bool:
    session = context.event.get("session_id")
    rt = context.runtime
    from bridge.state import decisions  # 2.6 M instructions: only for a permission notice

    return any(r.session_id == session for r in decisions.open_prompts(rt))


def _post(context: HookContext, content: str, mention: str, budget: float = 20.0) -> None:
    from bridge.discord.post import Post, allowed, message_payload

    payload = message_payload(content)
    payload["allowed_mentions"] = allowed(mention)
    context.deliver([Post(payload)], budget=budget)


def _clean(text: str) -> str:
    """Claude Code's notice as plain text: no mentions of anyone, ≤ 1,800 characters."""
    text = text.replace("@", "@\u200b")
    return text if len(text) <= 1800 else text[:1799] + "…"
