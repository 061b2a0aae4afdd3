"""The page of ``discord-bridge try`` acts as a second user: bob, whose *drivers* role drives
but may not approve. Switched to bob, a message is typed into Claude Code but his Allow is
refused (privately, nothing decided); switched back, the owner's Allow is taken."""

from __future__ import annotations

from pathlib import Path

from bridge_testkit import BridgeRig
from fake_anthropic import echo, tool_use
from tests.e2e.test_try import TryProcess, chromium, model_saw, open_page, user_project


def test_try_roles_page(rig: BridgeRig, tmp_path: Path) -> None:
    """(A short name: the bot's hand-off socket lives under the test's directory.)"""
    project = user_project(rig)
    rig.api.script(
        tool_use("Bash", {"command": "touch by-owner.txt", "description": "Create a file"}),
        echo(),
    )
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url())
            messages = page.locator("#messages")
            switcher = page.locator("#act-as")
            assert "Bob (drivers)" in switcher.inner_text()
            switcher.select_option(index=1)

            page.fill("#input", "make a file")
            page.press("#input", "Enter")
            assert model_saw(rig, 1) == "make a file"  # bob drives
            prompt = messages.locator(".message", has_text="Create a file").last
            prompt.get_by_role("button", name="Allow", exact=True).click()
            messages.locator(".message.ephemeral", has_text="You may not approve in").wait_for()
            assert not (project / "by-owner.txt").exists()

            switcher.select_option(index=0)
            prompt.get_by_role("button", name="Allow", exact=True).click()
            prompt.locator(".content", has_text="Allowed").wait_for()
            assert "[tool_result]" in model_saw(rig, 2)
            assert (project / "by-owner.txt").exists()
            assert not errors, errors
    finally:
        assert started.stop() == 0, started.output()
