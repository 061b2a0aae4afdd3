"""The reply is posted at once; its footer comes in by an edit when the turn's record lands.

The real Stop hook command (as Claude Code runs it), the real bot, the emulator; the transcript
and the statusLine cache are files the test writes, so that the record of the reply lands
exactly when the test says (the CLI writes it around the hook's start, sometimes after).
With the footer and the owner's mention on (the defaults). Then one real turn of the CLI.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid

from bridge.handlers.reply_footer import FOOTER_WAIT
from bridge.state.runtime import Runtime
from bridge.state.status_cache import write_status
from bridge_testkit import hook_input, wait_until
from fake_anthropic import text

PROJECT = "project-a"
SESSION = "5e551017-0000-4000-8000-00000000f007"


def defaults_on(rig) -> None:
    raw = rig.config()
    raw.pop("notifications")  # the rig turns the mention off; on by default
    raw.pop("replies")  # the rig turns the footer off; on by default
    rig.write_config(raw)


def cache(rig, **figures) -> None:
    """The statusLine command's cache of the session, as it writes it."""
    record = {
        "model_id": "claude-opus-5-5",
        "model_name": "Opus 5.5",
        "context_percent": 3,
        "cost_usd": 0.43,
        "context_window_size": 100_000,
        **figures,
    }
    rt = Runtime(str(rig.runtime_dir), str(rig.state_dir)).ensure()
    write_status(rt, SESSION, record)


def record(transcript, reply: str, tokens: int) -> None:
    """The CLI's record of an answer, appended to the transcript."""
    line = {
        "type": "assistant",
        "isSidechain": False,
        "timestamp": now(),
        "message": {
            "id": f"msg_{uuid.uuid4().hex[:8]}",
            "model": "claude-opus-5-5",
            "role": "assistant",
            "content": [{"type": "text", "text": reply}],
            "usage": {
                "input_tokens": tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 7,
            },
        },
    }
    with transcript.open("a") as handle:
        handle.write(json.dumps(line) + "\n")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.999Z", time.gmtime(time.time() + 1))


