"""A reply's footer line (``-# Opus 5.5 · ctx 12% · $0.43``), and how it comes in after the reply.

Two sources: what the statusLine command cached for the session (``state/status_cache``;
the CLI refreshes it after an API response, often only after the Stop hook ran, so a
session's first reply finds no context figure there), and the transcript's record of the
reply (model and the tokens the last request sent), which the CLI writes around the Stop
hook's start: up to ~0.2 s after it on the loaded 2-core machine (``bench/reply_latency.py``).
Codex has no statusLine: its record is its rollout's last ``token_count`` (``codex/rollout.py``),
and its footer says no cost.

Waiting for that record held every reply back (≈ 44 ms, and 3 s when it never came). Now the
Stop hook posts at once with the footer it can tell then (the cache, and the record if it is
already there), and when the record was not there yet and the bot takes the reply, the bot
brings the footer in by an edit of that message once the record lands
(``bot/delivery/reply_footer``), at most :data:`FOOTER_WAIT` later, from the cache alone if it never
does. An edit notifies no one: the owner's mention rides on the posted message and pings once. The
reply is laid out with room for the longest footer the edit could bring (:func:`longest_line`), so
the edit always fits in the message. Without a bot to edit later, or with no line to edit (no
footer known yet and no mention), the hook waits for the record as before.

Imported by the Stop hook (only with the footer on) and by the bot: ``os`` and small bridge
modules only.
"""

from __future__ import annotations

import os

from bridge.claude.transcript import last_usage
from bridge.codex import rollout
from bridge.discord.render.footer import footer_line
from bridge.state import runtime
from bridge.state.status_cache import is_safe_session_id, read_status, status_path

FOOTER_WAIT = 3.0  # seconds to wait for this reply's record in the transcript
DEFAULT_CONTEXT_WINDOW = 200_000  # tokens, when no statusLine ever said (it says per model)
REPLY_TAIL = 4096  # characters of the reply the bot matches the record against
LONGEST_NAME = "W" * 60  # a model name as long as the footer shows one
ROOM_MARGIN = 16  # characters more: a cost or a rate limit may gain a digit meanwhile
BELL = "🔔"


def reply_footer(
    rt: runtime.Runtime,
    session_id: object,
    transcript_path: object = None,
    reply: str = "",
    wait: float = FOOTER_WAIT,
) -> str:
    """The footer, once this reply's record is in the transcript or ``wait`` seconds passed:
    ``-# Opus 5.5 · ctx 12% · $0.43``, empty when no source says how full the context is."""
    return current_footer(rt, session_id, transcript_path, reply, wait)[0]


def current_footer(
    rt: runtime.Runtime,
    session_id: object,
    transcript_path: object = None,
    reply: str = "",
    wait: float = 0.0,
) -> tuple[str, bool]:
    """The footer from what is known now (after waiting up to ``wait`` seconds for the
    record), and whether the transcript holds this reply's record (the footer is final then).

    The statusLine cache gives cost and rate limits; model and context come from the record
    when the cache is older than it. A cache from before the session's first API response has
    no cost worth showing ($0.00): it is left out then.
    """
    record = read_status(rt, session_id) or {}
    usage = _this_turns_usage(transcript_path, reply, wait)
    if usage is not None:
        try:
            cached_at = os.stat(status_path(rt, str(session_id))).st_mtime if record else None
        except OSError:
            cached_at = None
        stale = cached_at is None or (usage["at"] is not None and cached_at < usage["at"])
        if stale or record.get("context_percent") is None:
            record = _from_usage(record, usage)
    if record.get("context_percent") is None:
        return "", usage is not None
    return footer_line(record), usage is not None


def longest_line(rt: runtime.Runtime, session_id: object, mention: str) -> str:
    """A footer line as long as the edit could make it: the cache's figures with the longest
    model name and context figure, the mention, and a margin. The reply is laid out with this
    line in place of its own, so that the edit always fits in the message."""
    record = read_status(rt, session_id) or {}
    worst = footer_line({**record, "model_name": LONGEST_NAME, "context_percent": 100.0})
    return ending_line(worst, mention) + "W" * ROOM_MARGIN


