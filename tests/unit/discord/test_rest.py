"""DiscordREST against the Discord emulator: retries, rate limits, refusals, uploads, nonces.

Every request goes over real HTTP to ``discord_emulator``; failures are steered through its
control API (forced 429s, counting buckets, outages) and checked through its counters.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from bridge.discord.post import DeliveryError, Post, new_nonce
from bridge.discord.rest import DiscordREST, budget_from_env
from discord_emulator import Emulator

MESSAGES = "POST /channels/{channel_id}/messages"


@pytest.fixture
def channel(emu: Emulator) -> str:
    return emu.ids["project-a"]


def rest_for(emu: Emulator, budget: float = 5.0, token: str | None = None) -> DiscordREST:
    return DiscordREST(emu.api_base, token or emu.bot_token, budget=budget)


def contents(emu: Emulator, channel: str) -> list[str]:
    return [m["content"] for m in emu.client.messages(channel)]


def later(seconds: float, action) -> threading.Thread:
    """Run ``action`` from another thread after ``seconds`` (e.g. end an outage)."""
    timer = threading.Timer(seconds, action)
    timer.start()
    return timer


def test_post_returns_the_created_message(emu: Emulator, channel: str) -> None:
    with rest_for(emu) as rest:
        msg = rest.create_message(channel, Post({"content": "hello from a hook"}))
    assert msg["content"] == "hello from a hook"
    assert msg["channel_id"] == channel
    assert msg["author"]["id"] == emu.ids["bot_id"]
    stored = emu.client.messages(channel)
    assert [m["id"] for m in stored] == [msg["id"]]
    assert emu.client.counters()[MESSAGES] == 1


def test_get_returns_json(emu: Emulator, channel: str) -> None:
    with rest_for(emu) as rest:
        me = rest.get("/users/@me")
        ch = rest.get(f"/channels/{channel}")
    assert me["id"] == emu.ids["bot_id"]
    assert ch["id"] == channel


def test_forced_429_is_retried_and_posted_once(emu: Emulator, channel: str) -> None:
    emu.client.force_429(MESSAGES, count=1, retry_after=0.3)
    started = time.monotonic()
    with rest_for(emu) as rest:
        msg = rest.create_message(channel, Post({"content": "after the 429"}))
    elapsed = time.monotonic() - started
    counts = emu.client.counters()
    assert counts[f"429 {MESSAGES}"] == 1
    assert counts[MESSAGES] == 2  # the limited attempt and the one that created the message
    assert [m["id"] for m in emu.client.messages(channel)] == [msg["id"]]
    assert 0.3 <= elapsed < 2.0, f"retry_after 0.3 s honoured, not more: {elapsed:.2f} s"


def test_global_429_is_retried(emu: Emulator, channel: str) -> None:
    emu.client.force_429(MESSAGES, count=2, retry_after=0.1, global_=True)
    with rest_for(emu) as rest:
        rest.create_message(channel, Post({"content": "global"}))
    counts = emu.client.counters()
    assert counts[f"429 {MESSAGES}"] == 2 and counts[MESSAGES] == 3
    assert contents(emu, channel) == ["global"]


def test_429_longer_than_the_budget_gives_up_at_once(emu: Emulator, channel: str) -> None:
    emu.client.force_429(MESSAGES, count=1, retry_after=30.0)
    started = time.monotonic()
    with rest_for(emu, budget=2.0) as rest, pytest.raises(DeliveryError) as caught:
        rest.create_message(channel, Post({"content": "never"}))
    assert caught.value.retryable is True
    assert time.monotonic() - started < 1.0  # no point sleeping past the budget
    assert emu.client.messages(channel) == []


def once(condition, action, timeout: float = 10.0) -> threading.Thread:
    """Run ``action`` from another thread as soon as ``condition()`` holds (or at ``timeout``,
    so that a test whose condition never comes fails on its assertion, not by hanging)."""

    def wait_then_act() -> None:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.02)
        action()

    thread = threading.Thread(target=wait_then_act)
    thread.start()
    return thread


def test_short_503_outage_is_retried_through(emu: Emulator, channel: str) -> None:
    emu.client.set_outage("503")
    # Discord comes back once it has answered 503 twice (not after a fixed 0.5 s: on a loaded
    # machine the first request alone can take that long).
    timer = once(
        lambda: emu.client.counters().get(f"503 {MESSAGES}", 0) >= 2,
        lambda: emu.client.set_outage(None),
    )
    started = time.monotonic()
    try:
        with rest_for(emu, budget=5.0) as rest:
            msg = rest.create_message(channel, Post({"content": "through the outage"}))
    finally:
        timer.join()
    elapsed = time.monotonic() - started
    counts = emu.client.counters()
    assert counts[f"503 {MESSAGES}"] >= 2, counts  # it really did retry during the outage
    assert counts[MESSAGES] == counts[f"503 {MESSAGES}"] + 1
    assert [m["id"] for m in emu.client.messages(channel)] == [msg["id"]]
    assert 0.6 <= elapsed < 3.0  # two backoffs (0.25 s, 0.5 s, ±20 %), then through


def test_503_outage_longer_than_the_budget_raises_retryable(emu: Emulator, channel: str) -> None:
    emu.client.set_outage("503")
    budget = 1.5
    started = time.monotonic()
    with rest_for(emu, budget=budget) as rest, pytest.raises(DeliveryError) as caught:
        rest.create_message(channel, Post({"content": "lost?"}))
    elapsed = time.monotonic() - started
    assert caught.value.retryable is True
    assert "503" in str(caught.value)
    # Backoff 0.25 s, 0.5 s, 1 s … (±20 %): it stops when the next wait would overrun.
    assert 0.4 <= elapsed <= budget + 0.5, f"gave up after {elapsed:.2f} s"
    assert emu.client.counters()[f"503 {MESSAGES}"] >= 2
    emu.client.set_outage(None)
    assert emu.client.messages(channel) == []


def test_refused_connections_raise_retryable_within_the_budget(emu: Emulator, channel: str) -> None:
    emu.client.set_outage("refuse")
    budget = 1.0
    started = time.monotonic()
    with rest_for(emu, budget=budget) as rest, pytest.raises(DeliveryError) as caught:
        rest.create_message(channel, Post({"content": "nobody home"}))
    elapsed = time.monotonic() - started
    assert caught.value.retryable is True
    assert "cannot reach Discord" in str(caught.value)
    assert elapsed <= budget + 0.5


def test_refused_connections_recover_within_the_budget(emu: Emulator, channel: str) -> None:
    emu.client.set_outage("refuse")
    timer = later(0.5, lambda: emu.client.set_outage(None))
    try:
        with rest_for(emu, budget=5.0) as rest:
            rest.create_message(channel, Post({"content": "back again"}))
    finally:
        timer.join()
    assert contents(emu, channel) == ["back again"]


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A real TCP server that accepts connections and never answers (a hung proxy)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/api/v10"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


@pytest.mark.timeout(60)
def test_a_hung_server_is_abandoned_within_the_budget(silent_server: str) -> None:
    budget = 1.0
    started = time.monotonic()
    with (
        DiscordREST(silent_server, "token", budget=budget) as rest,
        pytest.raises(DeliveryError) as caught,
    ):
        rest.create_message("100000000000000003", Post({"content": "into the void"}))
    elapsed = time.monotonic() - started
    assert caught.value.retryable is True
    assert elapsed <= budget + 1.0, f"a {budget} s budget took {elapsed:.1f} s"


def test_wrong_token_is_refused_at_once_without_retries(emu: Emulator, channel: str) -> None:
    started = time.monotonic()
    with (
        rest_for(emu, budget=5.0, token="not-the-token") as rest,
        pytest.raises(DeliveryError) as caught,
    ):
        rest.create_message(channel, Post({"content": "x"}))
    assert time.monotonic() - started < 1.0
    # Not retried now (it would only count against Discord's invalid-request limit), but
    # retryable: callers keep the message in the outbox until the token is fixed.
    assert caught.value.retryable is True
    assert caught.value.status == 401
    assert "token" in str(caught.value)
    counts = emu.client.counters()
    assert counts[MESSAGES] == 1 and counts[f"401 {MESSAGES}"] == 1
    assert emu.client.messages(channel) == []


def test_too_long_content_is_a_permanent_400(emu: Emulator, channel: str) -> None:
    with rest_for(emu) as rest, pytest.raises(DeliveryError) as caught:
        rest.create_message(channel, Post({"content": "x" * 2001}))
    assert caught.value.retryable is False
    assert caught.value.status == 400
    assert "50035" in str(caught.value)
    assert emu.client.counters()[MESSAGES] == 1
    assert emu.client.messages(channel) == []


def test_counting_bucket_makes_the_third_request_wait(emu: Emulator, channel: str) -> None:
    emu.client.set_bucket(MESSAGES, 2, 1.0)
    stamps = []
    with rest_for(emu) as rest:
        started = time.monotonic()
        for i in range(3):
            rest.create_message(channel, Post({"content": f"m{i}"}))
            stamps.append(time.monotonic() - started)
    counts = emu.client.counters()
    assert not any(key.startswith("429 ") for key in counts), counts
    assert counts[MESSAGES] == 3
    assert stamps[1] < 0.5, "the first two fit in the bucket"
    assert stamps[2] >= 0.8, f"the third waited for the bucket to reset: {stamps}"
    assert contents(emu, channel) == ["m0", "m1", "m2"]


def test_multipart_upload_keeps_the_bytes(emu: Emulator, channel: str) -> None:
    binary = bytes(range(256)) * 64 + b"\x00\xff\r\n"
    text = "héllo\nwörld\n".encode()
    post = Post({"content": "two files"}, [("data.bin", binary), ("notes.txt", text)])
    with rest_for(emu) as rest:
        msg = rest.create_message(channel, post)
    assert msg["content"] == "two files"
    attachments = {a["filename"]: a for a in msg["attachments"]}
    assert set(attachments) == {"data.bin", "notes.txt"}
    assert emu.client.file_bytes(attachments["data.bin"]) == binary
    assert emu.client.file_bytes(attachments["notes.txt"]) == text
    assert attachments["data.bin"]["size"] == len(binary)
    stored = emu.client.messages(channel)
    assert len(stored) == 1 and len(stored[0]["attachments"]) == 2


def test_files_without_content(emu: Emulator, channel: str) -> None:
    with rest_for(emu) as rest:
        msg = rest.create_message(channel, Post({}, [("only.txt", b"just a file")]))
    assert emu.client.file_bytes(msg["attachments"][0]) == b"just a file"


def test_enforce_nonce_resend_returns_the_original(emu: Emulator, channel: str) -> None:
    payload = {"content": "exactly once", "nonce": new_nonce(), "enforce_nonce": True}
    with rest_for(emu) as rest:
        first = rest.create_message(channel, Post(dict(payload)))
        again = rest.create_message(channel, Post(dict(payload)))
    assert again["id"] == first["id"]
    assert contents(emu, channel) == ["exactly once"]
    assert emu.client.counters()["nonce_dedup"] == 1


def test_enforce_nonce_dedupes_a_multipart_resend(emu: Emulator, channel: str) -> None:
    payload = {"content": "with a file", "nonce": new_nonce(), "enforce_nonce": True}
    with rest_for(emu) as rest:
        first = rest.create_message(channel, Post(dict(payload), [("a.txt", b"a")]))
        again = rest.create_message(channel, Post(dict(payload), [("a.txt", b"a")]))
    assert again["id"] == first["id"]
    assert len(emu.client.messages(channel)) == 1


def test_new_nonce_fits_discord_limit() -> None:
    nonces = {new_nonce() for _ in range(100)}
    assert len(nonces) == 100
    assert all(len(n) <= 25 for n in nonces)


def test_budget_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_BRIDGE_RETRY_SECONDS", "3.5")
    assert budget_from_env() == 3.5
    monkeypatch.setenv("DISCORD_BRIDGE_RETRY_SECONDS", "soon")
    assert budget_from_env() == 20.0
    monkeypatch.delenv("DISCORD_BRIDGE_RETRY_SECONDS")
    assert budget_from_env() == 20.0


def test_missing_attach_files_is_a_permanent_403_with_its_code(emu: Emulator, channel: str) -> None:
    # Regression: every 403 was "retry later", so a post with files blocked its channel.
    emu.client.deny_attach_files(channel)
    with rest_for(emu) as rest, pytest.raises(DeliveryError) as caught:
        rest.create_message(channel, Post({"content": "x"}, [("a.txt", b"a")]))
    assert (caught.value.retryable, caught.value.status, caught.value.code) == (False, 403, 50013)
    with rest_for(emu) as rest:
        rest.create_message(channel, Post({"content": "text alone is fine"}))
    assert contents(emu, channel) == ["text alone is fine"]
