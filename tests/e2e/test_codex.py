"""Codex as a project's agent, end to end: the real bot on the emulator, the real Codex TUI
(``.cache/codex-<pinned>``) in the bot's tmux, against the scripted fake Responses API.

One project runs Claude Code (project-a) and one Codex (project-b, ``"agent": "codex"``).
``hooks install`` writes Codex's hooks.json beside Claude Code's settings; Codex shows its
"Hooks need review" dialog on its first start, which comes to the channel as a screen prompt;
once trusted, a message is typed into Codex's input box and its reply is posted from Stop.
"""

from __future__ import annotations

import json
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.codex import versions
from bridge_testkit.codex_rig import codex_binary, config_toml
from bridge_testkit.rig import is_status, wait_until
from fake_openai import FakeOpenAI, exec_command, last_user_text, text
from tests.e2e.test_decisions import components, custom_id, wait_closed

ASKING = "Codex is asking in the terminal"


@pytest.fixture
def openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as api:
        yield api


@pytest.fixture
def codex_rig(request, tmp_path, emulator, fake_api, openai) -> Iterator:
    """The rig with project-b on Codex (the pinned version, or the test's parameter)."""
    from bridge_testkit import BridgeRig

    version = getattr(request, "param", versions.PINNED)
    emulator.client.reset()
    fake_api.reset()
    fake_api.admit_only(uuid.uuid4().hex[:12])  # this test's Claude Codes only
    rig = BridgeRig(tmp_path, emulator, fake_api)
    codex_home = rig.claude_home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(config_toml(openai.base_url, rig.projects["project-b"]))
    settings = rig.claude_home / ".claude" / "settings.json"
    hooks = codex_home / "hooks.json"
    rig.cli("hooks", "install", "--settings", str(settings), "--codex-hooks", str(hooks))
    raw = rig.config()
    codex_project = raw["servers"][0]["projects"][1]
    codex_project.update(agent="codex", codexCommand=str(codex_binary(version)))
    rig.write_config(raw)
    rig.openai = openai
    rig.codex_hooks = hooks
    yield rig
    rig.close()
    end_leftovers(codex_home)


def end_leftovers(codex_home: Path) -> None:
    """Whatever still names this test's CODEX_HOME (an app-server daemon), ended by PID."""
    marker = str(codex_home).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in cmdline:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except ProcessLookupError:
                pass


def start_trusted(rig, first: str) -> dict:
    """Start the bot, send ``first`` to the Codex channel, trust the hooks from Discord."""
    rig.start_bot(env={"FAKE_OPENAI_KEY": "sk-fake"})
    sent = rig.post(first, project="project-b")
    prompt = rig.wait_bot_message("project-b", content_contains=ASKING, timeout=90)
    assert "Hooks need review" in prompt["content"]
    labels = [c["label"] for c in components(prompt)]
    assert labels[:3] == [
        "Review hooks",
        "Trust all and continue",
        "Continue without trusting (hooks won't run)",
    ]
    assert first not in rig.screen("project-b")  # held, not typed into the dialog
    rig.discord.click(prompt["id"], custom_id(prompt, "Trust all and continue"))
    assert "**Trust all and continue**, chosen by" in wait_closed(rig, prompt)["content"]
    return sent


def test_hooks_install_writes_codexs_hooks_file(codex_rig) -> None:
    written = json.loads(codex_rig.codex_hooks.read_text())["hooks"]
    assert {"Stop", "PermissionRequest", "PreToolUse", "UserPromptSubmit"} <= set(written)
    assert written["Stop"][0]["hooks"][0]["command"].endswith("# discord-bridge")


