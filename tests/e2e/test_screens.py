"""Screens no hook reports, answered from Discord: folder trust, the bypass-permissions warning.

The real CLI in tmux with a HOME that has not trusted the project folder, or has not accepted
bypass mode: the first Discord message meets the screen, which comes back to the channel as a
prompt (its question, its options, Show screen, Escape); a click presses the keys, and the held
message is then typed and answered by the fake model.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from bridge_testkit.rig import wait_until
from fake_anthropic import echo, last_user_text
from tests.e2e.test_decisions import REFUSED, components, current_message, custom_id, wait_closed

SCREEN = "Claude Code is asking in the terminal"


def make_rig(tmp_path, emulator, fake_api, **options) -> Iterator:
    from bridge_testkit import BridgeRig

    emulator.client.reset()
    fake_api.reset()
    fake_api.admit_only(uuid.uuid4().hex[:12])  # this test's Claude Codes only
    bridge = BridgeRig(tmp_path, emulator, fake_api, **options)
    yield bridge
    bridge.close()


@pytest.fixture
def untrusted_rig(tmp_path, emulator, fake_api):
    yield from make_rig(tmp_path, emulator, fake_api, trust=False)


@pytest.fixture
def bypass_rig(tmp_path, emulator, fake_api):
    yield from make_rig(tmp_path, emulator, fake_api, accept_bypass=False)


@pytest.fixture
def key_rig(tmp_path, emulator, fake_api):
    yield from make_rig(tmp_path, emulator, fake_api, approve_key=False)


def labels(message: dict) -> list[str]:
    return [c["label"] for c in components(message)]


def test_folder_trust_is_answered_from_discord(untrusted_rig) -> None:
    rig = untrusted_rig
    rig.api.script(echo(prefix="Model saw: "), echo(prefix="Then saw: "))
    rig.start_bot()
    sent = rig.post("hello from a new folder")
    prompt = rig.wait_bot_message(content_contains=SCREEN, timeout=60)
    assert "Is this a project you created or one you trust?" in prompt["content"]
    assert str(rig.projects["project-a"]) in prompt["content"]
    assert labels(prompt) == ["No, exit", "Yes, I trust this folder", "Show screen", "Escape"]
    assert "✅" not in rig.discord.reactions(sent["channel_id"], sent["id"])
    assert "hello from a new folder" not in rig.screen()

    yes = custom_id(prompt, "Yes, I trust")
    refused = rig.discord.click(prompt["id"], yes, user="bob")
    assert refused["ephemeral"] and refused["message"]["content"] == REFUSED
    assert current_message(rig, prompt)["components"]  # nothing pressed
    assert "Yes, I trust this folder" in rig.screen()

    shown = rig.discord.click(prompt["id"], custom_id(prompt, "Show screen"))
    assert shown["ephemeral"] and "Yes, I trust this folder" in shown["message"]["content"]

    assert rig.stop_bot() == 0  # the prompt and the held messages survive a bot restart
    rig.start_bot()
    second = rig.post("and a second one")
    assert "Held" in rig.wait_bot_message(content_contains="Held")["content"]  # no 2nd prompt
    assert sum(SCREEN in m["content"] for m in rig.bot_messages()) == 1

    chosen = rig.discord.click(prompt["id"], yes)
    assert chosen["response_type"] == 6  # acknowledged at once, the prompt edited after
    closed = wait_closed(rig, prompt)
    assert "**Yes, I trust this folder**, chosen by" in closed["content"]
    answer = rig.wait_bot_message(content_contains="Model saw:", timeout=60, since=0)
    assert "hello from a new folder" in answer["content"]  # typed first, as sent
    rig.wait_reaction(sent)
    rig.wait_reaction(second)
    wait_until(lambda: any("and a second one" in str(r) for r in rig.api.requests), 30, "2nd")
    typed = [r for r in rig.api.requests if "hello from a new folder" in last_user_text(r)]
    assert len(typed) == 1  # typed exactly once


def test_a_changed_screen_is_not_answered(untrusted_rig) -> None:
    rig = untrusted_rig
    rig.api.script(echo(prefix="Model saw: "))
    rig.start_bot()
    sent = rig.post("first words")
    prompt = rig.wait_bot_message(content_contains=SCREEN, timeout=60)
    rig.tmux.press(rig.pane().pane_id, "Down")  # the owner answers at the terminal…
    rig.tmux.press(rig.pane().pane_id, "Enter")
    rig.tmux.wait_for(rig.pane().pane_id, lambda s: "trust this folder" not in s, 30)
    stale = rig.discord.click(prompt["id"], custom_id(prompt, "No, exit"))  # …then clicks "No"
    assert stale["response_type"] == 6
    assert "no longer on display" in wait_closed(rig, prompt)["content"]
    assert rig.pane() is not None and not rig.pane().dead  # "No, exit" was not pressed
    rig.wait_reaction(sent)  # the held message went in once the box was back
    assert "first words" in rig.wait_bot_message(content_contains="Model saw:")["content"]


def test_escape_on_the_trust_screen_ends_claude_and_says_so(untrusted_rig) -> None:
    rig = untrusted_rig
    rig.start_bot()
    sent = rig.post("never typed")
    prompt = rig.wait_bot_message(content_contains=SCREEN, timeout=60)
    since = rig.discord.mark()
    pressed = rig.discord.click(prompt["id"], custom_id(prompt, "Escape"))
    assert pressed["response_type"] == 6
    assert "**Escape** pressed by" in wait_closed(rig, prompt)["content"]
    notice = rig.wait_bot_message(content_contains="exited", since=since)
    assert "1 held message(s) were not typed" in notice["content"]
    assert "✅" not in rig.discord.reactions(sent["channel_id"], sent["id"])
    assert rig.api.requests == []


def test_bypass_warning_on_first_use_is_answered_from_discord(bypass_rig) -> None:
    rig = bypass_rig
    raw = rig.config()
    raw["servers"][0]["projects"][0]["permission"] = "bypassPermissions"
    rig.write_config(raw)
    rig.api.script(echo(prefix="Model saw: "))
    rig.start_bot()
    sent = rig.post("go fast")
    prompt = rig.wait_bot_message(content_contains=SCREEN, timeout=60)
    assert "Bypass Permissions mode" in prompt["content"]
    assert labels(prompt) == ["No, exit", "Yes, I accept", "Show screen", "Escape"]
    rig.discord.click(prompt["id"], custom_id(prompt, "Yes, I accept"))
    assert "**Yes, I accept**, chosen by" in wait_closed(rig, prompt)["content"]
    assert "go fast" in rig.wait_bot_message(content_contains="Model saw:", timeout=60)["content"]
    rig.wait_reaction(sent)
    assert "bypass permissions on" in rig.screen()


def test_api_key_question_is_answered_against_its_default(key_rig) -> None:
    rig = key_rig
    rig.api.script(echo(prefix="Model saw: "))
    rig.start_bot()
    sent = rig.post("use the key")
    prompt = rig.wait_bot_message(content_contains=SCREEN, timeout=60)
    assert "Do you want to use this API key?" in prompt["content"]
    assert labels(prompt) == ["Yes", "No (recommended)", "Show screen", "Escape"]
    rig.discord.click(prompt["id"], custom_id(prompt, "Yes"))  # Up, then Enter
    assert "**Yes**, chosen by" in wait_closed(rig, prompt)["content"]
    assert (
        "use the key" in rig.wait_bot_message(content_contains="Model saw:", timeout=60)["content"]
    )
    rig.wait_reaction(sent)


def test_mcp_server_approval_ticks_in_place_then_enables(rig) -> None:
    servers = {"demo": {"command": "/bin/true"}, "other": {"command": "/bin/true"}}
    (rig.projects["project-a"] / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    rig.api.script(echo(prefix="Model saw: "))
    rig.start_bot()
    sent = rig.post("with servers")
    prompt = rig.wait_bot_message(content_contains=SCREEN, timeout=60)
    assert "2 new MCP servers found in this project" in prompt["content"]
    assert labels(prompt) == ["[✔] demo", "[✔] other", "Enable selected", "Show screen", "Escape"]

    rig.discord.click(prompt["id"], custom_id(prompt, "[✔] other"))  # untick: Down, Enter
    wait_until(lambda: "[ ] other" in labels(current_message(rig, prompt)), 10, "[ ] other")
    assert "[ ] other" in rig.screen() and "[✔] demo" in rig.screen()
    ticked = current_message(rig, prompt)
    rig.discord.click(prompt["id"], custom_id(ticked, "Enable selected"))
    assert "**Enable selected**, chosen by" in wait_closed(rig, prompt)["content"]
    assert "with servers" in rig.wait_bot_message(content_contains="Model saw:")["content"]
    rig.wait_reaction(sent)
    local = json.loads((rig.projects["project-a"] / ".claude" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["demo"], local  # "other" was unticked


def test_the_fullscreen_renderer_offer_is_answered_from_discord(rig) -> None:
    """2.1.332 may offer its fullscreen renderer at start-up, in place of the input box (the
    test HOMEs pre-answer it; CLAUDE_CODE_FORCE_FULLSCREEN_UPSELL shows it anyway). "Yes"
    restarts Claude Code in that renderer, under a new session id: the bridge goes on there."""
    rig.api.script(echo(prefix="Model saw: "), echo(prefix="Then saw: "))
    rig.start_bot(env={"CLAUDE_CODE_FORCE_FULLSCREEN_UPSELL": "1"})
    sent = rig.post("hello in full screen")
    prompt = rig.wait_bot_message(content_contains=SCREEN, timeout=60)
    assert "Try the new fullscreen renderer?" in prompt["content"]
    assert labels(prompt) == ["1. Yes, try it", "2. Not now", "Show screen", "Escape"]
    rig.discord.click(prompt["id"], custom_id(prompt, "1. Yes, try it"))
    assert "**Yes, try it**, chosen by" in wait_closed(rig, prompt)["content"]
    answer = rig.wait_bot_message(content_contains="Model saw:", timeout=60)
    assert "hello in full screen" in answer["content"]
    rig.wait_reaction(sent)
    rig.post("and again")
    assert "and again" in rig.wait_bot_message(content_contains="Then saw:")["content"]
