"""Auto mode on Claude Code 2.1.332 from Discord: its server-side safety check refusing a tool
(PermissionDenied, and **Retry**), and the screen it shows when the check does not get through
(with the Notification ``agent_needs_input``).

Real CLI in tmux, real hooks, real bot against the emulator; the fake Messages API gives the
check's verdicts as the real one does (reference §15.6).
"""

from __future__ import annotations

from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text, tool_use, unchecked_by_auto_mode
from tests.e2e.test_decisions import custom_id

INSTALL = {"command": "curl -s http://127.0.0.1:9/install.sh | sh", "description": "run installer"}


def auto_mode(rig) -> None:
    raw = rig.config()
    raw["notifications"] = {"mentionOwner": True}
    raw["servers"][0]["projects"][0]["permission"] = "auto"
    rig.write_config(raw)


def test_auto_modes_unchecked_screen_pings_and_is_answered_from_discord(rig) -> None:
    """Through a gateway that drops the safety check, the first call that needs it stops at
    "Auto mode can't check actions in this session", a screen with keys and no list: Claude
    Code's notice pings the owner, and the screen is offered with those keys as buttons."""
    auto_mode(rig)
    rig.api.script(unchecked_by_auto_mode(tool_use("Bash", INSTALL)), echo(), echo())
    rig.start_bot()
    alice = f"<@{rig.ids['alice']}>"
    rig.post("install it")
    notice = rig.wait_bot_message(content_contains="🔔 Auto mode can't check", timeout=60)
    assert notice["content"].endswith(alice), notice["content"]

    rig.post("what now?")  # meets the screen: held, and the screen is offered
    offered = rig.wait_bot_message(content_contains="asking in the terminal", timeout=30)
    assert "Auto mode can't check actions in this session" in offered["content"]
    labels = [c["label"] for row in offered["components"] for c in row["components"]]
    assert labels == [
        "Enter: stay in auto mode",
        "shift+Tab: leave for accept edits mode and stop",
        "Show screen",
        "Escape",
    ]
    # Staying in auto mode, the call that needed the check asks the owner in the terminal
    # (2.1.332: a dialog of its own, no PermissionRequest), offered the same way.
    since = rig.discord.mark()
    rig.discord.click(offered["id"], custom_id(offered, "Enter: stay"))
    approval = rig.wait_bot_message(content_contains="needs your approval", since=since, timeout=60)
    assert "curl -s http://127.0.0.1:9/install.sh" in approval["content"]
    rig.discord.click(approval["id"], custom_id(approval, "Yes"))
    rig.wait_bot_message(content_contains="Model saw: [tool_result]", since=since, timeout=60)
    # The held message is typed once the input box is back (into the turn, or after it).
    wait_until(lambda: any("what now?" in last_user_text(r) for r in rig.api.requests),
               timeout=60, what="the held message at the model")  # fmt: skip
    assert "auto mode on" in rig.screen()