def stop_hook(rig, reply: str, transcript) -> subprocess.Popen:
    settings = json.loads((rig.claude_home / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    event = hook_input(
        "Stop",
        session_id=SESSION,
        transcript_path=transcript,
        cwd=rig.projects[PROJECT],
        last_assistant_message=reply,
    )
    env = {**rig.env, "DISCORD_BRIDGE_CHANNEL_ID": rig.ids[PROJECT]}
    hook = subprocess.Popen(
        ["sh", "-c", command], stdin=subprocess.PIPE, env=env, cwd=rig.projects[PROJECT]
    )
    hook.stdin.write(json.dumps(event).encode())
    hook.stdin.close()
    return hook


def creates(rig, since: int) -> list[dict]:
    return [
        r
        for r in rig.discord.records(since=since, kind="message_create")
        if r["channel_id"] == rig.ids[PROJECT]
    ]


def edits_of(rig, since: int, message_id: str) -> list[dict]:
    return [
        r
        for r in rig.discord.records(since=since, kind="message_update")
        if r["message"]["id"] == message_id
    ]


def test_the_reply_goes_at_once_and_its_footer_comes_in_when_the_record_lands(rig) -> None:
    defaults_on(rig)
    cache(rig)  # the figures of the previous answer: ctx 3%
    transcript = rig.tmp / f"{SESSION}.jsonl"
    record(transcript, "the previous answer", 2_000)
    rig.start_bot()
    alice = rig.ids["alice"]
    since = rig.discord.mark()
    reply = f"the answer {uuid.uuid4().hex[:8]}"
    hook = stop_hook(rig, reply, transcript)

    # Posted while the transcript does not hold its record yet: with what the cache says, the
    # mention on it (the one ping), and no wait (before, the hook waited FOOTER_WAIT for it).
    posted = rig.discord.wait(
        since=since, kind="message_create", content_contains=reply, timeout=FOOTER_WAIT - 0.5
    )
    assert (
        posted["message"]["content"] == f"{reply}\n\n-# Opus 5.5 · ctx 3% · $0.43 · 🔔 <@{alice}>"
    )
    assert posted["allowed_mentions"] == {"parse": [], "users": [alice]}
    assert hook.wait(30) == 0

    record(transcript, reply, 50_000)  # the CLI writes the record: 50 % of a 100k window
    edit = rig.discord.wait(since=since, kind="message_update", timeout=FOOTER_WAIT + 5)
    assert edit["message"]["id"] == posted["message"]["id"]
    footer = "-# Opus 5.5 · ctx 50% · $0.43"
    assert edit["message"]["content"] == f"{reply}\n\n{footer} · 🔔 <@{alice}>"
    # The edit keeps the mention a mention; Discord notifies no one of an edit.
    assert edit["allowed_mentions"] == {"parse": [], "users": [alice]}
    time.sleep(0.5)
    assert len(edits_of(rig, since, posted["message"]["id"])) == 1
    # One message, so one notification: the footer never came as a message of its own.
    assert [r["message"]["id"] for r in creates(rig, since)] == [posted["message"]["id"]]


def test_a_sessions_first_reply_gets_its_footer_from_the_record_that_lands_later(rig) -> None:
    # No statusLine cache yet (the CLI refreshes it after the first answer, often after the
    # Stop hook): the reply goes with the mention alone, and the footer comes in by the edit.
    defaults_on(rig)
    transcript = rig.tmp / f"{SESSION}.jsonl"
    record(transcript, "the previous answer", 2_000)
    rig.start_bot()
    alice = rig.ids["alice"]
    since = rig.discord.mark()
    reply = f"a first answer {uuid.uuid4().hex[:8]}"
    assert stop_hook(rig, reply, transcript).wait(30) == 0
    posted = rig.discord.wait(since=since, kind="message_create", content_contains=reply)
    assert posted["message"]["content"] == f"{reply}\n\n-# 🔔 <@{alice}>"

    record(transcript, reply, 50_000)  # 25 % of the 200k window a model has by default
    edit = rig.discord.wait(since=since, kind="message_update", timeout=FOOTER_WAIT + 5)
    assert edit["message"]["id"] == posted["message"]["id"]
    assert edit["message"]["content"] == f"{reply}\n\n-# Opus 5.5 · ctx 25% · 🔔 <@{alice}>"
    assert edit["allowed_mentions"] == {"parse": [], "users": [alice]}
    assert [r["message"]["id"] for r in creates(rig, since)] == [posted["message"]["id"]]


def test_a_record_that_never_comes_leaves_the_footer_of_the_cache_and_holds_nothing_up(rig):
    defaults_on(rig)
    cache(rig)
    transcript = rig.tmp / f"{SESSION}.jsonl"
    record(transcript, "the previous answer", 2_000)
    rig.start_bot()
    since = rig.discord.mark()
    reply = f"an answer whose record never comes {uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    assert stop_hook(rig, reply, transcript).wait(30) == 0
    assert time.monotonic() - started < FOOTER_WAIT  # before, the hook waited all of it
    posted = rig.discord.wait(since=since, kind="message_create", content_contains=reply)
    assert "\n\n-# Opus 5.5 · ctx 3% · $0.43 · 🔔 <@" in posted["message"]["content"]
    wait_until(lambda: "delivered a queued message" in rig.bot_output(), 10, "the bot's post")
    time.sleep(FOOTER_WAIT + 0.5)  # the bot gave up on the record: what it knew was right
    assert edits_of(rig, since, posted["message"]["id"]) == []


def test_a_real_turn_ends_with_the_footer_of_its_own_answer(rig) -> None:
    # Whether the CLI wrote the record before the hook looked or after, the reply ends with
    # the context figure of this very answer, as the CLI's statusLine reports it after.
    defaults_on(rig)
    rig.api.script(text("the first answer"))
    rig.start_bot()
    rig.post("first question")
    posted = rig.wait_bot_message(content_regex=r"^the first answer", timeout=60)
    status = rig.runtime_dir / "status"
    wait_until(lambda: any(status.glob("*.json")), 30, "the statusLine cache")
    time.sleep(FOOTER_WAIT + 0.5)  # an edit bringing the footer in has come by then
    [final] = [m for m in rig.bot_messages() if m["id"] == posted["id"]]
    body, line = final["content"].rsplit("\n", 1)
    assert body.rstrip() == "the first answer"
    assert line.endswith(f" · 🔔 <@{rig.ids['alice']}>"), final["content"]
    (reported,) = [json.loads(p.read_text()) for p in status.glob("*.json")]
    assert line.startswith(f"-# Opus 5.5 · ctx {reported['context_percent']:.0f}%"), (
        final["content"],
        reported,
    )
