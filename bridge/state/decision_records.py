"""The typed records of the request and decision files: :class:`Request` and :class:`Decision`.

Each is a ``__slots__`` class over a JSON object (not a dataclass: :mod:`bridge.state.decisions`,
which reads and writes them, is on the fast path of every PreToolUse/PostToolUse hook, so this
imports nothing at all). A file of the wrong shape reads as nothing, never as a crash; keys a
record does not know are kept as they are, so an older or newer bridge reading the same file
loses nothing. Its own module: what a valid request and decision are, apart from the files'
exchange (who decides first, which later event closes a prompt); ``decisions`` presents both.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from typing import Self

ID_LENGTH = 12
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
KINDS = ("permission", "question", "plan", "elicitation", "denied")  # what a request asks


# --- the records --------------------------------------------------------------------------


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


def is_valid_id(value: str) -> bool:
    """Ids come back from Discord in custom_ids: check them before building a path."""
    return len(value) == ID_LENGTH and all(c in _ID_CHARS for c in value)
