"""The outbox on a real runtime directory, delivering to the Discord emulator.

Entries are spooled to disk, drained over real HTTP, locked with ``flock`` against a real
second process, and a Stop hook's ``deliver`` spools through an outage and catches up after.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.discord.outbox import Outbox
from bridge.discord.post import DeliveryError, Post, message_payload, new_nonce
from bridge.discord.rest import DiscordREST
from bridge.handlers import context as hook_context
from bridge.state.runtime import Runtime
from bridge_testkit import hook_input
from discord_emulator import Emulator

MESSAGES = "POST /channels/{channel_id}/messages"
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def rt(tmp_path: Path) -> Runtime:
    return Runtime(str(tmp_path / "runtime")).ensure()


@pytest.fixture
def outbox(rt: Runtime) -> Outbox:
    return Outbox(rt.outbox)


@pytest.fixture
def rest(emu: Emulator) -> Iterator[DiscordREST]:
    with DiscordREST(emu.api_base, emu.bot_token, budget=0.5) as client:
        yield client


def post(content: str, files: list[tuple[str, bytes]] | None = None) -> Post:
    return Post({"content": content, "nonce": new_nonce(), "enforce_nonce": True}, files)


def sender(rest: DiscordREST, sent: list[str] | None = None):
    """A drain callback that posts each entry to its channel for real."""

    def send(entry: dict, p: Post) -> None:
        rest.create_message(entry["channel_id"], p)
        if sent is not None:
            sent.append(p.payload.get("content", ""))

    return send


def contents(emu: Emulator, channel: str) -> list[str]:
    return [m["content"] for m in emu.client.messages(channel)]


def mode(path: str | Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# --- order ------------------------------------------------------------------------------


def test_entries_drain_in_creation_order_per_channel(
    emu: Emulator, outbox: Outbox, rest: DiscordREST
) -> None:
    a, b = emu.ids["project-a"], emu.ids["project-b"]
    for i in range(6):
        outbox.enqueue(a, "main", post(f"a{i}"))
        outbox.enqueue(b, "main", post(f"b{i}"))
    assert outbox.channels() == sorted([a, b])
    assert len(outbox.pending(a)) == 6

    with outbox.locked(a) as got:
        assert got is True
        assert outbox.drain(a, sender(rest)) is True

    assert contents(emu, a) == [f"a{i}" for i in range(6)]
    assert contents(emu, b) == []  # another channel's entries are not touched
    assert outbox.pending(a) == []
    assert outbox.channels() == [b]
    with outbox.locked(b):
        assert outbox.drain(b, sender(rest)) is True
    assert contents(emu, b) == [f"b{i}" for i in range(6)]
    assert outbox.channels() == []


def test_entry_names_sort_in_creation_order(outbox: Outbox) -> None:
    channel = "100000000000000003"
    paths = [outbox.enqueue(channel, "main", post(str(i))) for i in range(50)]
    assert outbox.pending(channel) == paths
    loaded = [outbox.load(p)[1].payload["content"] for p in outbox.pending(channel)]
    assert loaded == [str(i) for i in range(50)]


def test_entries_from_several_processes_keep_each_process_order(
    emu: Emulator, outbox: Outbox, rest: DiscordREST, rt: Runtime
) -> None:
    channel = emu.ids["project-a"]
    script = (
        "import sys\n"
        "from bridge.discord.outbox import Outbox\n"
        "from bridge.discord.rest import Post\n"
        "box = Outbox(sys.argv[1])\n"
        "for i in range(5):\n"
        "    box.enqueue(sys.argv[2], 'main', Post({'content': f'{sys.argv[3]}{i}'}))\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, rt.outbox, channel, tag], cwd=REPO)
        for tag in ("p", "q")
    ]
    assert [p.wait(30) for p in procs] == [0, 0]
    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True
    got = contents(emu, channel)
    assert sorted(got) == sorted([f"{t}{i}" for t in "pq" for i in range(5)])
    for tag in "pq":
        assert [c for c in got if c.startswith(tag)] == [f"{tag}{i}" for i in range(5)]


# --- failures ---------------------------------------------------------------------------


def test_retryable_failure_stops_the_drain_and_keeps_order(
    emu: Emulator, outbox: Outbox, rest: DiscordREST
) -> None:
    channel = emu.ids["project-a"]
    for i in range(4):
        outbox.enqueue(channel, "main", post(f"m{i}"))
    delivered: list[str] = []
    send = sender(rest, delivered)

    def send_then_break(entry: dict, p: Post) -> None:
        send(entry, p)
        if len(delivered) == 2:
            emu.client.set_outage("503")  # Discord goes down after the second message

    with outbox.locked(channel):
        assert outbox.drain(channel, send_then_break) is False
    assert contents(emu, channel) == ["m0", "m1"]
    remaining = [outbox.load(p)[1].payload["content"] for p in outbox.pending(channel)]
    assert remaining == ["m2", "m3"]
    assert emu.client.counters()[f"503 {MESSAGES}"] >= 1

    emu.client.set_outage(None)
    with outbox.locked(channel):
        assert outbox.drain(channel, send) is True
    assert contents(emu, channel) == ["m0", "m1", "m2", "m3"]
    assert outbox.pending(channel) == []


def test_permanent_failure_is_quarantined_and_the_drain_continues(
    emu: Emulator, outbox: Outbox, rest: DiscordREST, rt: Runtime
) -> None:
    channel = emu.ids["project-a"]
    outbox.enqueue(channel, "main", post("before"))
    bad = outbox.enqueue(channel, "main", post("x" * 2001))  # Discord answers 400 / 50035
    outbox.enqueue(channel, "main", post("after"))

    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True

    assert contents(emu, channel) == ["before", "after"]
    assert outbox.pending(channel) == []
    failed = bad[: -len(".json")] + ".failed"
    assert os.path.exists(failed) and not os.path.exists(bad)
    assert json.loads(Path(failed).read_text())["payload"]["content"] == "x" * 2001
    log = Path(rt.path("logs", "outbox.log")).read_text()
    assert os.path.basename(bad) in log and "50035" in log


def test_entry_delivered_but_not_removed_is_not_posted_twice(
    emu: Emulator, outbox: Outbox, rest: DiscordREST
) -> None:
    """A crash between posting an entry and removing it: the nonce makes the resend a no-op."""
    channel = emu.ids["project-a"]
    path = outbox.enqueue(channel, "main", post("only once"))
    outbox.enqueue(channel, "main", post("next"))
    _, p = outbox.load(path)
    rest.create_message(channel, p)  # delivered …, then the process died before remove()
    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True
    assert contents(emu, channel) == ["only once", "next"]
    assert emu.client.counters()["nonce_dedup"] == 1


def test_a_stop_events_entries_wait_for_its_claim_and_are_dropped_with_it(
    emu: Emulator, outbox: Outbox, rest: DiscordREST, tmp_path: Path
) -> None:
    """A bot running a Stop event spools its reply under its claim: nobody posts it while the
    claim is held; a claim a killed bot left takes its entries with it (the event runs again)."""
    channel = emu.ids["project-a"]
    claim = tmp_path / "0123456789abcdef.json.taken"
    claim.write_text("{}")
    outbox.enqueue(channel, "main", post("claimed"), durable=False, claim=str(claim))
    outbox.enqueue(channel, "main", post("other"))
    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True
    assert contents(emu, channel) == ["other"]  # held while the claim is there
    assert outbox.drop_claimed(str(tmp_path / "another.json.taken")) == 0
    assert outbox.drop_claimed(str(claim)) == 1
    assert outbox.pending(channel) == []

    outbox.enqueue(channel, "main", post("released"), claim=str(claim))
    claim.unlink()  # the bot released it: the entry goes out
    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True
    assert contents(emu, channel) == ["other", "released"]


def test_unreadable_entry_is_quarantined(
    emu: Emulator, outbox: Outbox, rest: DiscordREST, rt: Runtime
) -> None:
    channel = emu.ids["project-a"]
    outbox.enqueue(channel, "main", post("first"))
    broken = outbox.enqueue(channel, "main", post("broken"))
    Path(broken).write_bytes(b'{"channel_id": "trunc')
    outbox.enqueue(channel, "main", post("last"))
    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True
    assert contents(emu, channel) == ["first", "last"]
    assert os.path.exists(broken[: -len(".json")] + ".failed")
    assert "unreadable entry" in Path(rt.path("logs", "outbox.log")).read_text()


def test_entries_of_the_wrong_shape_are_set_aside_and_the_rest_delivered(
    emu: Emulator, outbox: Outbox, rest: DiscordREST, rt: Runtime, tmp_path: Path
) -> None:
    # Regression: valid JSON of the wrong shape ([] or deep nesting) made drain raise, and the
    # channel's later replies were lost.
    channel = emu.ids["project-a"]
    outbox.enqueue(channel, "main", post("first"))
    secret = tmp_path / "secret.txt"
    secret.write_text("not for Discord")
    bad = {
        "list": b"[]",
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "other-channel": json.dumps(
            {
                "channel_id": emu.ids["project-b"],
                "server": "main",
                "payload": {"content": "x"},
                "files": [],
                "queued_at": time.time(),
            }
        ).encode(),
        "foreign-file": json.dumps(
            {
                "channel_id": channel,
                "server": "main",
                "payload": {"content": "x"},
                "queued_at": time.time(),
                "files": [{"filename": "s", "path": str(secret)}],
            }
        ).encode(),
    }
    paths = {}
    for name, data in bad.items():
        paths[name] = outbox.enqueue(channel, "main", post(name))
        Path(paths[name]).write_bytes(data)
    outbox.enqueue(channel, "main", post("last"))
    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True
    assert contents(emu, channel) == ["first", "last"]
    assert emu.client.messages(emu.ids["project-b"]) == []
    for path in paths.values():
        assert os.path.exists(path[: -len(".json")] + ".failed")
    log = Path(rt.path("logs", "outbox.log")).read_text()
    assert log.count("unreadable entry") == 4 and "nested too deeply" in log


def test_an_entry_older_than_a_day_is_dropped_and_the_channel_told(
    emu: Emulator, outbox: Outbox, rest: DiscordREST, rt: Runtime
) -> None:
    channel = emu.ids["project-a"]
    old = outbox.enqueue(channel, "main", post("from yesterday"))
    entry = json.loads(Path(old).read_text())
    entry["queued_at"] = time.time() - 25 * 3600
    Path(old).write_text(json.dumps(entry))
    outbox.enqueue(channel, "main", post("recent"))
    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True
        assert outbox.drain(channel, sender(rest)) is True  # the note, queued meanwhile
    texts = contents(emu, channel)
    assert texts[0] == "recent"
    assert texts[1].startswith("⚠️ 1 message(s) queued since ")
    assert "could not be delivered within 24 h and were dropped" in texts[1]
    assert os.path.exists(old[: -len(".json")] + ".failed")
    assert "not delivered within 24 h" in Path(rt.path("logs", "outbox.log")).read_text()


def test_drain_of_an_empty_or_unknown_channel(outbox: Outbox) -> None:
    def send(entry: dict, p: Post) -> None:
        raise AssertionError("nothing to send")

    assert outbox.drain("100000000000000099", send) is True
    assert outbox.pending("100000000000000099") == []
    with pytest.raises(ValueError):
        outbox.enqueue("../etc", "main", post("no"))


# --- files ------------------------------------------------------------------------------


def test_files_are_staged_and_delivered_with_their_bytes(
    emu: Emulator, outbox: Outbox, rest: DiscordREST
) -> None:
    channel = emu.ids["project-a"]
    binary = os.urandom(100_000)
    text = "résumé\n".encode()
    path = outbox.enqueue(channel, "main", post("report", [("data.bin", binary), ("r.txt", text)]))
    files_dir = path[: -len(".json")] + ".files"
    assert sorted(os.listdir(files_dir)) == ["0", "1"]
    assert Path(files_dir, "0").read_bytes() == binary
    entry, loaded = outbox.load(path)
    assert entry["channel_id"] == channel and entry["server"] == "main"
    assert loaded.files == [("data.bin", binary), ("r.txt", text)]

    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True

    (msg,) = emu.client.messages(channel)
    assert msg["content"] == "report"
    by_name = {a["filename"]: a for a in msg["attachments"]}
    assert emu.client.file_bytes(by_name["data.bin"]) == binary
    assert emu.client.file_bytes(by_name["r.txt"]) == text
    assert not os.path.exists(files_dir) and not os.path.exists(path)


def test_entries_and_staged_files_are_private(outbox: Outbox, rt: Runtime) -> None:
    channel = "100000000000000003"
    old = os.umask(0)  # a permissive umask must not leak into the spool
    try:
        path = outbox.enqueue(channel, "main", post("secret", [("k.txt", b"key")]))
        with outbox.locked(channel):
            pass
    finally:
        os.umask(old)
    channel_dir = os.path.dirname(path)
    files_dir = path[: -len(".json")] + ".files"
    assert mode(rt.root) == 0o700
    assert mode(rt.outbox) == 0o700
    assert mode(channel_dir) == 0o700
    assert mode(files_dir) == 0o700
    assert mode(path) == 0o600
    assert mode(os.path.join(files_dir, "0")) == 0o600
    assert mode(os.path.join(channel_dir, ".lock")) == 0o600
    leftovers = [n for n in os.listdir(channel_dir) if n.endswith(".tmp")]
    assert leftovers == []


def test_symlinked_channel_dir_is_refused(outbox: Outbox, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    os.symlink(elsewhere, os.path.join(outbox.root, "100000000000000003"))
    with pytest.raises(Exception, match="symlink"):
        outbox.enqueue("100000000000000003", "main", post("no"))
    assert os.listdir(elsewhere) == []


# --- locking ----------------------------------------------------------------------------

HOLD_LOCK = """
import sys
from bridge.discord.outbox import Outbox
with Outbox(sys.argv[1]).locked(sys.argv[2]) as got:
    print("held" if got else "not held", flush=True)
    sys.stdin.readline()
