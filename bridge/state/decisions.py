"""Request and decision files: how a waiting hook and the bot exchange a user's decision.

A hook that asks Discord writes ``prompts/<id>.json`` (the request: kind, session, channel,
message, the tool input) and waits for ``prompts/<id>.decision``. Whoever decides first
creates the decision file, exclusively and atomically (written aside, then hard-linked into
place, which fails if the name exists): the bot for a click, a later hook event of the same
session when the terminal answered first, the waiting hook itself at its timeout. So a
double click, a click racing the terminal, or a click racing the timeout decide exactly once,
and the bot needs no memory of its own: a restarted bot finds the request on disk.

The files are read and written as typed records, :class:`Request` and :class:`Decision`
(``__slots__`` classes, not dataclasses: this module is on the fast path of every
PreToolUse/PostToolUse hook through ``mark_stale``, so it imports only ``os`` and small bridge
modules). A file of the wrong shape reads as nothing, never as a crash; keys a record does not
know are kept as they are, so an older or newer bridge reading the same file loses nothing.
"""

from __future__ import annotations

import os
import time

from bridge import fastjson
from bridge.state import private_files, runtime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from typing import Self

ID_LENGTH = 12
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
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


KINDS = ("permission", "question", "plan", "elicitation", "denied")
# Kinds whose hook runs alongside a dialog in Claude Code (a key could answer it). An MCP
# server's request for input (Elicitation) and a refused call's retry (PermissionDenied) keep
# Claude Code waiting on the hook, with its input box on screen and no dialog, until it answers.
DIALOG_KINDS = ("permission", "question", "plan")


# --- the records ----------------------------------------------------------------------------


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _text(value: object) -> bool:
    return isinstance(value, str)


def _optional_text(value: object) -> bool:
    return value is None or isinstance(value, str)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _dict(value: object) -> bool:
    return isinstance(value, dict)


def _list(value: object) -> bool:
    return isinstance(value, list)


def _flag(value: object) -> bool:
    return isinstance(value, bool)


class _Record:
    """A JSON object file as attributes: ``_FIELDS`` maps each key to (check, default)."""

    __slots__ = ("extra",)
    _FIELDS: dict = {}  # noqa: RUF012 - per class, read only
    _REQUIRED: tuple = ()

    def __init__(self, **fields: object) -> None:
        self.extra: dict = {}
        for name, (_check, default) in self._FIELDS.items():
            value = fields.pop(name, default)
            setattr(self, name, _fresh(value))
        if fields:
            raise TypeError(f"unknown fields: {sorted(fields)}")

    @classmethod
    def _parse(cls, raw: object) -> Self | None:
        if not isinstance(raw, dict) or any(raw.get(key) is None for key in cls._REQUIRED):
            return None
        record = cls.__new__(cls)
        for name, (check, default) in cls._FIELDS.items():
            value = raw.get(name)
            if value is None:
                value = default
            elif not check(value):
                return None  # a wrong type: not ours, or damaged
            setattr(record, name, _fresh(value))
        record.extra = {k: v for k, v in raw.items() if k not in cls._FIELDS}
        return record if record._valid() else None

    def _valid(self) -> bool:
        return True

    def to_dict(self) -> dict:
        """The JSON object written to disk: known fields that are set, then the unknown keys."""
        out = dict(self.extra)
        for name in self._FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.to_dict() == self.to_dict()

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a dict: equal by value, mutable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"


