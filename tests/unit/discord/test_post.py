"""The posting core: what both senders (the hooks' blocking REST client and the bot's courier)
send and what Discord's answers mean, decided in one place. Pure: no network here (the two
senders against the emulator: tests/unit/bot/test_courier.py)."""

from __future__ import annotations

import json

import pytest

from bridge.discord.post import (
    DeliveryError,
    Post,
    instead_of_refused_files,
    message_payload,
    multipart,
    refusal,
    retryable,
    unreachable,
)


@pytest.mark.parametrize(
    ("status", "later"),
    [
        (400, False),  # a malformed request stays malformed
        (401, True),  # a rejected token: kept until the config is fixed
        (403, False),  # Missing Permissions / Access: the caller decides what to send instead
        (404, False),  # the channel is gone
        (413, False),  # files too large for this server
        (429, True),  # rate limited
        (500, True),
        (502, True),
        (503, True),
        (504, True),
    ],
)
def test_which_final_answers_are_worth_trying_later(status: int, later: bool) -> None:
    assert retryable(status) is later
    err = refusal(status, "body")
    assert (err.retryable, err.status) == (later, status)


def test_a_refusal_says_what_discord_answered() -> None:
    assert str(refusal(401)) == "Discord refused the bot's token (401): check the token"
    assert str(refusal(503, "upstream")) == "Discord answered 503: upstream"
    denied = refusal(403, '{"code": 50013}' + "x" * 400, 50013)
    assert str(denied).startswith('Discord refused the request: 403 {"code": 50013}x')
    assert len(str(denied)) < 340  # the body is cut
    assert denied.code == 50013
    assert refusal(403, "", 0).code is None  # discord.py's "no code" is 0


def test_no_answer_at_all_is_worth_trying_later() -> None:
    err = unreachable(ConnectionRefusedError())
    assert err.retryable and err.status is None
    assert str(err) == "cannot reach Discord (ConnectionRefusedError)"


def test_multipart_names_each_file_in_the_payload_and_leaves_the_post_alone() -> None:
    post = Post(message_payload("two files"), [("a.txt", b"A"), ("b.png", b"\x89PNG")])
    payload_json, parts = multipart(post)
    payload = json.loads(payload_json)
    assert payload["content"] == "two files" and payload["nonce"] == post.payload["nonce"]
    assert payload["attachments"] == [
        {"id": 0, "filename": "a.txt"},
        {"id": 1, "filename": "b.png"},
    ]
    assert parts == [("files[0]", "a.txt", b"A"), ("files[1]", "b.png", b"\x89PNG")]
    assert "attachments" not in post.payload  # a resend builds the same form again


def test_files_refused_for_lack_of_attach_files_leave_the_text_and_a_note() -> None:
    post = Post(message_payload("chart below"), [("chart.png", b"png")])
    instead = instead_of_refused_files(post, refusal(403, "Missing Permissions", 50013))
    assert [p.payload.get("content") for p in instead] == [
        "chart below",
        "⚠️ Not attached: `chart.png` (the bot lacks the **Attach Files** permission in this"
        " channel; 403/50013)",
    ]
    assert instead[0].payload["nonce"] == post.payload["nonce"]  # a resend returns the text
    assert instead[1].payload["nonce"] != post.payload["nonce"]
    assert [p.files for p in instead] == [[], []]
    assert instead[1].payload["allowed_mentions"] == {"parse": []}


def test_files_too_large_for_the_server_leave_the_text_and_a_note() -> None:
    post = Post(message_payload("report"), [("big.bin", b"x"), ("small.txt", b"y")])
    (_, note) = instead_of_refused_files(post, refusal(413, "Request entity too large"))
    assert (
        note.payload["content"]
        == "⚠️ Discord refused the attached files `big.bin`, `small.txt` (413)"
    )


def test_refused_files_alone_leave_only_the_note() -> None:
    post = Post(message_payload(""), [("only.txt", b"x")])
    (note,) = instead_of_refused_files(post, refusal(403, "", 50013))
    assert note.payload["content"].startswith("⚠️ Not attached: `only.txt`")


@pytest.mark.parametrize(
    "err",
    [refusal(429), refusal(503), refusal(401), DeliveryError("no answer", retryable=True)],
    ids=["429", "503", "401", "unreachable"],
)
def test_a_failure_worth_trying_later_sends_nothing_instead(err: DeliveryError) -> None:
    post = Post(message_payload("with a file"), [("a.txt", b"a")])
    assert instead_of_refused_files(post, err) == []


def test_a_refused_post_without_files_sends_nothing_instead() -> None:
    assert instead_of_refused_files(Post(message_payload("x" * 2001)), refusal(400)) == []