"""


def hold_lock_in_subprocess(root: str, channel: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, root, channel],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def release(proc: subprocess.Popen) -> None:
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.flush()
    assert proc.wait(10) == 0


def test_locked_without_wait_yields_false_while_another_process_holds_it(
    outbox: Outbox,
) -> None:
    channel = "100000000000000003"
    proc = hold_lock_in_subprocess(outbox.root, channel)
    try:
        started = time.monotonic()
        with outbox.locked(channel, wait=False) as got:
            assert got is False
        assert time.monotonic() - started < 0.5
    finally:
        release(proc)
    with outbox.locked(channel, wait=False) as got:
        assert got is True
    other = "100000000000000004"  # locks are per channel
    proc = hold_lock_in_subprocess(outbox.root, channel)
    try:
        with outbox.locked(other, wait=False) as got:
            assert got is True
    finally:
        release(proc)


def test_locked_with_wait_blocks_until_the_holder_releases(outbox: Outbox) -> None:
    import threading

    channel = "100000000000000003"
    proc = hold_lock_in_subprocess(outbox.root, channel)
    timer = threading.Timer(0.4, release, (proc,))
    timer.start()
    started = time.monotonic()
    try:
        with outbox.locked(channel) as got:
            waited = time.monotonic() - started
            assert got is True
    finally:
        timer.join()
    assert waited >= 0.35


def test_lock_is_released_after_the_block(outbox: Outbox) -> None:
    channel = "100000000000000003"
    with outbox.locked(channel) as first:
        assert first is True
        with outbox.locked(channel, wait=False) as second:  # a second open file: conflicts
            assert second is False
    with outbox.locked(channel, wait=False) as again:
        assert again is True


# --- a Stop hook's deliver --------------------------------------------------------------


@pytest.fixture
def hook_env(tmp_path: Path, emu: Emulator, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A bridge home with a config pointing at the emulator; the runtime dir in tmp."""
    home = tmp_path / "bridge-home"
    home.mkdir(mode=0o700)
    project = tmp_path / "project-a"
    project.mkdir()
    cfg = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {
                    "botToken": emu.bot_token,
                    "ownerUserId": emu.ids["alice"],
                    "apiBaseUrl": emu.api_base,
                },
                "projects": [
                    {
                        "name": "project-a",
                        "channelId": emu.ids["project-a"],
                        "projectPath": str(project),
                    }
                ],
            }
        ],
    }
    config_file = home / "config.json"
    config_file.write_text(json.dumps(cfg))
    config_file.chmod(0o600)
    for key in [k for k in os.environ if k.startswith("DISCORD_BRIDGE_")]:
        monkeypatch.delenv(key)
    # rest() reads the retry budget from the process environment.
    monkeypatch.setenv("DISCORD_BRIDGE_RETRY_SECONDS", "1")
    return {
        "DISCORD_BRIDGE_HOME": str(home),
        "DISCORD_BRIDGE_RUNTIME_DIR": str(tmp_path / "hook-runtime"),
        "DISCORD_BRIDGE_STATE_DIR": str(tmp_path / "hook-runtime"),
        "DISCORD_BRIDGE_CHANNEL_ID": emu.ids["project-a"],
    }