def _fresh(value: object) -> object:
    """Defaults that are containers are copied, so records never share one."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


class Request(_Record):
    """A prompt waiting on Discord (``prompts/<id>.json``): written by the PermissionRequest
    hook, read by the bot to render and check a click, and by later hook events."""

    __slots__ = (
        "agent_id",
        "channel_id",
        "created",
        "deadline",
        "id",
        "kind",
        "message_id",
        "on_timeout",
        "permission_suggestions",
        "pid",
        "project",
        "reason",
        "session_id",
        "timeout",
        "tool_input",
        "tool_name",
        "transcript_offset",
        "transcript_path",
    )
    _FIELDS = {  # noqa: RUF012
        "id": (_text, None),
        "kind": (_text, "permission"),
        "session_id": (_optional_text, None),
        "agent_id": (_optional_text, None),  # a background subagent's dialog (None: main thread)
        "channel_id": (_optional_text, None),
        "project": (_optional_text, None),
        "tool_name": (_optional_text, None),
        # The tool call's input; an elicitation's request (mcp_server_name, message, mode,
        # url, elicitation_id, requested_schema: bridge/handlers/elicitation.py)
        "tool_input": (_dict, {}),
        "permission_suggestions": (_list, []),
        "reason": (_optional_text, None),  # why auto mode refused the call (denied)
        "transcript_path": (_optional_text, None),
        # Where an interrupt would be written from now on: taken before the prompt is posted,
        # so an Esc right after it appears (while the hook still starts its wait) is not missed.
        "transcript_offset": (_integer, None),
        "created": (_number, 0.0),
        "deadline": (_number, 0.0),
        "timeout": (_number, 900.0),
        "on_timeout": (_optional_text, None),
        "pid": (_integer, 0),
        "message_id": (_optional_text, None),
    }
    _REQUIRED = ("id",)

    @classmethod
    def from_dict(cls, raw: object) -> Request | None:
        """The request in a decoded file, or None if it is not a valid one."""
        return cls._parse(raw)

    # the attributes (set from _FIELDS by __init__ / from_dict)
    id: str
    kind: str
    session_id: str | None
    agent_id: str | None
    channel_id: str | None
    project: str | None
    tool_name: str | None
    tool_input: dict
    permission_suggestions: list
    reason: str | None
    transcript_path: str | None
    transcript_offset: int | None
    created: float
    deadline: float
    timeout: float
    on_timeout: str | None
    pid: int
    message_id: str | None

    def _valid(self) -> bool:
        return is_valid_id(self.id) and self.kind in KINDS


class Decision(_Record):
    """What ended a prompt (``prompts/<id>.decision``): the user's choice on Discord, the
    terminal answering first, or the timeout. ``cli_answer`` in bridge/handlers/permission.py
    turns it into what Claude Code reads."""

    __slots__ = (
        "answers",
        "by",
        "by_name",
        "content",
        "event",
        "left_to_terminal",
        "message",
        "mode",
        "outcome",
        "scope",
        "suggestion",
    )
    _FIELDS = {  # noqa: RUF012
        "outcome": (_text, None),
        "by": (_optional_text, None),  # the Discord user id of whoever clicked
        "by_name": (_optional_text, None),
        "suggestion": (_integer, None),  # ALWAYS_ALLOWED: which permission suggestion
        "scope": (_optional_text, None),  # ALWAYS_ALLOWED: where the rule goes (s, l, p, u)
        # DENIED, TOLD_INSTEAD, KEEP_PLANNING, PLAN_APPROVED (its notes): Claude reads it
        "message": (_optional_text, None),
        "answers": (_dict, None),  # question text → answer
        "content": (_dict, None),  # ACCEPTED: the form's answer, checked against its schema
        "mode": (_optional_text, None),  # a plan's approval: the permission mode to switch to
        "event": (_optional_text, None),  # answered elsewhere: which event showed it
        "left_to_terminal": (_flag, None),  # a timeout that leaves the dialog to the terminal
    }
    _REQUIRED = ("outcome",)

    @classmethod
    def from_dict(cls, raw: object) -> Decision | None:
        """The decision in a decoded file, or None if it is not a valid one."""
        return cls._parse(raw)

    # the attributes (set from _FIELDS by __init__ / from_dict)
    outcome: str
    by: str | None
    by_name: str | None
    suggestion: int | None
    scope: str | None
    message: str | None
    answers: dict | None
    content: dict | None
    mode: str | None
    event: str | None
    left_to_terminal: bool | None

    def _valid(self) -> bool:
        return isinstance(self.outcome, str)


def new_id() -> str:
    """A request id: 12 lowercase base-36 characters, safe in a file name and a custom_id."""
    number = int.from_bytes(os.urandom(8), "big")
    chars = []
    for _ in range(ID_LENGTH):
        number, digit = divmod(number, 36)
        chars.append("0123456789abcdefghijklmnopqrstuvwxyz"[digit])
    return "".join(chars)


def is_valid_id(value: str) -> bool:
    """Ids come back from Discord in custom_ids: check them before building a path."""
    return len(value) == ID_LENGTH and all(c in _ID_CHARS for c in value)


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