def ending_line(footer: str, mention: str) -> str:
    """The reply's last line: the footer, with the owner's mention at its end."""
    if not mention:
        return footer
    return f"{footer} · {BELL} {mention}" if footer else f"-# {BELL} {mention}"


# --- the footer brought in later ------------------------------------------------------------


def pending(event: dict, reply: str, line: str, mention: str) -> dict | None:
    """What the bot needs to bring this reply's footer in when its record lands: None when it
    cannot (no line posted to replace, or ids that are not the CLI's)."""
    session_id, transcript = event.get("session_id"), event.get("transcript_path")
    if not line or not _is_transcript(transcript, session_id):
        return None
    return {
        "session_id": session_id,
        "transcript_path": transcript,
        "reply": reply.rstrip()[-REPLY_TAIL:],
        "line": line,
        "mention": mention,
    }


def read_pending(value: object) -> dict | None:
    """:func:`pending`'s record as an outbox entry carries it, checked (the entry is a file:
    anything not of that shape is ignored)."""
    if not isinstance(value, dict):
        return None
    fields = ("session_id", "transcript_path", "reply", "line", "mention")
    if not all(isinstance(value.get(name), str) for name in fields):
        return None
    if not _is_transcript(value["transcript_path"], value["session_id"]):
        return None
    if not value["line"] or len(value["reply"]) > REPLY_TAIL or len(value["mention"]) > 40:
        return None
    return value


def record_landed(spec: dict) -> bool:
    """Whether the transcript holds the record of the reply ``spec`` is about."""
    return _this_turns_usage(spec["transcript_path"], spec["reply"], 0.0) is not None


def edited_content(content: str, spec: dict, footer: str) -> str | None:
    """``content`` (the posted message) with its footer line made of ``footer``; None when
    nothing changes, or the message does not end as it was posted."""
    line = ending_line(footer, spec["mention"])
    if line == spec["line"] or not content.endswith(spec["line"]):
        return None
    return content[: len(content) - len(spec["line"])] + line


# --- the transcript's record ----------------------------------------------------------------


def _is_transcript(path: object, session_id: object) -> bool:
    """An absolute path to the session's transcript, named as the CLI names it
    (``<session_id>.jsonl``): the only file an outbox entry may make the bot read."""
    return (
        is_safe_session_id(session_id)
        and isinstance(path, str)
        and 0 < len(path) < 4096
        and "\0" not in path
        and os.path.isabs(path)
        and os.path.basename(path) == f"{session_id}.jsonl"
    )


def _this_turns_usage(transcript_path: object, reply: str, wait: float) -> dict | None:
    """The transcript's last usage, once it is the record of ``reply`` (or after ``wait``
    seconds: whatever it is then, if it is that record)."""
    import time

    if not isinstance(transcript_path, str) or not transcript_path:
        return None
    expected = reply.rstrip()
    deadline = time.monotonic() + (wait if expected else 0)
    while True:
        usage = (rollout.last_usage if rollout.is_rollout(transcript_path) else last_usage)(
            transcript_path
        )
        text = (usage or {}).get("text", "").rstrip()
        if usage is not None and (not expected or (text and _same_end(expected, text))):
            return usage
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def _same_end(reply: str, text: str) -> bool:
    """The record's ``text`` ends the reply (of which only the end may be known)."""
    if len(text) <= len(reply):
        return reply.endswith(text)
    return len(reply) == REPLY_TAIL and text.endswith(reply)  # only its end is known


def _from_usage(record: dict, usage: dict) -> dict:
    """The cached record with model and context % of the transcript's last usage."""
    updated = dict(record)
    if record.get("context_percent") is None:
        updated.pop("cost_usd", None)  # the cache predates the first response: $0.00
    model = usage["model"]
    if model and model != record.get("model_id"):  # switched (/model) since the cache
        updated["model_id"], updated["model_name"] = model, None
    window = usage.get("context_window") or record.get("context_window_size")  # Codex's, or
    if not isinstance(window, int | float) or isinstance(window, bool) or window <= 0:
        window = DEFAULT_CONTEXT_WINDOW
    updated["context_percent"] = min(100.0, usage["context_tokens"] * 100 / window)
    return updated