def stop_context(env: dict[str, str]) -> hook_context.HookContext:
    context = hook_context.resolve(hook_input("Stop"), env)
    assert context is not None
    context.runtime.ensure()
    return context


def test_deliver_spools_during_an_outage_and_catches_up_in_order(
    emu: Emulator, hook_env: dict[str, str]
) -> None:
    channel = emu.ids["project-a"]
    context = stop_context(hook_env)
    assert context.channel_id == channel
    outbox = Outbox(context.runtime.outbox)

    emu.client.set_outage("503")
    started = time.monotonic()
    context.deliver([Post(message_payload("spooled during the outage"))])
    assert time.monotonic() - started < 3.0  # bounded by DISCORD_BRIDGE_RETRY_SECONDS=1
    assert emu.client.counters()[f"503 {MESSAGES}"] >= 1
    assert len(outbox.pending(channel)) == 1
    log = Path(context.runtime.hook_log).read_text()
    assert f"1 message(s) for #{channel} queued" in log

    emu.client.set_outage(None)
    assert emu.client.messages(channel) == []
    context.deliver([Post(message_payload("the next reply"))])

    msgs = emu.client.messages(channel)
    assert [m["content"] for m in msgs] == ["spooled during the outage", "the next reply"]
    assert outbox.pending(channel) == []
    assert all(m["author"]["id"] == emu.ids["bot_id"] for m in msgs)
    assert "nonce_dedup" not in emu.client.counters()


