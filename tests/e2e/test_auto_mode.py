"""Auto mode on Claude Code 2.1.332 from Discord: its server-side safety check refusing a tool
(PermissionDenied, and **Retry**), and the screen it shows when the check does not get through
(with the Notification ``agent_needs_input``).

Real CLI in tmux, real hooks, real bot against the emulator; the fake Messages API gives the
check's verdicts as the real one does.
"""

from __future__ import annotations

from bridge_testkit import wait_until
from fake_anthropic import (
    echo,
    last_user_text,
    refused_by_auto_mode,
    tool_use,
    unchecked_by_auto_mode,
)
from tests.e2e.test_decisions import components, custom_id, wait_closed

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
    wait_until(
        lambda: any("what now?" in last_user_text(r) for r in rig.api.requests),
        timeout=60,
        what="the held message at the model",
    )
    assert "auto mode on" in rig.screen()


def test_a_refused_call_is_said_and_retried_only_when_the_owner_asks(rig) -> None:
    """Auto mode's check refuses a call (PermissionDenied): the channel says what and why,
    and **Let Claude try again** lets the model make it once more (the check judges it
    again: here it passes). With ``prompts.retryWaitSeconds: 0`` the notice comes alone and
    nothing waits."""
    auto_mode(rig)
    rig.api.script(
        refused_by_auto_mode(tool_use("Bash", INSTALL), "FAKE: piping a download into sh"),
        tool_use("Bash", INSTALL),  # the model tries again; the check lets it pass
        echo(),
        refused_by_auto_mode(tool_use("Bash", INSTALL), "FAKE: still risky"),
        echo(),
    )
    rig.start_bot()
    alice = f"<@{rig.ids['alice']}>"
    rig.post("install it")
    notice = rig.wait_bot_message(content_contains="Auto mode blocked", timeout=60)
    content = notice["content"]
    assert content.startswith(alice) and "curl -s http://127.0.0.1:9/install.sh" in content
    assert "> Auto mode: FAKE: piping a download into sh" in content
    labels = [c["label"] for c in components(notice)]
    assert labels == ["Let Claude try again", "Go on without it"]
    rig.discord.click(notice["id"], custom_id(notice, "Let Claude try again"))
    assert "**Claude may try again**" in wait_closed(rig, notice)["content"]
    reply = rig.wait_bot_message(content_contains="Model saw: [tool_result]", timeout=60)
    assert "is_error" not in reply["content"]  # the second call ran
    told = last_user_text(rig.api.requests[1], keep_reminders=True)
    assert "The refusal above is not final for this call" in told, told

    raw = rig.config()
    raw["prompts"] = {"retryWaitSeconds": 0}
    auto_mode_config = raw["servers"][0]["projects"][0]
    auto_mode_config["permission"] = "auto"
    rig.write_config(raw)
    rig.post("install it again")
    notice = rig.wait_bot_message(content_contains="Auto mode blocked", timeout=60)
    assert "> Auto mode: FAKE: still risky" in notice["content"]
    assert not notice.get("components")
    reply = rig.wait_bot_message(content_contains="Model saw: [tool_result is_error]", timeout=60)
    assert "denied by the Claude Code auto mode classifier" in reply["content"]
