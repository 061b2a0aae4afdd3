"""Several machines, one guild: two ``discord-bridge run`` processes, as two machines would run
them (two configs, two runtime and state dirs, two tmux servers, two HOMEs with the hooks),
each with its own bot token, its own owner's channels and its own control panel channel.
Both bots see every message, thread and reaction in the guild; each must act only on its own
channels: messages, threads, prompt buttons, slash commands and panels. Same owner on both,
as one person with two machines: the owner check cannot tell the bots apart, only the
channels can."""

from __future__ import annotations

import json
import subprocess

from bridge_testkit import BridgeRig, wait_until
from fake_anthropic import echo, last_user_text, tool_use
from tests.e2e.test_decisions import custom_id

UNMAPPED = "This channel is not one of this bot's projects"  # a polite, private refusal
BOTS = ("bot_id", "second_bot_id")  # machine A's bot, machine B's bot
EPHEMERAL = 1 << 6


def machine_config(rig: BridgeRig, token: str, project: str, general: str) -> dict:
    """One machine's config: its token, one project (its channel), its panel channel."""
    raw = rig.config()
    server = raw["servers"][0]
    server["discord"]["botToken"] = token
    server["generalChannelId"] = rig.ids[general]
    server["projects"] = [p for p in server["projects"] if p["name"] == project]
    return raw


def windows(rig: BridgeRig) -> set[str]:
    """The window names on one machine's tmux server."""
    listed = subprocess.run(
        ["tmux", "-L", rig.socket, "list-panes", "-a", "-F", "#{window_name}"],
        capture_output=True,
        text=True,
    ).stdout
    return set(listed.split())


def said(rig: BridgeRig, bot: str, channel_id: str, contains: str, since: int) -> dict:
    """The first message by ``bot`` in a channel or thread containing ``contains``."""
    try:
        record = rig.discord.wait(
            since=since,
            kind="message_create",
            channel_id=channel_id,
            author_id=rig.ids[bot],
            content_contains=contains,
            timeout=90,
        )
    except TimeoutError as err:
        seen = [last_user_text(r)[:80] for r in rig.api.requests]
        raise AssertionError(f"{err}\nrequests: {seen}\n{rig.diagnostics()}") from None
    return record["message"]


def authors(rig: BridgeRig, channel_id: str) -> set[str]:
    """Which bots posted in a channel or thread for everyone to see (status messages included;
    not the ephemeral answers to slash commands, seen only by who used them)."""
    bots = {rig.ids[b] for b in BOTS}
    shown = [m for m in rig.discord.messages(channel_id) if not m["flags"] & EPHEMERAL]
    return {m["author"]["id"] for m in shown} & bots


def reacted(rig: BridgeRig, message: dict, since: int) -> set[str]:
    """Who added a reaction to ``message``."""
    return {
        r["user_id"]
        for r in rig.discord.records(since=since, kind="reaction_add")
        if r["message_id"] == message["id"]
    }


def slash(rig: BridgeRig, bot: str, channel: str, name: str = "status") -> dict:
    """Use ``bot``'s slash command in ``channel``; returns the interaction's result with the
    text the user sees (``shown``)."""
    since = rig.discord.mark()
    result = rig.discord.run_command(
        rig.ids.get(channel, channel), name, application_id=rig.ids[bot], timeout=10
    )
    assert result["application_id"] == rig.ids[bot], result
    (sent,) = rig.discord.records(since=since, kind="interaction_create")
    assert set(sent["delivered_to"]) == {rig.ids[bot]}, sent  # only that bot's gateway got it
    assert result["ephemeral"] and result["message"]["author"]["id"] == rig.ids[bot], result
    if result["response_type"] == 5:  # "thinking…", then the follow-up edits it
        record = rig.discord.wait(
            since=since,
            kind="message_update",
            interaction_id=result["interaction_id"],
            timeout=60,
        )
        result["shown"] = record["message"]["content"]
    else:
        result["shown"] = result["message"]["content"]
    return result


def test_two_machines_with_their_own_bots_never_act_on_each_others_things(rig) -> None:
    (rig.tmp / "machine-b").mkdir()
    other = BridgeRig(rig.tmp / "machine-b", rig.emu, rig.api)  # machine B
    try:
        run_two_machines(rig, other)
    finally:
        other.close()