@pytest.mark.parametrize("codex_rig", versions.TESTED, indirect=True)
def test_a_message_is_typed_into_codex_and_its_reply_posted(codex_rig) -> None:
    rig = codex_rig
    rig.openai.script(text("Hello from Codex."))
    sent = start_trusted(rig, "hello codex")
    reply = rig.wait_bot_message("project-b", content_contains="Hello from Codex.", timeout=90)
    assert reply["content"] == "Hello from Codex."
    (request,) = rig.openai.wait_requests(1, timeout=30)
    assert last_user_text(request) == "hello codex"
    rig.wait_reaction(sent)
    assert "OpenAI Codex" in rig.screen("project-b")


def test_a_command_codex_asks_for_is_allowed_then_one_denied_from_discord(codex_rig) -> None:
    rig = codex_rig
    project = rig.projects["project-b"]
    rig.openai.script(
        exec_command("touch allowed.txt", escalate="to write allowed.txt"),
        text("Allowed one done."),
    )
    start_trusted(rig, "make allowed.txt")
    prompt = rig.wait_bot_message("project-b", content_contains="touch allowed.txt", timeout=90)
    # Codex asking, the command as the TUI shows it, with Codex's justification
    assert prompt["content"] == (
        "🔐 **Codex wants to use `Bash`**\n> to write allowed.txt\n```sh\ntouch allowed.txt\n```"
    )
    labels = [c["label"] for c in components(prompt)]
    assert labels == ["Allow", "Deny", "Tell Codex what to do instead…"]
    rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    rig.wait_bot_message("project-b", content_contains="Allowed one done.", timeout=90)
    assert (project / "allowed.txt").exists()

    since = rig.discord.mark()
    rig.openai.script(
        exec_command("touch denied.txt", escalate="to write denied.txt"),
        text("Denied one noted."),
    )
    rig.post("make denied.txt", project="project-b")
    prompt = rig.wait_bot_message(
        "project-b", content_contains="touch denied.txt", timeout=90, since=since
    )
    rig.discord.click(prompt["id"], custom_id(prompt, "Deny"))
    rig.wait_bot_message("project-b", content_contains="Denied one noted.", timeout=90)
    assert not (project / "denied.txt").exists()
    wait_until(lambda: len(rig.openai.requests) >= 4, 30, "the denial's output")
    told = json.dumps(rig.openai.requests[3])
    assert "Denied from Discord" in told or "denied" in told.lower()


def codex_status(rig, prefix: str, timeout: float = 60.0) -> dict:
    """The Codex channel's status message once it starts with ``prefix``."""
    found: list[dict] = []

    def shown() -> bool:
        found[:] = [
            m
            for m in rig.bot_messages("project-b", status=True)
            if is_status(m) and m["content"].startswith(prefix)
        ]
        return bool(found)

    wait_until(shown, timeout, f"a status {prefix!r}")
    return found[0]


def test_esc_at_the_terminal_closes_the_turns_status_as_interrupted(codex_rig) -> None:
    """Codex fires no Stop on Esc: its Interrupt hook closes the status message."""
    rig = codex_rig
    rig.openai.script(exec_command("echo working"), text("never shown", delay=60))
    start_trusted(rig, "a long one")
    codex_status(rig, "⏳")
    wait_until(lambda: len(rig.openai.requests) >= 2, 60, "the slow second request")
    rig.tmux.press(rig.pane("project-b").pane_id, "Escape")
    closed = codex_status(rig, "⏹ Interrupted")
    assert "1 tool" in closed["content"]
    assert not any("never shown" in m["content"] for m in rig.bot_messages("project-b"))


def test_a_thread_of_a_codex_channel_runs_a_codex_session_of_its_own(codex_rig) -> None:
    rig = codex_rig
    rig.openai.script(text("Parent answer."), text("Thread answer."))
    start_trusted(rig, "in the parent")
    parent = rig.ids["project-b"]
    rig.wait_bot_message("project-b", content_contains="Parent answer.", timeout=90)
    thread = rig.discord.create_thread(parent, "codex side task")
    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "in the thread")
    # its hooks were trusted in the parent's session: no review again, the reply comes
    rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=thread["id"],
        author_id=rig.ids["bot_id"],
        content_contains="Thread answer.",
        timeout=90,
    )
    assert last_user_text(rig.openai.requests[-1]) == "in the thread"
    panes = {p.window_name: p for p in rig.tmux.panes()}
    assert "OpenAI Codex" in rig.tmux.capture(panes["project-b-codex-side-task"].pane_id)
    in_parent = [m["content"] for m in rig.discord.messages(parent)]
    assert not any("Thread answer." in c for c in in_parent)