def test_deliver_keeps_spooling_behind_a_backlog(emu: Emulator, hook_env: dict[str, str]) -> None:
    """While the outbox cannot be drained, new replies queue behind it, never ahead."""
    channel = emu.ids["project-a"]
    context = stop_context(hook_env)
    outbox = Outbox(context.runtime.outbox)
    emu.client.set_outage("503")
    context.deliver([Post(message_payload("one"))])
    context.deliver(
        [Post(message_payload("two")), Post(message_payload("three"))],
    )
    assert len(outbox.pending(channel)) == 3
    emu.client.set_outage(None)
    context.deliver([Post(message_payload("four"))])
    assert contents(emu, channel) == ["one", "two", "three", "four"]


def test_deliver_skips_a_refused_chunk_and_posts_the_rest(
    emu: Emulator, hook_env: dict[str, str]
) -> None:
    channel = emu.ids["project-a"]
    context = stop_context(hook_env)
    posts = [
        Post(message_payload("ok 1")),
        Post(message_payload("y" * 2001)),
        Post(message_payload("ok 2")),
    ]
    context.deliver(posts)
    assert contents(emu, channel) == ["ok 1", "ok 2"]
    assert Outbox(context.runtime.outbox).pending(channel) == []
    assert "Discord refused a reply message" in Path(context.runtime.hook_log).read_text()


