"""Hooks hand their messages to the running bot; whatever happens, each is posted exactly once.

The real Stop hook command (as Claude Code runs it: ``sh -c``, the event on stdin), the real
bot process, the emulator. The bot is frozen (SIGSTOP) or killed (SIGKILL) and the hook killed
at the moments that matter; a message counts as delivered when the emulator stored it, and
``enforce_nonce`` makes a resend return the original message.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
import uuid

from bridge.discord.outbox import Outbox
from bridge.discord.post import Post, message_payload
from bridge.discord.rest import DiscordREST
from bridge.state.runtime import Runtime
from bridge_testkit import hook_input, wait_until

PROJECT = "project-a"


def stop_hook(rig, content: str) -> subprocess.Popen:
    settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    event = hook_input("Stop", cwd=rig.projects[PROJECT], last_assistant_message=content)
    env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": rig.ids[PROJECT]}
    hook = subprocess.Popen(
        ["sh", "-c", command],
        stdin=subprocess.PIPE,
        env=env,
        cwd=rig.projects[PROJECT],
        start_new_session=True,
    )
    hook.stdin.write(json.dumps(event).encode())
    hook.stdin.close()
    return hook


def copies(rig, content: str) -> int:
    return sum(m.get("content") == content for m in rig.discord.messages(rig.ids[PROJECT]))


def outbox_entries(rig) -> list:
    return list((rig.state_dir / "outbox" / rig.ids[PROJECT]).glob("*.json"))


def unique(what: str) -> str:
    return f"{what} {uuid.uuid4().hex[:8]}"


def test_with_the_bot_running_the_bot_posts_the_hooks_reply_once(rig) -> None:
    rig.start_bot()
    content = unique("handed to the bot")
    started = time.monotonic()
    assert stop_hook(rig, content).wait(30) == 0
    assert time.monotonic() - started < 10
    wait_until(lambda: copies(rig, content) == 1, 10, "the reply")
    # the bot posted it, not the hook (its log line comes just after the post)
    wait_until(lambda: "delivered a queued message" in rig.bot_output(), 10, "the bot's post")
    wait_until(lambda: outbox_entries(rig) == [], 10, "the entry to be removed")  # just after


def test_with_the_bot_running_the_stop_hook_hands_it_the_whole_event(rig) -> None:
    """The hook exits once the bot claimed the event; the bot lays the reply out and posts it
    once, and the event file is gone."""
    rig.start_bot()
    content = unique("laid out by the bot")
    assert stop_hook(rig, content).wait(30) == 0
    wait_until(lambda: copies(rig, content) == 1, 10, "the reply")
    wait_until(lambda: "took a Stop event from its hook" in rig.bot_output(), 10, "the claim")
    wait_until(lambda: list((rig.runtime_dir / "stops").iterdir()) == [], 10, "the event file")
    time.sleep(0.5)  # nobody posts it a second time
    assert copies(rig, content) == 1


def test_a_stop_event_a_dead_bot_had_claimed_is_posted_once_by_the_next(rig) -> None:
    """The bot died between claiming a Stop event and posting its reply: the next bot runs
    the event when it starts."""
    content = unique("claimed by a bot that died")
    settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    argv = shlex.split(command, comments=True)
    env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": rig.ids[PROJECT]}
    event = hook_input("Stop", cwd=rig.projects[PROJECT], last_assistant_message=content)
    spool = (  # what the hook spooled, as stop_handoff.spool writes it
        "import os, sys; from bridge.handlers import stop_handoff as s;"
        "from bridge.state import runtime; env = s.trusted_env(sys.argv, os.environ);"
        "p = s.spool(runtime.Runtime.from_env(env), env, sys.stdin.buffer.read());"
        "os.rename(p, p + s.CLAIMED)"
    )
    subprocess.run(
        [argv[0], "-c", spool, *argv[4:]],
        input=json.dumps(event).encode(),
        env=env,
        cwd=rig.projects[PROJECT],
        check=True,
        timeout=30,
    )
    assert len(list((rig.runtime_dir / "stops").glob("*.taken"))) == 1
    rig.start_bot()
    wait_until(lambda: copies(rig, content) == 1, 20, "the reply")
    wait_until(lambda: list((rig.runtime_dir / "stops").iterdir()) == [], 10, "the event file")
    assert copies(rig, content) == 1


def test_a_bot_killed_between_spooling_a_reply_and_releasing_its_claim_posts_it_once(
    rig,
) -> None:
    """The bot took a Stop event, laid its reply out into the outbox and was killed (SIGKILL)
    before it released its claim: the next bot runs the event again, and the thread shows the
    reply once (not the spooled copy and the re-run's)."""
    rig.start_bot(env={"DISCORD_BRIDGE_TEST_CRASH": "stop-spooled"})
    content = unique("spooled by a bot killed at once")
    assert stop_hook(rig, content).wait(30) == 0  # the bot claimed the event
    assert rig.bot.wait(20) == -signal.SIGKILL
    rig.bot = None
    assert len(list((rig.runtime_dir / "stops").glob("*.taken"))) == 1  # the claim is held
    (entry,) = outbox_entries(rig)  # with the reply in the outbox
    assert json.loads(entry.read_text())["payload"]["content"] == content
    rig.start_bot()
    # the claim goes once the re-run's entries are in the outbox; then the outbox empties
    wait_until(
        lambda: list((rig.runtime_dir / "stops").iterdir()) == [] and outbox_entries(rig) == [],
        20,
        "the event run again and its reply posted",
    )
    assert "(1 of its messages were in the outbox)" in rig.bot_output()
    later = unique("the next reply")  # posted in order after whatever the restart posted
    assert stop_hook(rig, later).wait(30) == 0
    wait_until(lambda: copies(rig, later) == 1, 10, "the next reply")
    assert copies(rig, content) == 1


def test_with_no_bot_the_hook_posts_itself_at_once(rig) -> None:
    content = unique("no bot here")
    started = time.monotonic()
    assert stop_hook(rig, content).wait(30) == 0
    assert time.monotonic() - started < 5  # no hand-off wait: nobody listens on bot.sock
    assert copies(rig, content) == 1 and outbox_entries(rig) == []


def test_a_frozen_bot_leaves_the_post_to_the_hook_and_never_posts_it_again(rig) -> None:
    rig.start_bot()
    os.kill(rig.bot.pid, signal.SIGSTOP)
    try:
        content = unique("the bot is frozen")
        assert stop_hook(rig, content).wait(30) == 0  # after the 2 s hand-off wait
        assert copies(rig, content) == 1 and outbox_entries(rig) == []
    finally:
        os.kill(rig.bot.pid, signal.SIGCONT)
    later = unique("after the bot thawed")
    assert stop_hook(rig, later).wait(30) == 0  # a positive signal: the bot works again
    wait_until(lambda: copies(rig, later) == 1, 10, "the next reply")
    assert copies(rig, content) == 1


def stop_events(rig) -> list:
    """The Stop events hooks handed to the bot that it has not claimed yet."""
    return list((rig.runtime_dir / "stops").glob("*.json"))


def test_a_hook_killed_after_the_hand_off_still_gets_its_reply_posted_once(rig) -> None:
    rig.start_bot()
    os.kill(rig.bot.pid, signal.SIGSTOP)  # the bot cannot take it before the hook dies
    try:
        content = unique("the hook died waiting")
        hook = stop_hook(rig, content)
        wait_until(lambda: stop_events(rig), 20, "the Stop event handed over")
        os.killpg(hook.pid, signal.SIGKILL)
        hook.wait(10)
    finally:
        os.kill(rig.bot.pid, signal.SIGCONT)
    wait_until(lambda: copies(rig, content) == 1, 20, "the bot to post the reply")
    wait_until(lambda: outbox_entries(rig) == [] and stop_events(rig) == [], 10, "the entries")
    time.sleep(1)  # the drainer's next round has come and gone
    assert copies(rig, content) == 1


def test_a_bot_killed_after_posting_but_before_removing_the_entry_posts_nothing_twice(
    rig,
) -> None:
    """The crash window of the bot: the message is at Discord, its entry still in the outbox.
    The next bot resends it with the same nonce and Discord returns the original."""
    content = unique("posted just before the crash")
    post = Post(message_payload(content))
    rt = Runtime(str(rig.runtime_dir), str(rig.state_dir)).ensure()  # as the hook found it
    Outbox(rt.outbox).enqueue(rig.ids[PROJECT], "e2e", post)
    with DiscordREST(rig.emu.api_base, rig.emu.bot_token) as rest:  # what the bot had posted
        rest.create_message(rig.ids[PROJECT], post)
    assert copies(rig, content) == 1
    rig.start_bot()
    wait_until(lambda: outbox_entries(rig) == [], 20, "the bot to drain the entry")
    assert copies(rig, content) == 1


def test_a_frozen_bot_with_a_full_wake_queue_never_blocks_a_hook(rig) -> None:
    """A bot that is alive but not reading (Ctrl-Z on `run`): its socket queue fills up after
    ~10 wake-ups; every further hook must still post at once, never block on the socket."""
    rig.start_bot()
    os.kill(rig.bot.pid, signal.SIGSTOP)
    try:
        contents = [unique(f"frozen bot, reply {i}") for i in range(13)]
        for content in contents:
            started = time.monotonic()
            assert stop_hook(rig, content).wait(30) == 0
            assert time.monotonic() - started < 10
    finally:
        os.kill(rig.bot.pid, signal.SIGCONT)
    assert [copies(rig, content) for content in contents] == [1] * len(contents)
    later = unique("after the bot thawed")
    assert stop_hook(rig, later).wait(30) == 0
    wait_until(lambda: copies(rig, later) == 1, 10, "the next reply")
    assert [copies(rig, content) for content in contents] == [1] * len(contents)


def test_a_burst_over_many_channels_stays_under_the_global_limit_without_a_429(rig) -> None:
    """60 replies spooled at once over 12 channels (5 each: every channel's own bucket has
    room): the bot paces them under Discord's 50 requests/s instead of running into it,
    and each channel gets its replies once and in order."""
    channels = [rig.discord.create_channel(f"burst-{i}")["id"] for i in range(12)]
    rt = Runtime(str(rig.runtime_dir), str(rig.state_dir)).ensure()
    rig.discord.settings(rate_limits=True)
    try:
        rig.start_bot()
        rig.discord.reset_counters()
        outbox = Outbox(rt.outbox)
        wanted = {c: [unique(f"burst {c} {n}") for n in range(5)] for c in channels}
        for channel, contents in wanted.items():
            for content in contents:
                outbox.enqueue(channel, "e2e", Post(message_payload(content)))

        def delivered() -> dict:
            return {c: [m["content"] for m in rig.discord.messages(c)] for c in channels}

        wait_until(lambda: sum(map(len, delivered().values())) >= 60, 30, "all 60 replies")
        assert delivered() == wanted
        assert rig.discord.counters().get("429 global", 0) == 0
    finally:
        rig.discord.settings(rate_limits=False)


def test_a_stop_ends_a_long_drain_promptly_and_the_rest_goes_out_once_after_a_restart(
    rig,
) -> None:
    """A backlog Discord takes slowly (the channel's bucket: 5 messages per 5 s) and a stop
    meanwhile (SIGTERM, as systemd sends, which kills after TimeoutStopSec=30): the bot ends
    within a few seconds, not after its 30 s drain slice; nothing is lost or posted twice."""
    rt = Runtime(str(rig.runtime_dir), str(rig.state_dir)).ensure()
    contents = [unique(f"backlog {n:02d}") for n in range(40)]
    outbox = Outbox(rt.outbox)
    for content in contents:
        outbox.enqueue(rig.ids[PROJECT], "e2e", Post(message_payload(content)))
    rig.discord.settings(rate_limits=True)
    try:
        rig.start_bot()

        def posted() -> list[str]:
            return [m["content"] for m in rig.discord.messages(rig.ids[PROJECT])]

        wait_until(lambda: len(posted()) >= 6, 30, "the drain to be under way")
        started = time.monotonic()
        rig.bot.send_signal(signal.SIGTERM)
        code = rig.bot.wait(30)
        took = time.monotonic() - started
        rig.bot = None
        assert code == 0
        assert took < 8, f"the bot took {took:.1f} s to stop"
        assert len(posted()) < len(contents)  # the stop came while the drain was under way
    finally:
        rig.discord.settings(rate_limits=False)
    rig.start_bot()
    wait_until(lambda: len(posted()) >= len(contents), 30, "the rest of the backlog")
    wait_until(lambda: outbox_entries(rig) == [], 10, "the outbox to be empty")
    assert posted() == contents  # each once, in order