def run_two_machines(a: BridgeRig, b: BridgeRig) -> None:
    ids, discord = a.ids, a.discord
    a.write_config(machine_config(a, a.emu.bot_token, "project-a", "general"))
    b.write_config(machine_config(b, a.emu.second_bot_token, "project-b", "general-b"))
    b_config = (b.bridge_home / "config.json").read_text()
    a.api.script(*[echo() for _ in range(3)])
    since = discord.mark()
    a.start_bot()
    b.start_bot()

    # Each bot registered its own commands and posted its own panel, listing its own project.
    for bot in BOTS:
        discord.wait(since=since, kind="commands_update", application_id=ids[bot], timeout=30)
        names = {c["name"] for cmds in discord.commands(ids[bot]).values() for c in cmds}
        assert {"status", "start", "stop"} <= names, names
    panels = {
        bot: said(a, bot, ids[channel], "project", since)
        for bot, channel in (("bot_id", "general"), ("second_bot_id", "general-b"))
    }
    assert "**project-a**" in panels["bot_id"]["content"], panels
    assert "project-b" not in panels["bot_id"]["content"], panels
    assert "**project-b**" in panels["second_bot_id"]["content"], panels
    assert "project-a" not in panels["second_bot_id"]["content"], panels

    # A message in each machine's channel, from the same owner: typed by that machine only.
    since = discord.mark()
    to_a = discord.post_message(ids["project-a"], "for machine A")
    to_b = discord.post_message(ids["project-b"], "for machine B")
    said(a, "bot_id", ids["project-a"], "Model saw: for machine A", since)
    said(a, "second_bot_id", ids["project-b"], "Model saw: for machine B", since)
    wait_until(lambda: reacted(a, to_a, since) and reacted(a, to_b, since), 30, "the ✅s")
    assert reacted(a, to_a, since) == {ids["bot_id"]}
    assert reacted(a, to_b, since) == {ids["second_bot_id"]}

    # A thread under A's channel is A's: A starts its session and answers there; B nothing.
    thread = discord.create_thread(ids["project-a"], "work")
    since = discord.mark()
    discord.post_message(thread["id"], "in A's thread")
    said(a, "bot_id", thread["id"], "Model saw: in A's thread", since)
    assert windows(a) == {"project-a", "project-a-work"}, windows(a)
    assert windows(b) == {"project-b"}, windows(b)

    # A prompt on A's channel: its buttons are A's; the click reaches A, and A alone answers.
    a.api.script(tool_use("Bash", {"command": "touch by-a.txt", "description": "Create"}), echo())
    since = discord.mark()
    discord.post_message(ids["project-a"], "make a file")
    prompt = said(a, "bot_id", ids["project-a"], "Claude wants to use", since)
    clicked = discord.click(prompt["id"], custom_id(prompt, "Allow"))
    assert clicked["application_id"] == ids["bot_id"], clicked
    assert clicked["response_type"] and not clicked["expired"], clicked
    wait_until(lambda: (a.projects["project-a"] / "by-a.txt").exists(), 60, "A's file")
    said(a, "bot_id", ids["project-a"], "Model saw:", since)
    answered = discord.records(since=since, kind="interaction_callback")
    assert {r["application_id"] for r in answered} == {ids["bot_id"]}, answered
    sent = discord.records(since=since, kind="interaction_create")
    # B never got it (the session-wide emulator may still count gateway sessions of bot A
    # left by earlier tests, hence a set)
    assert [set(r["delivered_to"]) for r in sent] == [{ids["bot_id"]}], sent
    assert not (b.projects["project-a"] / "by-a.txt").exists()

    # /status: each bot's command answers in its own channel and refuses politely elsewhere.
    assert "**project-a**" in slash(a, "bot_id", "project-a")["shown"]
    assert "**project-b**" in slash(a, "second_bot_id", "project-b")["shown"]
    for bot, channel in (("second_bot_id", "project-a"), ("bot_id", "project-b")):
        refused = slash(a, bot, channel)
        assert refused["response_type"] == 4 and refused["shown"].startswith(UNMAPPED), refused
    assert slash(a, "second_bot_id", thread["id"])["shown"].startswith(UNMAPPED)  # A's thread
    assert slash(a, "second_bot_id", "general")["shown"].startswith(UNMAPPED)  # A's panel channel

    # The owner archives A's thread: A ends its session; B does not touch it.
    since = discord.mark()
    discord.archive_thread(thread["id"])
    wait_until(lambda: windows(a) == {"project-a"}, 30, "A's thread session to end")

    # Nothing of A's reached B, nothing of B's reached A.
    assert windows(b) == {"project-b"}, windows(b)
    assert authors(a, ids["project-a"]) == {ids["bot_id"]}
    assert authors(a, thread["id"]) == {ids["bot_id"]}
    assert authors(a, ids["general"]) == {ids["bot_id"]}
    assert authors(a, ids["project-b"]) == {ids["second_bot_id"]}
    assert authors(a, ids["general-b"]) == {ids["second_bot_id"]}
    assert (b.bridge_home / "config.json").read_text() == b_config  # B listed no thread
    listed = json.loads((a.bridge_home / "config.json").read_text())
    assert [t["channelId"] for t in listed["servers"][0]["projects"][0]["threads"]] == [
        thread["id"]
    ]
    typed = [last_user_text(r) for r in a.api.requests]  # each message reached one model once
    for text in ("for machine A", "for machine B", "in A's thread", "make a file"):
        assert sum(text == t for t in typed) == 1, typed
    screen_b = b.screen("project-b")
    assert "for machine A" not in screen_b and "make a file" not in screen_b, screen_b