def test_deliver_keeps_a_reply_while_the_token_is_rejected(
    emu: Emulator, hook_env: dict[str, str]
) -> None:
    channel = emu.ids["project-a"]
    config_file = Path(hook_env["DISCORD_BRIDGE_HOME"]) / "config.json"
    good = config_file.read_text()
    config_file.write_text(good.replace(emu.bot_token, "reset.in.the.portal"))
    stop_context(hook_env).deliver([Post(message_payload("keep me"))])
    assert emu.client.counters()[f"401 {MESSAGES}"] == 1

    config_file.write_text(good)  # the user pastes the new token
    stop_context(hook_env).deliver([Post(message_payload("after the fix"))])
    assert contents(emu, channel) == ["keep me", "after the fix"]


def test_drain_keeps_the_backlog_while_the_token_is_rejected(
    emu: Emulator, outbox: Outbox, rest: DiscordREST
) -> None:
    channel = emu.ids["project-a"]
    for i in range(3):
        outbox.enqueue(channel, "main", post(f"queued {i}"))
    with (
        DiscordREST(emu.api_base, "reset.in.the.portal", budget=0.5) as bad,
        outbox.locked(channel),
    ):
        assert outbox.drain(channel, sender(bad)) is False
    assert len(outbox.pending(channel)) == 3
    with outbox.locked(channel):
        assert outbox.drain(channel, sender(rest)) is True
    assert contents(emu, channel) == ["queued 0", "queued 1", "queued 2"]


def test_delivery_error_carries_retryable() -> None:
    err = DeliveryError("x", retryable=True)
    assert err.retryable is True and err.status is None


def test_refused_files_do_not_take_the_text_down_with_them(
    emu: Emulator, hook_env: dict[str, str]
) -> None:
    channel = emu.ids["project-a"]
    context = stop_context(hook_env)
    post = Post(message_payload("report below"), [("big.bin", b"x" * 5000)])
    emu.client.settings(max_file_size=1000)
    try:
        context.deliver([post])
    finally:
        emu.client.settings(max_file_size=10 * 1024 * 1024)
    texts = contents(emu, channel)
    assert texts[0] == "report below"
    assert texts[1].startswith("⚠️ Discord refused the attached files `big.bin`")
    assert Outbox(context.runtime.outbox).pending(channel) == []


