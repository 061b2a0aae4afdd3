"""EmulatorClient: a synchronous httpx client for the control API, for test code."""

from __future__ import annotations

import base64
from typing import Any

import httpx

IS_VOICE_MESSAGE = 1 << 13  # message flag

DEFAULT_ROUTE = "POST /channels/{channel_id}/messages"


class EmulatorClient:
    """Steers and inspects an Emulator from test code (any thread but the server's)."""

    def __init__(self, control_url: str, token: str | None = None) -> None:
        """``token``: the emulator's control token, when it was started with one."""
        self.control_url = control_url
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=control_url, timeout=30.0, headers=headers)
        self._ids: dict[str, str] | None = None

    def close(self) -> None:
        self._http.close()

    # ----- plumbing ----------------------------------------------------------------------

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        resp = self._http.request(method, path, **kwargs)
        if resp.status_code == 408:
            body = resp.json()
            recent = "\n  ".join(str(r) for r in body.get("recent", [])) or "(none)"
            raise TimeoutError(f"{body['error']}; records since then:\n  {recent}")
        if resp.status_code >= 400:
            raise RuntimeError(f"control API {method} {path} -> {resp.status_code}: {resp.text}")
        return resp.json()

    def _post(self, path: str, body: dict[str, Any], timeout: float | None = None) -> Any:
        extra = {"timeout": timeout + 10.0} if timeout is not None else {}
        return self._call("POST", path, json=body, **extra)

    @property
    def ids(self) -> dict[str, str]:
        if self._ids is None:
            self._ids = self._call("GET", "/_test/info")["ids"]
        return self._ids

    # ----- records -----------------------------------------------------------------------

    def mark(self) -> int:
        return int(self._call("GET", "/_test/mark")["seq"])

    def wait(
        self,
        since: int,
        kind: str | None = "message_create",
        timeout: float = 5.0,
        **filters: Any,
    ) -> dict[str, Any]:
        """First record after `since` of `kind` matching all filters. `since` has no default:
        take it (:meth:`mark`) before the action whose record is awaited, or 0 for a record
        an id names alone; a wait "from now" misses a record that landed before it (the bot
        answers in milliseconds), and then waits its whole timeout."""
        body = {"since": since, "kind": kind, "timeout": timeout, "filters": filters}
        return self._post("/_test/wait", body, timeout)

    def records(self, since: int | None = None, kind: str | None = None) -> list[dict[str, Any]]:
        params = {k: v for k, v in (("since", since), ("kind", kind)) if v is not None}
        return self._call("GET", "/_test/records", params=params)

    def channels(self) -> list[dict[str, Any]]:
        """The guild's channels and categories as they are now (created or deleted by the bot
        included; no threads)."""
        return self._call("GET", "/_test/channels")

    def messages(self, channel_id: str) -> list[dict[str, Any]]:
        return self._call("GET", f"/_test/channels/{channel_id}/messages")

    def file_bytes(self, url_or_attachment: str | dict[str, Any]) -> bytes:
        url = url_or_attachment if isinstance(url_or_attachment, str) else url_or_attachment["url"]
        path = "/attachments/" + url.split("/attachments/", 1)[1]
        resp = self._http.get(path)
        resp.raise_for_status()
        return resp.content

    def reactions(self, channel_id: str, message_id: str) -> list[str]:
        """The emojis the bots reacted with on the message."""
        return self._call("GET", f"/_test/reactions/{message_id}")

    def reaction_users(self, channel_id: str, message_id: str) -> dict[str, list[str]]:
        """Every emoji on the message, with the ids of the users who reacted with it."""
        return self._call("GET", f"/_test/reactions/{message_id}/users")

    def commands(self, application_id: str | None = None) -> dict[str, list[dict[str, Any]]]:
        """One application's registered commands by scope (default: the first bot's)."""
        query = f"?application_id={application_id}" if application_id else ""
        return self._call("GET", "/_test/commands" + query)

    # ----- counters and failures ---------------------------------------------------------

    def counters(self) -> dict[str, int]:
        return self._call("GET", "/_test/counters")

    def reset_counters(self) -> None:
        self._call("DELETE", "/_test/counters")

    def contract(self) -> dict[str, Any]:
        """Bodies validated against Discord's OpenAPI spec, and refused: ``{"validated": n,
        "invalid": n, "operations": {"POST /channels/{}/messages": {...}}}``."""
        return self._call("GET", "/_test/contract")

    def force_429(
        self,
        route: str = DEFAULT_ROUTE,
        count: int = 1,
        retry_after: float = 0.5,
        global_: bool = False,
    ) -> None:
        self._post(
            "/_test/force_429",
            {"route": route, "count": count, "retry_after": retry_after, "global": global_},
        )

    def clear_429(self) -> None:
        self._post("/_test/force_429", {"clear": True})

    def set_bucket(self, route: str, limit: int, window: float) -> None:
        self._post("/_test/buckets", {"route": route, "limit": limit, "window": window})

    def clear_buckets(self) -> None:
        self._post("/_test/buckets", {"clear": True})

    def set_outage(self, mode: str | None) -> None:
        """'503', 'refuse' (main port stops accepting connections) or None to recover."""
        self._post("/_test/outage", {"mode": mode})

    def settings(self, **values: Any) -> None:
        """max_file_size, interaction_deadline, privileged_intents, rate_limits,
        audit_log_access (False: the bot lacks View Audit Log), manage_channels (False: it
        lacks Manage Channels: creating or deleting a channel gets 403 / 50013); reset grants
        both again."""
        self._post("/_test/settings", values)

    def deny_attach_files(self, channel_id: str, deny: bool = True) -> None:
        """Posts with files to that channel (or its threads) get 403 Missing Permissions."""
        self._post("/_test/attach_files", {"channel_id": channel_id, "deny": deny})

    def set_roles(self, user: str, roles: list[str]) -> None:
        """Give ``user`` (a name or id) these guild roles (``drivers``, ``approvers``,
        ``watchers`` or role ids): their messages, clicks and reactions carry them."""
        self._post("/_test/member_roles", {"user": user, "roles": roles})

    def reset(self) -> None:
        self._post("/_test/reset", {})

    # ----- gateway -----------------------------------------------------------------------

    def gateway_reconnect(self) -> int:
        return self._post("/_test/gateway", {"action": "reconnect"})["sessions"]

    def gateway_invalidate(self) -> int:
        return self._post("/_test/gateway", {"action": "invalidate"})["sessions"]

    def gateway_close(self, code: int = 4000) -> int:
        return self._post("/_test/gateway", {"action": "close", "code": code})["sessions"]

    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        self._post("/_test/gateway", {"action": "dispatch", "t": event, "d": data})

    # ----- user actions ------------------------------------------------------------------

    def post_message(
        self,
        channel_id: str,
        content: str,
        user: str = "alice",
        attachments: list[tuple[str, bytes]] | list[tuple[str, bytes, dict]] | None = None,
        bot: bool = False,
        reply_to: str | None = None,
        flags: int = 0,
        age_seconds: float = 0,
        message_type: int = 0,
        webhook_id: str | None = None,
    ) -> dict[str, Any]:
        """``attachments``: ``(filename, data)`` or ``(filename, data, extra)``, ``extra``
        holding ``content_type``, ``duration_secs``, ``waveform`` (a voice message's).
        ``age_seconds``: its ``timestamp`` says it was sent that long ago. ``message_type``
        (e.g. 18, "started a thread") and ``webhook_id``: a system or webhook message."""
        files = [
            {
                **(extra[0] if extra else {}),
                "filename": name,
                "data": base64.b64encode(data).decode(),
            }
            for name, data, *extra in attachments or []
        ]
        return self._post(
            "/_test/messages",
            {
                "channel_id": channel_id,
                "content": content,
                "user": user,
                "attachments": files,
                "bot": bot,
                "reply_to": reply_to,
                "flags": flags,
                "age_seconds": age_seconds,
                "type": message_type,
                "webhook_id": webhook_id,
            },
        )

    def edit_user_message(self, channel_id: str, message_id: str, content: str) -> dict[str, Any]:
        """The author edits their message (MESSAGE_UPDATE)."""
        return self._call(
            "PATCH", f"/_test/messages/{channel_id}/{message_id}", json={"content": content}
        )

    def delete_user_message(self, channel_id: str, message_id: str) -> None:
        """The author deletes their message (MESSAGE_DELETE)."""
        self._call("DELETE", f"/_test/messages/{channel_id}/{message_id}")

    def post_voice_message(
        self, channel_id: str, ogg_opus: bytes, duration_secs: float, user: str = "alice"
    ) -> dict[str, Any]:
        """A voice message as Discord's clients send one: no text, flags IS_VOICE_MESSAGE,
        one ``voice-message.ogg`` (audio/ogg, Opus) with its duration and a waveform."""
        extra = {
            "content_type": "audio/ogg",
            "duration_secs": duration_secs,
            "waveform": base64.b64encode(bytes(range(0, 256, 4))).decode(),
        }
        return self.post_message(
            channel_id,
            "",
            user=user,
            attachments=[("voice-message.ogg", ogg_opus, extra)],
            flags=IS_VOICE_MESSAGE,
        )

    def react(
        self,
        channel_id: str,
        message_id: str,
        emoji: str,
        user: str = "alice",
        remove: bool = False,
    ) -> bool:
        """``user`` adds (or removes) a reaction, as from a Discord client; False when that
        changed nothing (nothing is dispatched then, as on Discord)."""
        body = {
            "channel_id": channel_id,
            "message_id": message_id,
            "emoji": emoji,
            "user": user,
            "remove": remove,
        }
        return bool(self._post("/_test/react", body).get("changed"))

    def create_channel(self, name: str) -> dict[str, Any]:
        """A new text channel in the guild (it survives :meth:`reset`)."""
        return self._post("/_test/channels", {"name": name})

    def create_thread(self, channel_id: str, name: str, user: str = "alice") -> dict[str, Any]:
        return self._post("/_test/threads", {"channel_id": channel_id, "name": name, "user": user})

    def archive_thread(
        self, thread_id: str, locked: bool = False, user: str | None = "alice"
    ) -> dict[str, Any]:
        """Archive as ``user`` (logged in the audit log), or with ``user=None`` as Discord's
        inactivity auto-archive (logged nowhere)."""
        return self._post(f"/_test/threads/{thread_id}/archive", {"locked": locked, "user": user})

    def delete_thread(self, thread_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/_test/threads/{thread_id}")

    # ----- interactions ------------------------------------------------------------------

    def click(
        self, message_id: str, custom_id: str, user: str = "alice", timeout: float = 5.0
    ) -> dict[str, Any]:
        """Press a button; returns the bot's answer once its callback arrived (or expired)."""
        return self._post(
            "/_test/click",
            {"message_id": message_id, "custom_id": custom_id, "user": user, "timeout": timeout},
            timeout,
        )

    def select(
        self,
        message_id: str,
        custom_id: str,
        values: list[str],
        user: str = "alice",
        timeout: float = 5.0,
        crafted: bool = False,
    ) -> dict[str, Any]:
        """Pick ``values`` in a message's select. Only what the select shows can be picked
        (its options now: a paged select shows one page), as many as it allows; ``crafted``
        sends anything, as a crafted client could."""
        return self._post(
            "/_test/select",
            {
                "message_id": message_id,
                "custom_id": custom_id,
                "values": values,
                "user": user,
                "timeout": timeout,
                "crafted": crafted,
            },
            timeout,
        )

    def submit_modal(
        self,
        interaction_result_or_custom_id: dict[str, Any] | str,
        values: dict[str, Any],
        user: str = "alice",
        timeout: float = 5.0,
    ) -> dict[str, Any]:
        """Submit a modal the bot opened; pass the click/command result or the modal custom_id."""
        ref = interaction_result_or_custom_id
        if isinstance(ref, dict):
            body = {
                "custom_id": (ref.get("modal") or {}).get("custom_id"),
                "interaction_id": ref.get("interaction_id"),
            }
        else:
            body = {"custom_id": ref}
        body.update(values=values, user=user, timeout=timeout)
        return self._post("/_test/modal", body, timeout)

    def submit_crafted_modal(
        self,
        message_id: str,
        custom_id: str,
        values: dict[str, Any],
        user: str = "alice",
        timeout: float = 5.0,
    ) -> dict[str, Any]:
        """Send a modal submit the bot never opened (any ``custom_id``, on ``message_id``), as
        a crafted client could; ``click``/``select`` already take any ``custom_id``."""
        body = {
            "crafted": True,
            "message_id": message_id,
            "custom_id": custom_id,
            "values": values,
            "user": user,
            "timeout": timeout,
        }
        return self._post("/_test/modal", body, timeout)

    def run_command(
        self,
        channel_id: str,
        name: str,
        options: dict[str, Any] | None = None,
        user: str = "alice",
        timeout: float = 5.0,
        application_id: str | None = None,
    ) -> dict[str, Any]:
        """Use a slash command. With two bots in the guild, ``application_id`` (an id, or a
        seeded name such as ``"second_bot_id"``) picks whose command, as a user picks one
        bot's command in Discord's picker; without it the first bot's is used if it has one."""
        extra = {"application_id": application_id} if application_id else {}
        return self._command(channel_id, name, options, user, timeout, **extra)

    def autocomplete(
        self,
        channel_id: str,
        name: str,
        options: dict[str, Any],
        focused: str,
        user: str = "alice",
        timeout: float = 5.0,
    ) -> dict[str, Any]:
        return self._command(channel_id, name, options, user, timeout, autocomplete=focused)

    def _command(
        self,
        channel_id: str,
        name: str,
        options: dict[str, Any] | None,
        user: str,
        timeout: float,
        **extra: str,
    ) -> dict[str, Any]:
        body = {"channel_id": channel_id, "name": name, "options": options, "user": user}
        return self._post("/_test/command", {**body, **extra, "timeout": timeout}, timeout)
