"""The emulator holds every request body to Discord's published OpenAPI spec
(packages/discord-emulator/discord_emulator/contract.py): what the spec forbids is answered as
Discord answers it (400, code 50035 "Invalid Form Body", ``errors`` naming the field), over
real HTTP, for JSON and multipart bodies, interaction callbacks, webhooks and channels.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from discord_emulator import Emulator, contract
from discord_emulator import interactions as itx
from discord_emulator.responses import route_key_of

pytestmark = pytest.mark.timeout(30)


def _rest(emu: Emulator) -> httpx.Client:
    headers = {"Authorization": f"Bot {emu.bot_token}"}
    return httpx.Client(base_url=emu.api_base, headers=headers, timeout=5)


def _errors(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 400, resp.text
    body = resp.json()
    assert body["code"] == 50035 and body["message"] == "Invalid Form Body", body
    return body["errors"]


def _codes(errors: dict[str, Any], *path: str) -> list[str]:
    node = errors
    for part in path:
        node = node[part]
    return [e["code"] for e in node["_errors"]]


def test_a_message_the_spec_forbids_is_refused_naming_each_field(emu: Emulator) -> None:
    channel = emu.ids["general"]
    body = {
        "content": 5,
        "allowed_mentions": {"parse": [], "users": ["not-a-snowflake"]},
        "components": [
            {"type": 1, "components": [{"type": 2, "style": 9, "custom_id": "a"}, {"type": 77}]},
            {"components": []},
        ],
    }
    with _rest(emu) as rest:
        errors = _errors(rest.post(f"/channels/{channel}/messages", json=body))
    assert _codes(errors, "content") == ["STRING_TYPE_CONVERT"]
    assert _codes(errors, "allowed_mentions", "users", "0") == ["NUMBER_TYPE_COERCE"]
    button, unknown = errors["components"]["0"]["components"]["0"], errors["components"]["0"]
    assert _codes(button, "style") == ["BASE_TYPE_CHOICES"]
    assert _codes(unknown, "components", "1", "type") == ["UNION_TYPE_CHOICES"]
    assert _codes(errors, "components", "1") == ["UNION_TYPE_MISSING"]
    assert emu.client.messages(channel) == []  # nothing was posted


def test_multipart_payload_json_is_held_to_the_spec_too(emu: Emulator) -> None:
    payload = {"content": "f", "attachments": [{"id": 0, "filename": "a.txt", "description": 3}]}
    with _rest(emu) as rest:
        resp = rest.post(
            f"/channels/{emu.ids['general']}/messages",
            data={"payload_json": json.dumps(payload)},
            files={"files[0]": ("a.txt", b"x")},
        )
    assert _codes(_errors(resp), "attachments", "0", "description") == ["STRING_TYPE_CONVERT"]


def test_snowflakes_sent_as_integers_are_taken_as_discord_takes_them(emu: Emulator) -> None:
    """The one relaxation (contract.RELAXATIONS): discord.py sends attachment ids, a reply's
    message_reference and allowed_mentions users as JSON integers, and Discord takes them."""
    channel = emu.ids["general"]
    with _rest(emu) as rest:
        first = rest.post(f"/channels/{channel}/messages", json={"content": "a"}).json()
        reply = {
            "content": "b",
            "message_reference": {"message_id": int(first["id"]), "channel_id": int(channel)},
            "allowed_mentions": {"parse": [], "users": [int(emu.ids["alice"])]},
        }
        assert rest.post(f"/channels/{channel}/messages", json=reply).status_code == 200
        payload = {"content": "f", "attachments": [{"id": 0, "filename": "a.txt"}]}
        upload = rest.post(
            f"/channels/{channel}/messages",
            data={"payload_json": json.dumps(payload)},
            files={"files[0]": ("a.txt", b"x")},
        )
        assert upload.status_code == 200, upload.text
        negative = {"content": "c", "message_reference": {"message_id": -1}}
        refused = rest.post(f"/channels/{channel}/messages", json=negative)
    assert _codes(_errors(refused), "message_reference", "message_id") == ["NUMBER_TYPE_MIN"]


def test_channels_threads_and_commands_are_held_to_the_spec(emu: Emulator) -> None:
    guild, channel = emu.ids["guild_id"], emu.ids["general"]
    with _rest(emu) as rest:
        made = rest.post(f"/guilds/{guild}/channels", json={"name": ["x"], "topic": 1})
        errors = _errors(made)
        assert _codes(errors, "name") == ["STRING_TYPE_CONVERT"]
        assert _codes(errors, "topic") == ["STRING_TYPE_CONVERT"]
        thread = rest.post(f"/channels/{channel}/threads", json={"type": 11})
        assert _codes(_errors(thread), "name") == ["BASE_TYPE_REQUIRED"]
        app = f"/applications/{emu.ids['bot_id']}/guilds/{guild}/commands"
        commands = rest.put(app, json=[{"name": "x", "description": "d", "type": "CHAT_INPUT"}])
    assert _codes(_errors(commands), "0", "type") == ["NUMBER_TYPE_COERCE"]  # not int


def test_interaction_callbacks_and_followups_are_held_to_the_spec(emu: Emulator) -> None:
    st = emu.state
    posted = emu.client.post_message(emu.ids["general"], "click me", bot=True)

    def click() -> tuple[str, str]:
        user, channel = st.user("alice"), st.channels[emu.ids["general"]]
        ist = itx.create_interaction(st, itx.COMPONENT, user, channel, {"custom_id": "x"}, posted)
        return ist.id, ist.token

    iid, token = emu.call(click)
    url = f"{emu.api_base}/interactions/{iid}/{token}/callback"
    bad = httpx.post(url, json={"type": 4, "data": {"content": "x" * 2001}}, timeout=5)
    assert _codes(_errors(bad), "data", "content") == ["BASE_TYPE_MAX_LENGTH"]
    unknown = httpx.post(url, json={"type": 3}, timeout=5)
    assert _codes(_errors(unknown), "type") == ["UNION_TYPE_CHOICES"]
    assert httpx.post(url, json={"type": 6}, timeout=5).status_code == 204
    hook = f"{emu.api_base}/webhooks/{st.ids['bot_id']}/{token}"
    followup = httpx.post(hook, json={"content": "ok", "flags": "ephemeral"}, timeout=5)
    assert _codes(_errors(followup), "flags") == ["NUMBER_TYPE_COERCE"]
    sent = httpx.post(hook, params={"wait": "true"}, json={"content": "ok"}, timeout=5).json()
    edit = httpx.patch(f"{hook}/messages/{sent['id']}", json={"embeds": {"title": "t"}}, timeout=5)
    assert _codes(_errors(edit), "embeds") == ["LIST_TYPE_CONVERT"]


def test_the_emulator_counts_the_bodies_it_validated_and_refused(emu: Emulator) -> None:
    before = emu.client.contract()
    with _rest(emu) as rest:
        url = f"/channels/{emu.ids['general']}/messages"
        assert rest.post(url, json={"content": "fine"}).status_code == 200
        assert rest.post(url, json={"content": None, "tts": "yes"}).status_code == 400
    after = emu.client.contract()
    assert after["validated"] - before["validated"] == 2
    assert after["invalid"] - before["invalid"] == 1
    op = after["operations"]["POST /channels/{}/messages"]
    assert op["invalid"] >= 1 and contract.PROCESS_STATS.summary()["validated"] >= 2


def test_every_route_that_takes_a_body_has_an_operation_in_the_spec(emu: Emulator) -> None:
    """A REST route the emulator adds later cannot skip the contract unnoticed: each one that
    reads a body maps to an operation of the spec with a JSON request body."""
    bodiless = {  # Discord's own routes without a body
        "POST /channels/{channel_id}/typing",
        "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
        "PUT /channels/{channel_id}/thread-members/@me",
    }
    app = emu._runner.app  # type: ignore[union-attr]
    checked = []
    for route in app.router.routes():
        if route.method not in ("POST", "PUT", "PATCH") or not route.resource:
            continue
        path = route.resource.canonical
        if not path.startswith("/api/"):
            continue
        key = route_key_of(route.method, path)
        if key in bodiless:
            continue
        assert contract.has_schema(key), f"{key}: no request body in Discord's OpenAPI spec"
        checked.append(key)
    assert len(checked) >= 12, checked