def test_files_refused_for_lack_of_attach_files_post_the_text_with_a_note(
    emu: Emulator, hook_env: dict[str, str]
) -> None:
    # Regression: a 403 on a post with files was "retry later": the entry blocked the
    # channel for ever, and every later reply queued behind it.
    channel = emu.ids["project-a"]
    context = stop_context(hook_env)
    emu.client.deny_attach_files(channel)
    context.deliver([Post(message_payload("chart below"), [("chart.png", b"png")])])
    context.deliver([Post(message_payload("the next reply"))])
    texts = contents(emu, channel)
    assert texts[0] == "chart below"
    assert texts[1] == (
        "⚠️ Not attached: `chart.png` (the bot lacks the **Attach Files** permission in this"
        " channel; 403/50013)"
    )
    assert texts[2] == "the next reply"
    assert Outbox(context.runtime.outbox).pending(channel) == []


def test_deliver_spools_the_reply_when_the_outbox_fails_unexpectedly(
    emu: Emulator, hook_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    channel = emu.ids["project-a"]
    context = stop_context(hook_env)
    outbox = Outbox(context.runtime.outbox)
    outbox.enqueue(channel, "main", post("waiting"))

    def broken_drain(*_args: object, **_kwargs: object) -> bool:
        raise RuntimeError("a surprise")

    monkeypatch.setattr(Outbox, "drain", broken_drain)
    context.deliver([Post(message_payload("must not be lost"))])
    monkeypatch.undo()
    assert len(outbox.pending(channel)) == 2
    assert "a surprise" in Path(context.runtime.hook_log).read_text()


def test_deliver_spools_instead_of_waiting_on_a_held_lock(
    emu: Emulator, hook_env: dict[str, str]
) -> None:
    channel = emu.ids["project-a"]
    context = stop_context(hook_env)
    outbox = Outbox(context.runtime.outbox)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK_FOREVER, os.path.join(outbox.root, channel, ".lock")],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline() == b"locked\n"
        started = time.monotonic()
        context.deliver([Post(message_payload("while the bot drains"))], budget=1.0)
        assert time.monotonic() - started < 3.0
        assert len(outbox.pending(channel)) == 1
        assert contents(emu, channel) == []
    finally:
        holder.kill()
        holder.wait()


HOLD_LOCK_FOREVER = """
import fcntl, os, sys, time
os.makedirs(os.path.dirname(sys.argv[1]), mode=0o700, exist_ok=True)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


def test_an_entry_dated_in_the_future_ages_out_like_any_other(
    outbox: Outbox, rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``queued_at`` is what the entry says: a wrong clock or another process can date it
    years ahead. It must still be dropped a day after it was written (the time its file was
    put in place, which no process sets), never wait forever at the head of its channel;
    a prompt's hand-over likewise expires 2.5 s after it was written, whatever it says."""
    from bridge.discord import outbox as outbox_module

    channel = "123456789012345678"
    far = time.time() + 75 * 365 * 86400
    written = []
    for text, receipt in (("dated 2100", False), ("a prompt dated 2100", True)):
        path = outbox.enqueue(channel, "main", post(text), receipt=receipt)
        entry = json.loads(Path(path).read_text())
        entry.update(queued_at=far, **({"not_after": far} if receipt else {}))
        Path(path).write_text(json.dumps(entry))
        written.append(path)
    sent: list[str] = []

    def send(_: dict, p: Post) -> None:
        sent.append(p.payload.get("content", ""))

    class DayLater:  # the outbox's clock, 25 hours on
        def __getattr__(self, name: str) -> object:
            return getattr(time, name)

        @staticmethod
        def time() -> float:
            return real_time() + 25 * 3600

    real_time = time.time
    monkeypatch.setattr(outbox_module, "time", DayLater())
    with outbox.locked(channel):
        assert outbox.drain(channel, send) is True
    monkeypatch.undo()  # back to the clock the file system dates files with
    with outbox.locked(channel):
        assert outbox.drain(channel, send) is True  # the note about the dropped one
    assert len(sent) == 1 and sent[0].startswith("⚠️ 1 message(s) queued since "), sent
    assert "2100" not in sent[0]  # dated by when it was written, not what it claimed
    assert os.path.exists(written[0][: -len(".json")] + ".failed")
    assert not os.path.exists(written[1])  # the prompt's hand-over: gone, never posted
    assert "not delivered within 24 h" in Path(rt.path("logs", "outbox.log")).read_text()
