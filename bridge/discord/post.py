"""A message to post, what every message the bridge posts carries, and what Discord's answers mean.

Import-free (``os`` only): hooks build posts on their way out, before deciding how to send them.
Every payload starts from :func:`message_payload`: no mentions unless one is granted
(:func:`allowed`), and a nonce with ``enforce_nonce`` so that a resend returns the original
message instead of posting a second one.

The decisions of posting live here too, made once for both senders (as httpx keeps them in
``BaseClient`` and only the I/O in ``Client`` and ``AsyncClient``): the multipart form of a post
with files (:func:`multipart`), whether a refusal can succeed later (:func:`retryable`,
:func:`refusal`), and what to send instead when Discord refuses a post's files
(:func:`instead_of_refused_files`). The senders only do I/O: ``bridge.discord.rest`` blocking
(hooks, httpx imported when a request is made) and ``bridge.bot.courier`` on the bot's event
loop (discord.py's warm session).
"""

from __future__ import annotations

import os


class DeliveryError(Exception):
    """A request failed. ``retryable`` says whether trying later can succeed."""

    def __init__(
        self, message: str, retryable: bool, status: int | None = None, code: int | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.code = code  # Discord's JSON error code (50013: Missing Permissions), if any


class Post:
    """One message to create: the JSON payload and the files to upload with it. ``footer``:
    what the bot needs to bring a reply's footer in by an edit once the message is posted
    (``bridge.handlers.reply_footer``), kept with the entry when the post is handed over.
    ``speech``: on a reply's last post, the reply's Markdown, which the bot may also send
    as a voice message once the post is made (``bridge.bot.voice.replies``)."""

    __slots__ = ("files", "footer", "payload", "speech")

    def __init__(self, payload: dict, files: list[tuple[str, bytes]] | None = None) -> None:
        self.payload = payload
        self.files = files or []
        self.footer: dict | None = None
        self.speech: str | None = None

    def __repr__(self) -> str:
        return f"<Post {len(self.payload.get('content') or '')} chars, {len(self.files)} files>"


def new_nonce() -> str:
    """A nonce for ``enforce_nonce``: Discord returns the original message for a resend."""
    return os.urandom(10).hex()  # 20 characters; Discord allows 25


NO_MENTIONS: dict[str, list[str]] = {
    "parse": []
}  # model output must never ping @everyone, roles or users


def mention(user_id: str) -> str:
    """Discord's mention syntax for a user."""
    return f"<@{user_id}>"


def allowed(owner_mention: str) -> dict:
    """allowed_mentions that let exactly that mention ping (nothing else in the text can)."""
    if not owner_mention:
        return dict(NO_MENTIONS)
    return {"parse": [], "users": [owner_mention.strip("<@>")]}


def message_payload(content: str) -> dict:
    """A new message's payload: ``content``, no mentions, a fresh nonce Discord enforces."""
    payload = {"allowed_mentions": NO_MENTIONS, "nonce": new_nonce(), "enforce_nonce": True}
    if content:
        payload["content"] = content
    return payload


# --- multipart ----------------------------------------------------------------------------


def multipart(post: Post) -> tuple[str, list[tuple[str, str, bytes]]]:
    """The form of a post with files: its ``payload_json`` (the payload with an
    ``attachments`` entry per file) and each file's (field name, file name, data)."""
    import json  # only a post with files gets here, never a hook's fast path

    payload = dict(post.payload)
    given = {str(a.get("id")): a for a in payload.get("attachments") or []}  # e.g. a voice
    payload["attachments"] = [  # message's duration_secs and waveform are kept
        {**given.get(str(i), {}), "id": i, "filename": n} for i, (n, _) in enumerate(post.files)
    ]
    parts = [(f"files[{i}]", name, data) for i, (name, data) in enumerate(post.files)]
    return json.dumps(payload), parts


# --- Discord's answers ----------------------------------------------------------------------


def retryable(status: int) -> bool:
    """Whether the request Discord answered ``status`` (its last answer, after whatever
    retrying the sender does) can succeed later, so its message waits in the outbox.

    429 (rate limited) and 5xx (Discord's trouble) pass; so does 401, a rejected token: the
    message must not be lost, it waits until the config is fixed (or the entry grows too old).
    Anything else (403 Missing Permissions / Access, 404, 400 …) will not change by sending the
    same request again: the caller decides what to send instead, or sets it aside.
    """
    return status in (401, 429) or status >= 500


def refusal(status: int, text: str = "", code: int | None = None) -> DeliveryError:
    """The error for Discord's final answer ``status`` (``text``: its body; ``code``: the JSON
    error code in it, 50013 Missing Permissions …)."""
    if status == 401:
        why = "Discord refused the bot's token (401): check the token"
    elif retryable(status):
        why = f"Discord answered {status}: {text[:300]}"
    else:
        why = f"Discord refused the request: {status} {text[:300]}"
    return DeliveryError(why, retryable(status), status, code or None)


def unreachable(err: BaseException) -> DeliveryError:
    """No answer at all (refused connection, timeout …): worth trying later."""
    return DeliveryError(f"cannot reach Discord ({type(err).__name__})", retryable=True)


# --- refused files ------------------------------------------------------------------------


def instead_of_refused_files(post: Post, err: DeliveryError) -> list[Post]:
    """What to send when Discord refused ``post`` with ``err``: when it refused its files for
    good (too large for this server, no Attach Files permission …), the text alone (same
    nonce: a resend returns it) and a note saying what was not attached, rather than lose
    both. Empty when nothing else should be sent: the caller raises ``err``.

    The sender returns the first of these messages it made (the text, or the note)."""
    if err.retryable or not post.files:
        return []
    text = [Post(post.payload)] if post.payload.get("content") else []
    return [*text, Post(message_payload(refused_files_note(post, err)))]


def refused_files_note(post: Post, err: DeliveryError) -> str:
    """What the channel is told when Discord refused a message's files."""
    names = ", ".join(f"`{name}`" for name, _ in post.files)[:1500]
    status, code = err.status, err.code
    if status == 403:
        why = "the bot lacks the **Attach Files** permission in this channel"
        return f"⚠️ Not attached: {names} ({why}; {status}/{code or '?'})"
    return f"⚠️ Discord refused the attached files {names} ({status or 'error'})"
