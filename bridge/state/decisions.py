"""Request and decision files: how a waiting hook and the bot exchange a user's decision.

A hook that asks Discord writes ``prompts/<id>.json`` (the request: kind, session, channel,
message, the tool input) and waits for ``prompts/<id>.decision``. Whoever decides first
creates the decision file, exclusively and atomically (written aside, then hard-linked into
place, which fails if the name exists): the bot for a click, a later hook event of the same
session when the terminal answered first, the waiting hook itself at its timeout. So a
double click, a click racing the terminal, or a click racing the timeout decide exactly once,
and the bot needs no memory of its own: a restarted bot finds the request on disk.

The files are read and written as typed records, :class:`Request` and :class:`Decision`
(:mod:`bridge.state.decision_records`, presented here too: ``decisions.Request``). This module
is on the fast path of every PreToolUse/PostToolUse hook through ``mark_stale``, so it imports
only ``os`` and small bridge modules.
"""

from __future__ import annotations

import os
import time

from bridge import fastjson
from bridge.state import private_files, runtime
from bridge.state.decision_records import ID_LENGTH, Decision, Request, is_valid_id

REQUEST = ".json"
DECISION = ".decision"
ANSWERS = ".answers"  # a question prompt's partial answers, kept by the bot between clicks

# A decision's outcome. The user's, on Discord (what a click may decide:
# bridge/discord/prompt_actions.py; what Claude Code then reads: ``cli_answer`` in
# bridge/handlers/permission.py):
ALLOWED = "allow"
ALWAYS_ALLOWED = "always"  # allowed, and a permission suggestion applied (suggestion, scope)
DENIED = "deny"
TOLD_INSTEAD = "tell"  # denied, with what Claude should do instead (message)
ANSWERED = "answers"  # a question's answers (answers)
PLAN_APPROVED = "approve"  # with the permission mode to switch to (mode), and notes (message)
KEEP_PLANNING = "keep_planning"  # a plan sent back, with what should change (message)
ACCEPTED = "accepted"  # an MCP server's request for input, answered (content; a url: none)
DECLINED = "declined"  # … refused
CANCELLED = "cancelled"  # … dismissed
TO_TERMINAL = "to_terminal"  # … left to Claude Code's own dialog
RETRY = "retry"  # a call auto mode refused: the model may try it again (the check judges it)
NO_RETRY = "no_retry"  # … or not
# Or nobody's on Discord:
ANSWERED_ELSEWHERE = "answered_elsewhere"  # the terminal answered first
TIMED_OUT = "timeout"

# Kinds whose hook runs alongside a dialog in Claude Code (a key could answer it). An MCP
# server's request for input (Elicitation) and a refused call's retry (PermissionDenied) keep
# Claude Code waiting on the hook, with its input box on screen and no dialog, until it answers.
DIALOG_KINDS = ("permission", "question", "plan")


def new_id() -> str:
    """A request id: 12 lowercase base-36 characters, safe in a file name and a custom_id."""
    number = int.from_bytes(os.urandom(8), "big")
    chars = []
    for _ in range(ID_LENGTH):
        number, digit = divmod(number, 36)
        chars.append("0123456789abcdefghijklmnopqrstuvwxyz"[digit])
    return "".join(chars)


def _path(rt: runtime.Runtime, request_id: str, suffix: str) -> str:
    if not is_valid_id(request_id):
        raise ValueError(f"not a request id: {request_id!r}")
    return os.path.join(rt.prompts, request_id + suffix)


# --- requests -------------------------------------------------------------------------------


def write_request(rt: runtime.Runtime, request: Request) -> None:
    """Create or update a request (``request.id`` names it)."""
    path = _path(rt, request.id, REQUEST)
    private_files.write_atomic(path, fastjson.dumps(request.to_dict()).encode())


def read_request(rt: runtime.Runtime, request_id: str) -> Request | None:
    """The request, or None if it is missing, unreadable or not a valid request (and one
    whose id is not its file's name is not valid)."""
    if not is_valid_id(request_id):
        return None
    request = Request.from_dict(private_files.read_json(_path(rt, request_id, REQUEST)))
    return request if request is not None and request.id == request_id else None


def open_prompts(rt: runtime.Runtime) -> list[Request]:
    """Every request still waiting for a decision, whose hook is still alive."""
    found = []
    for request_id in _request_ids(rt):
        request = read_request(rt, request_id)
        if request and is_pending(rt, request):
            found.append(request)
    return found


def asking(rt: runtime.Runtime, channel_id: str, margin: float) -> list[Request]:
    """The requests of a channel's (or thread's) session whose dialog may still be open in
    Claude Code: their hook still runs, decided or not (a decided dialog stays on screen until
    the hook's answer reaches Claude Code), within the longest it may run: ``margin`` seconds
    past its deadline (``claude.hook_table.PROMPT_TIMEOUT_MARGIN``). Bot side only."""
    found = []
    for request_id in _request_ids(rt):
        request = read_request(rt, request_id)
        if request is None or request.channel_id != channel_id:
            continue
        if request.kind not in DIALOG_KINDS:  # Claude Code waits on the hook: no dialog
            continue
        if time.time() <= request.deadline + margin and _alive(request.pid):
            found.append(request)
    return found


