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
from fake_anthropic import echo, text, tool_use
from tests.e2e.test_try import (
    TryProcess,
    chromium,
    model_saw,
    open_page,
    short_state_dir,
    shot,
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
            shot(page, tmp_path, "command-options")
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
            page.set_viewport_size({"width": 390, "height": 844})
            shot(page, tmp_path, "try-phone")  # docs/try.png's right half
            page.set_viewport_size({"width": 1100, "height": 760})
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


DIFF_REPLY = "The change:\n```diff\n-    return 1\n+    return 0\n     print('hi')\n```\nDone."
# Every "(edited)" on its message's last line: beside the text before it, or after a code block.
EDITED_INLINE = """() => [...document.querySelectorAll('.message .edited')].map((span) => {
  const before = span.previousSibling;
  if (!before) return 'alone';
  if (before.nodeName === 'PRE') return 'after a code block';
  const range = document.createRange();
  range.selectNodeContents(before);
  const rects = range.getClientRects(), line = rects[rects.length - 1];
  const own = span.getBoundingClientRect();
  return own.top < line.bottom && own.bottom > line.top ? 'inline' : 'own line';
})"""
OPACITY = "(el) => getComputedStyle(el).opacity"
FITS = """() => { const box = document.querySelector('#input');
  const pen = document.createElement('canvas').getContext('2d');
  pen.font = getComputedStyle(box).font;
  return pen.measureText(box.placeholder).width <= box.clientWidth; }"""


def test_small_things(short_state_dir: str, rig: BridgeRig, tmp_path: Path) -> None:
    """ "(edited)" on the text's last line; the reaction button only on the message under the
    pointer; a diff block's lines green and red; a message over 2,000 characters refused with
    the text kept; on a phone the box's placeholder fits and the channel list closes."""
    from playwright.sync_api import expect

    project = user_project(rig)
    rig.api.script(
        tool_use("Bash", {"command": "touch made.txt", "description": "Make a file"}),
        echo(),
        text(DIFF_REPLY),
        echo(),
    )
    env = {**rig.env, "DISCORD_BRIDGE_STATE_DIR": short_state_dir}
    started = TryProcess(tmp_path, env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url())
            messages = page.locator("#messages")
            page.fill("#input", "make a file")
            page.press("#input", "Enter")
            asking = messages.locator(".message", has_text="Claude wants to use")
            asking.get_by_role("button", name="Allow", exact=True).click()
            asking.locator(".edited").wait_for()  # "Allowed by you", by an edit
            messages.locator(".content", has_text=re.compile(r"^Model saw:")).wait_for()
            places = page.evaluate(EDITED_INLINE)
            assert places and set(places) <= {"inline", "after a code block"}, places

            page.fill("#input", "change the exit code")
            page.press("#input", "Enter")
            said = page.locator(".content", has_text=re.compile(r"^The change:"))
            reply = messages.locator(".message", has=said)  # (not the status quoting it)
            reply.locator("code.diff").wait_for()
            assert reply.locator(".diff-add").inner_text() == "+    return 0"
            assert reply.locator(".diff-del").inner_text() == "-    return 1"
            green = reply.locator(".diff-add").evaluate("(el) => getComputedStyle(el).color")
            assert green == "rgb(59, 165, 93)", green
            page.mouse.move(5, 700)
            shot(page, tmp_path, "try-desktop")  # docs/try.png's left half

            add = reply.locator("details.add-reaction summary")
            page.mouse.move(5, 700)  # the pointer off the messages
            assert add.evaluate(OPACITY) == "0"
            reply.hover()
            assert add.evaluate(OPACITY) == "1"

            long = "x" * 5000
            page.fill("#input", long)
            page.press("#input", "Enter")
            page.locator("#toast", has_text="too long").wait_for()
            assert "2000" in page.locator("#toast").inner_text()
            assert page.input_value("#input") == long  # kept, to be shortened
            assert page.locator("#counter.over").inner_text() == "-3000"

            page.set_viewport_size({"width": 390, "height": 844})
            page.fill("#input", "")
            # (the hint goes on matchMedia's change event, which comes after the resize returns:
            # a fresh-clone run read the desktop placeholder still there)
            expect(page.locator("#input")).to_have_attribute("placeholder", "Message #webshop")
            assert page.evaluate(FITS)
            page.click("#toggle-sidebar")
            expect(page.locator("#sidebar")).to_be_in_viewport(ratio=1)
            page.click("#close-sidebar")
            expect(page.locator("#sidebar")).not_to_be_in_viewport()

            page.fill("#input", "short one")
            page.press("#input", "Enter")
            messages.locator(".content", has_text=re.compile(r"^Model saw: short one")).wait_for()
            assert "xxxx" not in str(rig.api.wait_requests(4)[3])  # the long one never went
            assert errors == []
    finally:
        assert started.stop() == 0, started.output()
