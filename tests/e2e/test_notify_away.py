"""Notify only when away: no mention while a tmux client is attached to the session and active.

Real CLI, real hooks, a real tmux client attached on a pseudo-terminal (the owner at the
desk), the emulator and the bot.
"""

from __future__ import annotations

import os
import subprocess
import time

from bridge_testkit import is_status
from bridge_testkit.rig import TMUX_SESSION
from fake_anthropic import text


def reply_pings(rig, words: str) -> bool:
    """Whether the bot's reply holding ``words`` mentions the owner (and lets it ping)."""
    rig.wait_bot_message(content_contains=words, timeout=60)
    alice = rig.ids["alice"]
    [record] = [
        r
        for r in rig.discord.records(kind="message_create")
        if words in r["message"]["content"] and not is_status(r["message"])
    ]
    allowed = record.get("allowed_mentions") or {}
    return f"<@{alice}>" in record["message"]["content"] and allowed.get("users") == [alice]


def notifications(rig, **settings: object) -> None:
    raw = rig.config()
    raw["notifications"] = {"mentionOwner": True, **settings}
    rig.write_config(raw)  # hooks read the config on every call: no restart needed


def attach_client(rig) -> subprocess.Popen:
    """``tmux attach`` on a pseudo-terminal, as the owner's terminal would."""
    primary, secondary = os.openpty()
    client = subprocess.Popen(
        ["tmux", "-L", rig.socket, "attach", "-t", TMUX_SESSION],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        start_new_session=True,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    os.close(secondary)
    deadline = time.monotonic() + 10
    while not rig.tmux_clients():
        assert time.monotonic() < deadline, "the tmux client did not attach"
        time.sleep(0.05)
    client.primary = primary  # type: ignore[attr-defined]
    return client


def test_no_mention_while_a_tmux_client_is_attached_and_active(rig) -> None:
    rig.api.script(text("one"), text("two"), text("three"), text("four"))
    notifications(rig)
    rig.start_bot()
    rig.post("hello")  # no client: away, pinged as before
    assert reply_pings(rig, "one")

    client = attach_client(rig)
    try:
        rig.post("at the desk")
        assert not reply_pings(rig, "two")  # attached and active: no ping

        notifications(rig, whenAttached=True)
        rig.post("mention me anyway")
        assert reply_pings(rig, "three")

        notifications(rig, activeWithinSeconds=1)
        time.sleep(1.5)  # attached, but nothing pressed since: away from the desk
        rig.post("gone for a coffee")
        assert reply_pings(rig, "four")
    finally:
        client.kill()  # a tmux client ignores SIGTERM while attached
        client.wait(10)
        os.close(client.primary)  # type: ignore[attr-defined]
