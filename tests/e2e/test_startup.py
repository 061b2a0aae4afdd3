"""Starting the bot before the network is up, and with a token Discord rejects: the real bot
process against the emulator, the real Claude Code CLI in tmux."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from bridge_testkit import REPO
from fake_anthropic import echo

OUTAGE_SECONDS = 15


def test_bot_started_while_discord_refuses_connections_comes_up_by_itself_and_relays(rig) -> None:
    rig.api.script(echo())
    rig.discord.set_outage("refuse")  # the main port is closed: ECONNREFUSED, like no network
    back = threading.Timer(OUTAGE_SECONDS, rig.discord.set_outage, args=(None,))
    started = time.monotonic()
    back.start()
    try:
        rig.start_bot(timeout=OUTAGE_SECONDS + 60)  # returns at the gateway's READY
    finally:
        back.cancel()
    assert time.monotonic() - started >= OUTAGE_SECONDS
    assert rig.bot.poll() is None, rig.bot_output()

    sent = rig.post("hello after the outage")
    reply = rig.wait_bot_message(content_contains="Model saw: hello after the outage", timeout=90)
    assert reply["channel_id"] == rig.ids["project-a"]
    rig.wait_reaction(sent)

    log = rig.bot_output()
    attempts = [line for line in log.splitlines() if "Discord not reachable" in line]
    assert len(attempts) >= 3, log  # 0 s, 1 s, 3 s, 7 s … while the port was closed
    assert all("Connection refused" in line and "login attempt" in line for line in attempts)
    assert "Discord answered at login attempt" in log
    assert "Traceback" not in log and "aiohttp" not in log, log


def test_a_rejected_token_exits_2_with_one_line_naming_the_server_entry(rig) -> None:
    raw = rig.config()
    good = raw["servers"][0]
    second, good["projects"] = good["projects"][1:], good["projects"][:1]
    bad = {
        **good,
        "name": "work",
        "discord": {**good["discord"], "botToken": "MTIz.rejected.token"},
        "tmux": {"session": "bridge-e2e-work"},
        "projects": second,
    }
    raw["servers"].append(bad)  # the first server logs in fine; the second is refused
    rig.write_config(raw)
    config_file = rig.bridge_home / "config.json"
    done = subprocess.run(
        [sys.executable, "-m", "bridge.cli", "run"],
        env=rig.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    mine = [line for line in done.stderr.splitlines() if line.startswith("discord-bridge:")]
    assert mine == [
        "discord-bridge: servers[1] (work): Discord rejected the bot token (401 Unauthorized); "
        f"put the bot's current token in servers[1].discord.botToken in {config_file} "
        "(Developer Portal → your application → Bot → Reset Token), then start again"
    ]
    assert rig.discord.counters().get("401 GET /users/@me") == 1  # not retried
