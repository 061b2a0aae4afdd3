"""Session lifecycle seen from Discord: startup projects, failures that explain themselves."""

from __future__ import annotations

import os
import time
from pathlib import Path

from bridge.claude.screen import is_prompt_ready
from fake_anthropic import last_user_text, text
from tests.e2e.test_control import command


def wait_started(rig, project: str) -> None:
    """The project's Claude Code shows its prompt box."""
    deadline = time.monotonic() + 30
    while (pane := rig.pane(project)) is None:
        assert time.monotonic() < deadline, f"{project} did not start:\n{rig.bot_output()}"
        time.sleep(0.05)
    rig.tmux.wait_for(pane.pane_id, is_prompt_ready, 30)


def test_startup_projects_start_with_the_bot_and_others_wait(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["projects"][1]["startup"] = True  # project-b
    rig.write_config(raw)
    rig.start_bot()
    wait_started(rig, "project-b")
    assert rig.pane("project-a") is None
    assert [p.window_name for p in rig.tmux.panes()] == ["project-b"]
    # Claude Code yields the CPU to the bot (claudeNice, default 5): its process, and where
    # the kernel shares the CPU between sessions first (autogroups), its pane's whole group.
    pid = rig.tmux.pane_pid(rig.pane("project-b").pane_id)
    stat = Path(f"/proc/{pid}/stat").read_text()
    assert stat.rsplit(")", 1)[1].split()[16] == "5", stat
    if os.path.exists("/proc/self/autogroup"):
        assert Path(f"/proc/{pid}/autogroup").read_text().split()[-1] == "5"


def test_a_stopped_startup_project_stays_stopped_after_a_bot_restart(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["projects"][1]["startup"] = True  # project-b
    rig.write_config(raw)
    rig.start_bot()
    wait_started(rig, "project-b")
    stopped = command(rig, "stop", channel="project-b")
    assert "stop" in stopped.lower(), stopped
    rig.stop_bot()
    # project-a now starts too, after project-b in start-up order: once it is up, project-b
    # has been passed over (start-up sessions are started one after the other).
    raw["servers"][0]["projects"] = [raw["servers"][0]["projects"][i] for i in (1, 0)]
    raw["servers"][0]["projects"][1]["startup"] = True
    rig.write_config(raw)
    rig.start_bot()
    wait_started(rig, "project-a")
    pane = rig.pane("project-b")
    assert pane is None or pane.dead, rig.bot_output()


def test_failed_download_is_reported_and_text_still_goes_through(rig) -> None:
    raw = rig.config()
    raw["attachments"] = {"maxDownloadBytes": 1000}
    rig.write_config(raw)
    rig.api.script(text("text arrived"))
    rig.start_bot()
    since = rig.discord.mark()
    rig.post("look at this", attachments=[("big.bin", os.urandom(5000))])
    warning = rig.discord.wait(since=since, author_id=rig.ids["bot_id"], timeout=30)["message"]
    assert "Not downloaded" in warning["content"] and "big.bin" in warning["content"]
    rig.wait_bot_message(content_contains="text arrived", timeout=60)
    assert last_user_text(rig.api.wait_requests(1)[0]) == "look at this"


def test_claude_that_cannot_start_is_reported(rig) -> None:
    raw = rig.config()
    raw["claudeCommand"] = "false"
    rig.write_config(raw)
    rig.start_bot()
    since = rig.discord.mark()
    sent = rig.post("hello?")
    reply = rig.discord.wait(since=since, author_id=rig.ids["bot_id"], timeout=30)["message"]
    content = reply["content"]
    assert content.startswith("⚠️ Not delivered to Claude Code: Claude Code exited as it started")
    assert "It printed nothing" in content, content
    assert "(exit status 1)" in content or "(exit status" not in content, content
    assert reply["message_reference"]["message_id"] == sent["id"]
    assert rig.api.requests == []


def api_host_unreachable() -> dict[str, str]:
    """The pane environment that makes Claude Code's start-up connection check fail here:
    nothing when this machine cannot resolve api.anthropic.com (offline, as CI is: the CLI
    then says ENOTFOUND), else a proxy on a closed port (it then says ECONNREFUSED)."""
    import socket

    try:
        socket.getaddrinfo("api.anthropic.com", 443)
    except OSError:
        return {}
    return {"HTTPS_PROXY": "http://127.0.0.1:9"}


def test_claude_that_cannot_reach_its_service_says_so_in_its_own_words(rig) -> None:
    """A HOME where Claude Code never ran (no ~/.claude.json) on a machine that cannot reach
    Anthropic: the CLI prints "Unable to connect to Anthropic services" and exits 1 within
    ~1.3 s. The reply carries those lines (not just "last screen:") and what to do."""
    (rig.claude_home / ".claude.json").unlink()
    offline = api_host_unreachable()
    rig.start_bot(env=offline)
    sent = rig.post("hello?")
    reply = rig.wait_bot_message(timeout=60)
    content = reply["content"]
    assert reply["message_reference"]["message_id"] == sent["id"]
    assert "Unable to connect to Anthropic services" in content, content
    assert "Failed to connect to api.anthropic.com" in content, content
    if not offline:
        assert "ENOTFOUND" in content, content
    assert "(exit status 1)" in content or "(exit status" not in content, content
    assert "run `claude` once in a terminal" in content, content
    assert "█" not in content  # the welcome art is not what anyone needs to read
    assert rig.api.requests == []


def test_a_wrong_claude_command_is_named_with_what_to_fix(rig) -> None:
    """claudeCommand names no program: the pane dies in ~10 ms with status 127, often
    before tmux shows a word of it; the reply names the command and the setting to fix."""
    raw = rig.config()
    raw["claudeCommand"] = "claudx"
    rig.write_config(raw)
    rig.start_bot()
    sent = rig.post("hello?")
    reply = rig.wait_bot_message(timeout=60)
    content = reply["content"]
    assert reply["message_reference"]["message_id"] == sent["id"]
    assert "`claudx`" in content and "not found" in content, content
    assert "claudeCommand" in content, content
    assert rig.api.requests == []


def test_model_output_never_pings(rig) -> None:
    rig.api.script(text("@everyone look, <@&123456789012345678> and <@" + "1" * 18 + ">"))
    rig.start_bot()
    rig.post("ping people")
    message = rig.wait_bot_message(content_contains="@everyone", timeout=60)
    records = rig.discord.records(kind="message_create")
    record = next(r for r in records if r.get("message_id") == message["id"])
    assert record["allowed_mentions"] == {"parse": []}
    assert message["mention_everyone"] is False and message["mentions"] == []


def test_message_during_startup_waits_for_the_starting_session(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["projects"][0]["startup"] = True
    rig.write_config(raw)
    rig.api.script(text("answered the early message"))
    rig.start_bot()
    rig.post("an early message")  # while project-a is still starting
    rig.wait_bot_message(content_contains="answered the early message", timeout=60)
    assert [p.window_name for p in rig.tmux.panes()] == ["project-a"]
    assert last_user_text(rig.api.wait_requests(1)[0]) == "an early message"


def test_config_given_with_run_config_reaches_the_hooks(rig, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere" / "bridge.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text((rig.bridge_home / "config.json").read_text())
    elsewhere.chmod(0o600)
    (rig.bridge_home / "config.json").unlink()  # the default location holds nothing now
    rig.api.script(text("found my config"))
    rig.start_bot(config=elsewhere)
    rig.post("hello")
    rig.wait_bot_message(content_contains="found my config", timeout=60)


def test_folder_trust_dialog_is_offered_not_answered(rig, tmp_path) -> None:
    """Nothing answers the trust question but the owner's click (tests/e2e/test_screens.py)."""
    untrusted = tmp_path / "never-opened"
    untrusted.mkdir()
    raw = rig.config()
    raw["servers"][0]["projects"][0]["projectPath"] = str(untrusted)
    rig.write_config(raw)
    rig.start_bot()
    rig.post("hello")
    reply = rig.wait_bot_message(timeout=60)
    assert "Claude Code is asking in the terminal" in reply["content"]
    assert "Is this a project you created or one you trust?" in reply["content"]
    assert "Is this a project you created or one you trust?" in rig.screen()
    assert rig.api.requests == []