def test_a_bot_restart_between_codexs_request_and_the_click(codex_rig) -> None:
    """The PermissionRequest hook waits on its decision file, not on the bot: a click after
    the bot came back still reaches Codex."""
    rig = codex_rig
    project = rig.projects["project-b"]
    rig.openai.script(
        exec_command("touch after-restart.txt", escalate="to write after-restart.txt"),
        text("Ran after the restart."),
    )
    start_trusted(rig, "make after-restart.txt")
    prompt = rig.wait_bot_message("project-b", content_contains="after-restart.txt", timeout=90)
    assert rig.stop_bot() == 0
    rig.start_bot(env={"FAKE_OPENAI_KEY": "sk-fake"})
    rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    rig.wait_bot_message("project-b", content_contains="Ran after the restart.", timeout=90)
    assert (project / "after-restart.txt").exists()


def test_question_marks_and_a_long_message_reach_codex_whole(codex_rig) -> None:
    """Typed as keys, a `?` that reaches Codex's box while it looks empty (the first key, or
    the second while Codex holds the first to tell a paste) opens its shortcuts instead, and a
    loaded machine lost a later one too: the bridge pastes Codex's text, in pieces too small
    for a "[Pasted Content]" placeholder, and its line breaks stay line breaks."""
    rig = codex_rig
    rig.openai.script(text("First answered."), text("Second answered."))
    first = "? is this whole?"
    start_trusted(rig, first)  # typed right after the hooks review is answered
    rig.wait_bot_message("project-b", content_contains="First answered.", timeout=90)
    assert last_user_text(rig.openai.wait_requests(1, timeout=30)[0]) == first
    line = "Is a long line still whole? It has questions and marks: ?!#%&*()[]{}<>~ "
    second = "\n".join(f"Line {n}: {line * 3}" for n in range(6)) + "\nLast one?"
    assert len(second) > 1000  # a paste that large would show as a placeholder
    rig.post(second, project="project-b")
    rig.wait_bot_message("project-b", content_contains="Second answered.", timeout=90)
    assert last_user_text(rig.openai.wait_requests(2, timeout=30)[1]) == second


def test_a_codex_command_that_is_not_there_is_named_in_codexs_terms(rig) -> None:
    """A Codex project whose codexCommand names no program: the reply names Codex, the
    command and the setting to fix, not Claude Code's."""
    raw = rig.config()
    raw["servers"][0]["projects"][0].update(agent="codex", codexCommand="codx")
    rig.write_config(raw)
    rig.start_bot()
    sent = rig.post("hello?")
    reply = rig.wait_bot_message(timeout=60)
    content = reply["content"]
    assert reply["message_reference"]["message_id"] == sent["id"]
    assert content.startswith("⚠️ Not delivered to Codex: the Codex command was not found")
    assert "`codx` was not found: set `codexCommand`" in content, content
    assert "Claude" not in content and "claudeCommand" not in content, content
    logged = rig.bot_log.read_text()
    assert "starting Codex for project-a" in logged
    assert "Codex for project-a did not start" in logged


def test_a_command_in_a_codex_channel_with_no_session_names_codex(rig) -> None:
    from tests.e2e.test_control import command

    raw = rig.config()
    raw["servers"][0]["projects"][0].update(agent="codex", codexCommand="codx")
    rig.write_config(raw)
    rig.start_bot()
    assert command(rig, "peek") == "No Codex is running here; /start or send a message first."
