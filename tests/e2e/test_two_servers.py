"""Two servers in one config, run by one ``discord-bridge run``: two bots (two tokens) in the
emulator's guild, each with its own owner, tmux session and channels. Each relays only its
own channel (both bots see every message) and its replies go back there, posted by it."""

from __future__ import annotations

import subprocess

from bridge_testkit import TMUX_SESSION, is_status, wait_until
from fake_anthropic import echo, last_user_text

SECOND_SESSION = "bridge-e2e-second"


def windows(rig) -> set[tuple[str, str]]:
    """(tmux session, window name) of every pane on the rig's tmux server."""
    listed = subprocess.run(
        ["tmux", "-L", rig.socket, "list-panes", "-a", "-F", "#{session_name} #{window_name}"],
        capture_output=True,
        text=True,
    ).stdout
    return {tuple(line.split(" ", 1)) for line in listed.splitlines()}


def test_two_servers_each_relay_their_own_channel(rig) -> None:
    raw = rig.config()
    first = raw["servers"][0]
    project_a, project_b = first["projects"]
    first["projects"] = [project_a]
    second = {
        "name": "second",
        "discord": {
            **first["discord"],
            "botToken": rig.emu.second_bot_token,
            "ownerUserId": rig.ids["bob"],
        },
        "tmux": {"session": SECOND_SESSION},
        "projects": [project_b],
    }
    raw["servers"].append(second)
    rig.write_config(raw)
    rig.api.script(echo(), echo())
    since = rig.discord.mark()
    rig.start_bot()
    wait_until(
        lambda: len(rig.discord.records(since=since, kind="gateway_ready")) >= 2,
        20,
        "both servers to connect",
    )

    # Each server's owner only: these two are ignored (bob is not the first server's owner,
    # alice not the second's) ...
    wrong_a = rig.post("bob in a", "project-a", user="bob")
    wrong_b = rig.post("alice in b", "project-b", user="alice")
    # ... these are typed, each into its own server's tmux session, answered in its channel.
    right_a = rig.post("alice in a", "project-a", user="alice")
    right_b = rig.post("bob in b", "project-b", user="bob")
    reply_a = rig.wait_bot_message("project-a", content_contains="Model saw:", timeout=60)
    reply_b = rig.discord.wait(
        since=rig.last_post_mark,
        channel_id=rig.ids["project-b"],
        content_regex="^Model saw:",  # the reply, not the status message quoting it
        author_id=rig.ids["second_bot_id"],
        timeout=60,
    )["message"]  # the second server's reply, posted with its own token
    assert reply_a["content"] == "Model saw: alice in a", reply_a["content"]
    assert reply_b["content"] == "Model saw: bob in b", reply_b["content"]
    for message in (right_a, right_b):
        rig.wait_reaction(message)
    for message in (wrong_a, wrong_b):
        assert "✅" not in rig.discord.reactions(message["channel_id"], message["id"])
    sent = sorted(last_user_text(r) for r in rig.api.requests)
    assert sent == ["alice in a", "bob in b"], sent
    assert not any("bob in a" in str(r) or "alice in b" in str(r) for r in rig.api.requests)

    assert windows(rig) == {(TMUX_SESSION, "project-a"), (SECOND_SESSION, "project-b")}
    assert [m["content"] for m in rig.bot_messages("project-a")] == ["Model saw: alice in a"]
    second_bot = rig.ids["second_bot_id"]
    in_b = [
        (m["author"]["id"], m["content"])
        for m in rig.discord.messages(rig.ids["project-b"])
        if m["author"].get("bot") and not is_status(m)
    ]
    assert in_b == [(second_bot, "Model saw: bob in b")], in_b
