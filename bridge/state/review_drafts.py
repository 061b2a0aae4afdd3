"""Draft reviews: the line comments the owner gathers on a session's diff before sending them.

One private file per session (its channel or thread id) among the bot's records in the state
directory, so a draft survives a bot restart and a reboot: ``state/reviews/<key>.json``::

    {"key": "…", "message_id": "…",                     the draft message in the channel
     "comments": [{"id": "k3x9qa", "path": "app.py", "start": 12, "end": 18,
                   "text": "…", "tree": "<tree id>", "quoted": ["…", …], "by": "…"}, …],
     "unsent": {"path": "app.py", "lines": "120", "text": "…"}}

``tree`` is the snapshot the comment was written against (the diff's new side: the lines the
owner saw), ``quoted`` those lines then; sending compares them with the file as it is
(``bridge/bot/changes/review.py``). ``unsent`` is a comment whose lines were refused, offered again
in the next comment form so its text is not lost.

Read and written as typed records (:class:`Draft`, :class:`Comment`), as
``bridge/state/decisions.py`` does: a file of the wrong shape reads as no draft, never as a
crash, and keys a record does not know are kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from bridge import fastjson
from bridge.state import private_files, runtime

SUBDIR = "reviews"  # in the durable ``state`` folder (its session records skip folders)
MAX_COMMENTS = 50  # a draft holds at most this many (the message lists them, a select removes)
ID_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_LENGTH = 6


def _text(value: object) -> bool:
    return isinstance(value, str)


def _line(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass
class Comment:
    """One comment: on lines ``start``–``end`` of ``path`` in snapshot ``tree``."""

    id: str
    path: str
    start: int
    end: int
    text: str
    tree: str
    quoted: list[str] = field(default_factory=list)
    by: str = ""
    extra: dict = field(default_factory=dict)

    _CHECKS = {  # noqa: RUF012 - a class constant, not a dataclass field
        "id": _text,
        "path": _text,
        "start": _line,
        "end": _line,
        "text": _text,
        "tree": _text,
        "by": _text,
    }

    @classmethod
    def from_dict(cls, raw: object) -> Comment | None:
        if not isinstance(raw, dict):
            return None
        if any(not check(raw.get(name)) for name, check in cls._CHECKS.items() if name != "by"):
            return None
        quoted = raw.get("quoted", [])
        if not isinstance(quoted, list) or not all(isinstance(q, str) for q in quoted):
            return None
        by = raw.get("by", "")
        if not isinstance(by, str) or raw["end"] < raw["start"] or not is_valid_id(raw["id"]):
            return None
        extra = {k: v for k, v in raw.items() if k not in cls._CHECKS and k != "quoted"}
        return cls(
            raw["id"],
            raw["path"],
            raw["start"],
            raw["end"],
            raw["text"],
            raw["tree"],
            list(quoted),
            by,
            extra,
        )

    def to_dict(self) -> dict:
        return {
            **self.extra,
            "id": self.id,
            "path": self.path,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "tree": self.tree,
            "quoted": self.quoted,
            "by": self.by,
        }


@dataclass
class Draft:
    """A session's draft review: its comments in the order written, the message showing it."""

    key: str
    comments: list[Comment] = field(default_factory=list)
    message_id: str | None = None
    unsent: dict | None = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: object) -> Draft | None:
        if not isinstance(raw, dict) or not _is_key(raw.get("key")):
            return None
        message_id, unsent = raw.get("message_id"), raw.get("unsent")
        if message_id is not None and not _is_key(message_id):
            return None
        if unsent is not None and not _is_unsent(unsent):
            return None
        items = raw.get("comments", [])
        if not isinstance(items, list):
            return None
        comments = [Comment.from_dict(item) for item in items]
        if any(c is None for c in comments):
            return None
        known = ("key", "comments", "message_id", "unsent")
        extra = {k: v for k, v in raw.items() if k not in known}
        return cls(raw["key"], comments, message_id, unsent, extra)  # type: ignore[arg-type]

    def to_dict(self) -> dict:
        out = {**self.extra, "key": self.key, "comments": [c.to_dict() for c in self.comments]}
        if self.message_id is not None:
            out["message_id"] = self.message_id
        if self.unsent is not None:
            out["unsent"] = self.unsent
        return out

    def files(self) -> list[str]:
        """The files commented on, in the order first commented."""
        return list(dict.fromkeys(c.path for c in self.comments))


def _is_unsent(value: object) -> bool:
    return isinstance(value, dict) and all(_text(value.get(k)) for k in ("path", "lines", "text"))


def _is_key(value: object) -> bool:
    return isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 21


def is_valid_id(value: str) -> bool:
    return len(value) == ID_LENGTH and all(c in ID_CHARS for c in value)


def new_comment_id(taken: list[Comment]) -> str:
    """A comment id no comment of the draft has (it names the comment in the remove menu)."""
    used = {c.id for c in taken}
    while True:
        number = int.from_bytes(os.urandom(5), "big")
        chars = []
        for _ in range(ID_LENGTH):
            number, digit = divmod(number, len(ID_CHARS))
            chars.append(ID_CHARS[digit])
        found = "".join(chars)
        if found not in used:
            return found


def _path(rt: runtime.Runtime, key: str) -> str:
    if not _is_key(key):
        raise ValueError(f"not a channel id: {key!r}")
    return os.path.join(rt.state, SUBDIR, key + ".json")


def load(rt: runtime.Runtime, key: str) -> Draft | None:
    """The session's draft, or None (none, unreadable, or not a draft of this session)."""
    draft = Draft.from_dict(private_files.read_json(_path(rt, key)))
    return draft if draft is not None and draft.key == key else None


def save(rt: runtime.Runtime, draft: Draft) -> None:
    """Write the draft (atomically, private)."""
    runtime.ensure_private_dir(os.path.join(rt.state, SUBDIR))
    private_files.write_atomic(_path(rt, draft.key), fastjson.dumps(draft.to_dict()).encode())


def delete(rt: runtime.Runtime, key: str) -> None:
    try:
        os.unlink(_path(rt, key))
    except FileNotFoundError:
        pass
