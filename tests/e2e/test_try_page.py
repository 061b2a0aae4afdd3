"""The page of ``discord-bridge try`` as a first-time user meets it, in a headless Chromium:
slash commands from the keyboard as in Discord's client (Enter, Tab, the arrows; an unknown one
said, nothing sent), the welcome, threads archived and back, and the small things Discord's
client does (``(edited)`` inline, the reaction button on hover, diff colours, the 2,000
character limit, the phone layout). The real command, bot and Claude Code CLI (against the
fake Messages API), as in ``test_try.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from bridge_testkit import BridgeRig
from fake_anthropic import echo
from tests.e2e.test_try import (
    TryProcess,
    chromium,
    model_saw,
    open_page,
    short_state_dir,
    user_project,
)

__all__ = ["short_state_dir"]  # the fixture, used by name


def test_slash_keys(short_state_dir: str, rig: BridgeRig, tmp_path: Path) -> None:
    """``/usage`` + Enter runs the command (its answer, only for the user); the arrows and Tab
    pick in the list; ``/frobnicate`` + Enter is said unknown and kept; Claude gets neither."""
    project = user_project(rig)
    rig.api.script(echo())
    env = {**rig.env, "DISCORD_BRIDGE_STATE_DIR": short_state_dir}
    started = TryProcess(tmp_path, env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url())
            messages = page.locator("#messages")
            page.locator("#input").press_sequentially("/usage")
            page.press("#input", "Enter")
            messages.locator(".message.ephemeral", has_text="Today (").wait_for()
            assert page.input_value("#input") == ""
            assert page.locator("#command-picker").is_hidden()

            page.locator("#input").press_sequentially("/p")
            picker = page.locator("#command-picker")
            first = picker.locator("div.active").inner_text()
            page.press("#input", "ArrowDown")
            second = picker.locator("div.active")
            name = second.get_attribute("data-name")
            assert second.inner_text() != first and name
            page.press("#input", "Tab")
            page.locator("#command-form", has_text="/" + name).wait_for()
            assert page.input_value("#input") == "/" + name
            page.keyboard.press("Escape")
            page.locator("#command-form").wait_for(state="hidden")

            page.fill("#input", "")
            page.locator("#input").press_sequentially("/frobnicate")
            page.press("#input", "Enter")
            page.locator("#toast", has_text="Unknown command /frobnicate").wait_for()
            assert page.input_value("#input") == "/frobnicate"  # kept, as Discord keeps it

            page.fill("#input", "hello")
            page.press("#input", "Enter")
            messages.locator(".content", has_text=re.compile(r"^Model saw:")).wait_for()
            saw = model_saw(rig, 1)
            assert "hello" in saw and "usage" not in saw and "frobnicate" not in saw, saw
            sent = messages.locator(".message:not(.ephemeral) .content")
            assert not [t for t in sent.all_inner_texts() if t.startswith("/")]
            assert errors == []
    finally:
        assert started.stop() == 0, started.output()


def test_first_visit(short_state_dir: str, rig: BridgeRig, tmp_path: Path) -> None:
    """The first visit opens on a welcome in the project's channel (what to type, three things
    to try, the docs); sending a first message puts it away for good in this browser. Typing
    in #control-panel gets the bot's answer: where to type instead."""
    project = user_project(rig)
    rig.api.script(echo())
    env = {**rig.env, "DISCORD_BRIDGE_STATE_DIR": short_state_dir}
    started = TryProcess(tmp_path, env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url())
            welcome = page.locator("#messages .welcome")
            welcome.wait_for()
            text = welcome.inner_text()
            assert "#webshop" in text and "Three things to try" in text and "README" in text
            assert welcome.locator("ol li").count() == 3
            welcome.locator("code.example", has_text="what does this project do?").click()
            assert page.input_value("#input") == "what does this project do?"
            page.press("#input", "Enter")
            page.locator(".content", has_text=re.compile(r"^Model saw:")).wait_for()
            assert welcome.count() == 0
            page.reload()
            page.locator("#status.online").wait_for()
            page.locator(".content", has_text=re.compile(r"^Model saw:")).wait_for()
            assert welcome.count() == 0  # once per browser

            page.locator("#channels li", has_text="# control-panel").click()
            page.fill("#input", "hello claude?")
            page.press("#input", "Enter")
            hint = page.locator(".message", has_text="This channel is the control panel")
            hint.wait_for()
            assert "type in #webshop" in hint.inner_text()
            assert errors == []
    finally:
        assert started.stop() == 0, started.output()


def test_archived_thread(short_state_dir: str, rig: BridgeRig, tmp_path: Path) -> None:
    """Archive says so in the header (**Unarchive**); the archived thread stays listed after a
    reload, under the channel's archived threads; a message sent in it un-archives it, as
    Discord does, and Claude answers it in the thread's resumed conversation."""
    project = user_project(rig)
    rig.api.script(echo(), echo())
    env = {**rig.env, "DISCORD_BRIDGE_STATE_DIR": short_state_dir}
    started = TryProcess(tmp_path, env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url())
            page.once("dialog", lambda dialog: dialog.accept("side quest"))
            page.click("#new-thread")
            page.locator("#channel-title", has_text="side quest").wait_for()
            page.fill("#input", "first in the thread")
            page.press("#input", "Enter")
            replies = page.locator(".content", has_text=re.compile(r"^Model saw:"))
            replies.first.wait_for()

            page.click("#archive-thread")
            page.locator("#archive-thread", has_text="Unarchive").wait_for()
            page.locator("#channel-header .archived-label").wait_for()
            page.reload()
            page.locator("#status.online").wait_for()
            thread = page.locator("#channels li.thread.archived", has_text="side quest")
            thread.wait_for()
            assert page.locator("#channels li.archived-heading").count() == 1
            thread.click()
            page.locator("#archive-thread", has_text="Unarchive").wait_for()
            page.locator(".content", has_text="first in the thread").first.wait_for()

            page.fill("#input", "back to it")
            page.press("#input", "Enter")
            page.locator("#archive-thread", has_text=re.compile("^Archive$")).wait_for()
            assert page.locator("#channel-header .archived-label").is_hidden()
            replies.filter(has_text="back to it").wait_for()
            assert "back to it" in model_saw(rig, 2)
            resumed = str(rig.api.wait_requests(2)[1])
            assert "first in the thread" in resumed  # the thread's conversation, resumed
            assert errors == []
    finally:
        assert started.stop() == 0, started.output()
