"""A message to post, and what every message the bridge posts carries.

Import-free (``os`` only): hooks build posts on their way out, before deciding how to send them.
Every payload starts from :func:`message_payload`: no mentions unless one is granted
(:func:`allowed`), and a nonce with ``enforce_nonce`` so that a resend returns the original
message instead of posting a second one.
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
    """One message to create: the JSON payload and the files to upload with it."""

    __slots__ = ("files", "payload")

    def __init__(self, payload: dict, files: list[tuple[str, bytes]] | None = None) -> None:
        self.payload = payload
        self.files = files or []

    def __repr__(self) -> str:
        return f"<Post {len(self.payload.get('content') or '')} chars, {len(self.files)} files>"


def new_nonce() -> str:
    """A nonce for ``enforce_nonce``: Discord returns the original message for a resend."""
    return os.urandom(10).hex()  # 20 characters; Discord allows 25


NO_MENTIONS = {"parse": []}  # model output must never ping @everyone, roles or users


def mention(user_id: str) -> str:
    """Discord's mention syntax for a user."""
    return f"<@{user_id}>"


def allowed(owner_mention: str) -> dict:
    """allowed_mentions that let exactly that mention ping (nothing else in the text can)."""
    if not owner_mention:
        return dict(NO_MENTIONS)
    return {"parse": [], "users": [owner_mention.strip("<@>")]}


def message_payload(content: str) -> dict:
    payload = {"allowed_mentions": NO_MENTIONS, "nonce": new_nonce(), "enforce_nonce": True}
    if content:
        payload["content"] = content
    return payload
