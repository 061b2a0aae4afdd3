"""What the bridge will rely on in the real Codex CLI, pinned on every tested version
(bridge/codex/versions.py): the real ``codex`` TUI in tmux against the fake Responses API
(``fake_openai``), with tiny hooks that write their stdin to a file (``bridge_testkit.codex_rig``).
An upgrade that changes one of these facts fails here first; docs/codex.md records them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bridge.codex import versions
from bridge_testkit.codex_rig import BUSY_MARK, CodexRig
from fake_openai import (
    FakeOpenAI,
    add_file,
    apply_patch,
    exec_command,
    text,
    usage_limit,
    user_texts,
)

EVENTS = ("UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "Interrupt")
ALLOW = {
    "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
}
PRE_DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "not this one",
    }
}
DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "Denied from Discord"},
    }
}

# The sandbox lets commands write to /tmp (where the tests live) unless told not to.
NO_TMP = "\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n"


@pytest.fixture(params=versions.TESTED, ids=lambda version: f"codex-{version}")
def codex(request, tmp_path: Path):
    """A CodexRig on each tested version (started by the test: ``start_recording``)."""
    with FakeOpenAI() as fake, CodexRig(tmp_path, fake, request.param) as rig:
        yield rig
    assert rig.leftover_pids() == []  # the daemon Codex started is gone with the rig


def test_a_typed_message_is_answered_through_the_stop_hook(codex) -> None:
    codex.fake.script(text("Hello from Codex"))
    codex.start_recording(EVENTS)
    codex.submit("say hello")

    stop = codex.wait_hook("Stop")
    assert stop["last_assistant_message"] == "Hello from Codex"
    assert stop["stop_hook_active"] is False
    assert codex.wait_hook("UserPromptSubmit")["prompt"] == "say hello"
    transcript = Path(stop["transcript_path"])
    assert transcript.is_relative_to(codex.codex_home / "sessions")
    assert transcript.name.startswith("rollout-") and transcript.suffix == ".jsonl"
    assert stop["cwd"] == str(codex.project)
    assert codex.fake.last_user_text(codex.fake.requests[0]) == "say hello"
    codex.wait_for("• Hello from Codex")


def test_a_shell_command_is_reported_as_bash_before_and_after(codex) -> None:
    codex.fake.script(exec_command("echo made > made.txt; cat made.txt"), text("ran it"))
    codex.start_recording(EVENTS)
    codex.submit("make a file")

    codex.wait_hook("Stop")
    before, after = codex.wait_hook("PreToolUse"), codex.wait_hook("PostToolUse")
    command = "echo made > made.txt; cat made.txt"
    assert (before["tool_name"], before["tool_input"]) == ("Bash", {"command": command})
    assert after["tool_response"] == "made\n"
    assert after["tool_use_id"] == before["tool_use_id"]
    assert (codex.project / "made.txt").read_text() == "made\n"


def test_a_permission_request_denied_by_its_hook_blocks_the_command(codex) -> None:
    reason = "Write outside the sandbox?"
    codex.fake.script(exec_command("echo no > denied.txt", escalate=reason), text("understood"))
    codex.start_recording(EVENTS, {"PermissionRequest": DENY})
    codex.submit("write it")

    asked = codex.wait_hook("PermissionRequest")
    assert asked["tool_name"] == "Bash"
    assert asked["tool_input"] == {"command": "echo no > denied.txt", "description": reason}
    assert codex.wait_hook("Stop")["last_assistant_message"] == "understood"
    assert not (codex.project / "denied.txt").exists()
    codex.wait_for("Denied from Discord")  # the TUI shows the hook's message
    told = codex.fake.requests[1]["input"][-1]  # what the model hears: the hook's message
    assert told["type"] == "function_call_output" and "Denied from Discord" in told["output"]


def test_a_permission_request_allowed_by_its_hook_runs_the_command(codex) -> None:
    codex.fake.script(exec_command("echo yes > allowed.txt", escalate="Write it?"), text("wrote"))
    codex.start_recording(EVENTS, {"PermissionRequest": ALLOW})
    codex.submit("write it")

    assert codex.wait_hook("Stop")["last_assistant_message"] == "wrote"
    assert (codex.project / "allowed.txt").read_text() == "yes\n"
    assert "Would you like to run" not in codex.screen()


def test_a_permission_request_without_an_answer_leaves_codex_asking(codex) -> None:
    reason = "Write outside the sandbox?"
    codex.fake.script(exec_command("echo yes > asked.txt", escalate=reason), text("done"))
    codex.start_recording(EVENTS)
    codex.submit("write it")

    codex.wait_hook("PermissionRequest")
    screen = codex.wait_for("Would you like to run the following command?")
    assert f"Reason: {reason}" in screen and "$ echo yes > asked.txt" in screen
    assert "1. Yes, proceed (y)" in screen
    assert "No, and tell Codex what to do differently (esc)" in screen
    # Answered in the terminal: y runs it once, and the screen says so.
    codex.keys("y")
    assert codex.wait_hook("Stop")["last_assistant_message"] == "done"
    codex.wait_for("You approved codex to run echo yes > asked.txt this time")
    assert (codex.project / "asked.txt").read_text() == "yes\n"


def test_esc_fires_interrupt_not_stop(codex) -> None:
    codex.fake.script(text("too late", delay=30), text("after the interrupt"))
    codex.start_recording(EVENTS)
    codex.submit("take your time")
    codex.fake.wait_requests(1)
    codex.wait_for(BUSY_MARK)

    codex.keys("Escape")
    interrupt = codex.wait_hook("Interrupt")
    assert interrupt["hook_event_name"] == "Interrupt"
    codex.wait_for("Conversation interrupted")
    # The next turn's Stop is the first: the interrupted turn fired none.
    codex.wait_ready()
    codex.submit("again")
    assert codex.wait_hook("Stop")["last_assistant_message"] == "after the interrupt"
    assert len(codex.hook_calls("Stop")) == 1


def test_a_pre_tool_use_deny_holds(codex) -> None:
    codex.fake.script(exec_command("echo ran > pre.txt"), text("ok"))
    codex.start_recording(EVENTS, {"PreToolUse": PRE_DENY})
    codex.submit("try it")

    assert codex.wait_hook("Stop")["last_assistant_message"] == "ok"
    assert not (codex.project / "pre.txt").exists()
    assert codex.hook_calls("PostToolUse") == []


def test_the_usage_limit_ends_the_turn_with_no_hook(codex) -> None:
    codex.fake.script(usage_limit(resets_at=int(time.time()) + 7200), text("back again"))
    codex.start_recording(EVENTS)
    codex.submit("one more")

    codex.wait_for("hit your usage limit")
    codex.wait_ready()
    codex.submit("and now")
    # Stop fired once: for the second turn. The refused one fired nothing (no StopFailure).
    assert codex.wait_hook("Stop")["last_assistant_message"] == "back again"
    assert len(codex.hook_calls("Stop")) == 1
    assert len(codex.fake.requests) == 2  # not retried


def test_resume_reopens_the_thread_under_its_session_id(codex) -> None:
    codex.fake.script(text("first answer"), text("second answer"))
    codex.start_recording(EVENTS)
    codex.submit("first")
    first = codex.wait_hook("Stop")

    codex.restart("resume", first["session_id"])
    codex.wait_for("• first answer")  # the past turn is on screen; trusted hooks stay trusted
    codex.wait_ready()
    codex.submit("second")
    second = codex.wait_hook("Stop", 2)
    assert second["session_id"] == first["session_id"]
    assert second["transcript_path"] == first["transcript_path"]
    assert second["last_assistant_message"] == "second answer"
    assert user_texts(codex.fake.requests[1]) == ["first", "second"]


@pytest.mark.parametrize("version", versions.TESTED, ids=lambda version: f"codex-{version}")
def test_an_untrusted_project_asks_for_trust_then_reviews_its_hooks(
    version: str, tmp_path: Path
) -> None:
    with FakeOpenAI() as fake, CodexRig(tmp_path, fake, version, trusted=False) as codex:
        fake.script(text("trusted now"))
        codex.write_hooks({"Stop": [codex.recorder("Stop")]}, project=True)
        codex.start()
        dialog = codex.trust_folder()
        codex.trust_hooks()  # the project's .codex/hooks.json, read once the folder is trusted
        codex.wait_ready()
        codex.submit("hello")
        assert codex.wait_hook("Stop")["last_assistant_message"] == "trusted now"
        config = (codex.codex_home / "config.toml").read_text()
        assert f'[projects."{codex.project}"]\ntrust_level = "trusted"' in config
        assert f'[hooks.state."{codex.project}/.codex/hooks.json:stop:0:0"]' in config
    assert str(codex.project) in dialog and "trust" in dialog


def test_enter_while_busy_steers_the_message_into_the_running_turn(codex) -> None:
    codex.fake.script(text("slow one", delay=5), text("both read"))
    codex.start_recording(EVENTS)
    codex.submit("first")
    codex.fake.wait_requests(1)
    codex.wait_for(BUSY_MARK)

    codex.submit("typed while busy")
    codex.wait_for("Messages to be submitted after next tool call")
    # One turn took both: one Stop, its model request carrying both prompts.
    assert codex.wait_hook("Stop")["last_assistant_message"] == "both read"
    prompts = [call["prompt"] for call in codex.hook_calls("UserPromptSubmit")]
    assert prompts == ["first", "typed while busy"]
    assert user_texts(codex.fake.requests[1]) == ["first", "typed while busy"]
    codex.wait_ready()
    assert len(codex.hook_calls("Stop")) == 1


def test_quit_ends_the_session_only_without_the_daemon(codex) -> None:
    codex.fake.script(text("hello"))
    events = [*EVENTS, "SessionEnd"]
    codex.start_recording(events)
    codex.submit("hi")
    session = codex.wait_hook("Stop")["session_id"]
    codex.wait_ready()

    codex.submit("/quit")
    if codex.version == versions.OLDEST:  # the TUI owns its thread: quitting ends it
        ended = codex.wait_hook("SessionEnd")
        assert (ended["session_id"], ended["reason"]) == (session, "other")
    else:  # 0.160+: the daemon keeps the thread; the TUI only disconnects from it
        codex.wait_for("Disconnected from this task. Any running work continues.")
        codex.wait_for(f"codex resume {session}")
        assert codex.hook_calls("SessionEnd") == []


def test_an_edit_outside_the_sandbox_asks_as_apply_patch_and_a_deny_holds(codex) -> None:
    outside = codex.root / "outside.txt"
    codex.config_toml.write_text(codex.config_toml.read_text() + NO_TMP)
    patch = add_file(str(outside), "outside")
    codex.fake.script(apply_patch(patch), text("not written"))
    codex.start_recording(EVENTS, {"PermissionRequest": DENY})
    codex.submit("edit it")

    asked = codex.wait_hook("PermissionRequest")
    assert asked["tool_name"] == "apply_patch"
    assert asked["tool_input"] == {"command": patch.rstrip()}
    assert codex.wait_hook("Stop")["last_assistant_message"] == "not written"
    assert not outside.exists()
    before = codex.wait_hook("PreToolUse")  # the edit, as the shell command it came in
    assert before["tool_name"] == "Bash" and before["tool_input"]["command"].startswith(
        "apply_patch <<'EOF'\n*** Begin Patch\n"
    )