def close_channel(rt: runtime.Runtime, channel_id: str) -> list[str]:
    """Close every request of a channel's (or thread's) session: its Claude Code was ended,
    and with it any dialog. Its hook may live on a little (it looks for its Claude Code once
    a second): until then :func:`asking` would hold the keys of the channel's next session
    (a project removed and another added in its channel had its first message refused)."""
    closed = []
    for request_id in _request_ids(rt):
        request = read_request(rt, request_id)
        if request is not None and request.channel_id == channel_id:
            close(rt, request_id)
            closed.append(request_id)
    return closed


def is_pending(rt: runtime.Runtime, request: Request) -> bool:
    """Undecided, before its deadline, and its hook still waiting for the answer."""
    if os.path.exists(_path(rt, request.id, DECISION)):
        return False
    if time.time() > request.deadline:
        return False
    return _alive(request.pid)


def close(rt: runtime.Runtime, request_id: str) -> None:
    """Remove a request and everything that belongs to it (the hook does this when done)."""
    for suffix in (REQUEST, DECISION, ANSWERS):
        try:
            os.unlink(_path(rt, request_id, suffix))
        except FileNotFoundError:
            pass


# --- decisions ------------------------------------------------------------------------------


def decide(rt: runtime.Runtime, request_id: str, decision: Decision) -> bool:
    """Record ``decision`` unless someone decided first. True if this call decided."""
    path = _path(rt, request_id, DECISION)
    tmp = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(fastjson.dumps(decision.to_dict()).encode())
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path)  # atomic and exclusive: fails if a decision is already there
        _audit(rt, request_id, decision)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)


def _audit(rt: runtime.Runtime, request_id: str, decision: Decision) -> None:
    """The decision in the audit trail: imported here, once a decision is made (this module
    is on the fast path of every tool call's hook; the trail is not)."""
    from bridge.state import audit

    audit.record_decision(rt, read_request(rt, request_id), decision)


def read_decision(rt: runtime.Runtime, request_id: str) -> Decision | None:
    """The decision, or None if there is none yet (or the file is not a valid decision)."""
    return Decision.from_dict(private_files.read_json(_path(rt, request_id, DECISION)))


def decision_path(rt: runtime.Runtime, request_id: str) -> str:
    return _path(rt, request_id, DECISION)


def mark_stale(rt: runtime.Runtime, event: dict) -> list[str]:
    """A later hook event of a session means its open prompts were answered in the terminal.

    What counts is tied to the prompt's own tool call: its PostToolUse / PostToolUseFailure
    (tool name and input; a question's input comes back with its answers added, a plan's as
    the model's ``{}``), or the end of the turn or a new one (Stop, StopFailure,
    UserPromptSubmit; not for an MCP server's request for input, which holds the turn while
    a message typed meanwhile is queued). Another tool call starting or finishing
    (PreToolUse, a parallel read-only tool) closes nothing: the dialog may still be open. A
    background subagent's events (same session, an ``agent_id``) only close that subagent's
    prompts, and the main thread's only its own: both run at once. Returns the ids of the
    prompts this call closed. Costs one ``listdir`` when nothing is open.
    """
    session = event.get("session_id")
    closed = []
    for request_id in _request_ids(rt):
        request = read_request(rt, request_id)
        if request and not _alive(request.pid):
            close(rt, request_id)  # its hook was killed outright: nobody waits for it
            continue
        if not request or request.session_id != session or not _is_later(event, request):
            continue
        if request.agent_id != event.get("agent_id"):
            continue
        name = event.get("hook_event_name")
        seen_in = name if isinstance(name, str) else None
        elsewhere = Decision(outcome=ANSWERED_ELSEWHERE, event=seen_in)
        if decide(rt, request_id, elsewhere):
            closed.append(request_id)
    return closed


TURN_EVENTS = ("UserPromptSubmit", "Stop", "StopFailure")  # the prompt's turn is over
TOOL_DONE_EVENTS = ("PostToolUse", "PostToolUseFailure")


def _is_later(event: dict, request: Request) -> bool:
    name = event.get("hook_event_name")
    if name == "UserPromptSubmit" and request.kind == "elicitation":
        return False  # a message queued while Claude Code waits for the form's answer
    if name in TURN_EVENTS:
        return True
    if name not in TOOL_DONE_EVENTS:
        return False  # PreToolUse (another call starting), or anything unknown
    tool = event.get("tool_name")
    if tool != request.tool_name:
        return False
    if tool == "ExitPlanMode":
        return True  # PostToolUse shows the model's own ``{}``; the hook saw the plan
    seen = event.get("tool_input")
    if tool == "AskUserQuestion" and isinstance(seen, dict):  # PostToolUse adds the answers
        seen = {k: v for k, v in seen.items() if k not in ("answers", "annotations")}
    return seen == request.tool_input


# --- a question's or a form's partial answers (bot side) ------------------------------------


def has_answers(rt: runtime.Runtime, request_id: str) -> bool:
    return os.path.exists(_path(rt, request_id, ANSWERS))


def read_answers(rt: runtime.Runtime, request_id: str) -> dict:
    return private_files.read_json(_path(rt, request_id, ANSWERS)) or {}


def write_answers(rt: runtime.Runtime, request_id: str, answers: dict) -> None:
    private_files.write_atomic(_path(rt, request_id, ANSWERS), fastjson.dumps(answers).encode())


# --- helpers --------------------------------------------------------------------------------


def _request_ids(rt: runtime.Runtime) -> list[str]:
    try:
        names = os.listdir(rt.prompts)
    except FileNotFoundError:
        return []
    return [n[: -len(REQUEST)] for n in names if n.endswith(REQUEST) and not n.startswith(".")]


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
