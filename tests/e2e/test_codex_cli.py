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
from fake_openai import FakeOpenAI, exec_command, text, usage_limit

EVENTS = ("UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "Interrupt")
DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "Denied from Discord"},
    }
}


@pytest.fixture(params=versions.TESTED, ids=lambda version: f"codex-{version}")
def codex(request, tmp_path: Path):
    """A CodexRig on each tested version, its hooks trusted; ``codex.outputs`` sets what a
    recorder prints before ``codex.begin()`` starts it."""
    with FakeOpenAI() as fake, CodexRig(tmp_path, fake, request.param) as rig:
        rig.outputs = {}  # type: ignore[attr-defined]

        def begin() -> None:
            rig.write_hooks(
                {event: [rig.recorder(event, rig.outputs.get(event))] for event in EVENTS}
            )
            rig.start()
            rig.trust_hooks()
            rig.wait_ready()

        rig.begin = begin  # type: ignore[attr-defined]
        yield rig
    assert rig.leftover_pids() == []  # the daemon Codex started is gone with the rig


def test_a_typed_message_is_answered_through_the_stop_hook(codex) -> None:
    codex.fake.script(text("Hello from Codex"))
    codex.begin()
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
    codex.begin()
    codex.submit("make a file")

    codex.wait_hook("Stop")
    before, after = codex.wait_hook("PreToolUse"), codex.wait_hook("PostToolUse")
    command = "echo made > made.txt; cat made.txt"
    assert (before["tool_name"], before["tool_input"]) == ("Bash", {"command": command})
    assert after["tool_response"] == "made\n"
    assert after["tool_use_id"] == before["tool_use_id"]
    assert (codex.project / "made.txt").read_text() == "made\n"


def test_a_permission_request_denied_by_its_hook_blocks_the_command(codex) -> None:
    codex.outputs["PermissionRequest"] = DENY
    reason = "Write outside the sandbox?"
    codex.fake.script(exec_command("echo no > denied.txt", escalate=reason), text("understood"))
    codex.begin()
    codex.submit("write it")

    asked = codex.wait_hook("PermissionRequest")
    assert asked["tool_name"] == "Bash"
    assert asked["tool_input"] == {"command": "echo no > denied.txt", "description": reason}
    assert codex.wait_hook("Stop")["last_assistant_message"] == "understood"
    assert not (codex.project / "denied.txt").exists()
    codex.wait_for("Denied from Discord")  # the TUI shows the hook's message
    told = codex.fake.requests[1]["input"][-1]  # what the model hears: the hook's message
    assert told["type"] == "function_call_output" and "Denied from Discord" in told["output"]


def test_a_permission_request_without_an_answer_leaves_codex_asking(codex) -> None:
    reason = "Write outside the sandbox?"
    codex.fake.script(exec_command("echo yes > asked.txt", escalate=reason), text("done"))
    codex.begin()
    codex.submit("write it")

    codex.wait_hook("PermissionRequest")
    screen = codex.wait_for("Would you like to run the following command?")
    assert f"Reason: {reason}" in screen and "$ echo yes > asked.txt" in screen
    assert "1. Yes, proceed (y)" in screen
    assert "No, and tell Codex what to do differently (esc)" in screen


def test_esc_fires_interrupt_not_stop(codex) -> None:
    codex.fake.script(text("too late", delay=30), text("after the interrupt"))
    codex.begin()
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
    codex.outputs["PreToolUse"] = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "not this one",
        }
    }
    codex.fake.script(exec_command("echo ran > pre.txt"), text("ok"))
    codex.begin()
    codex.submit("try it")

    assert codex.wait_hook("Stop")["last_assistant_message"] == "ok"
    assert not (codex.project / "pre.txt").exists()
    assert codex.hook_calls("PostToolUse") == []


def test_the_usage_limit_ends_the_turn_with_no_hook(codex) -> None:
    codex.fake.script(usage_limit(resets_at=int(time.time()) + 7200), text("back again"))
    codex.begin()
    codex.submit("one more")

    codex.wait_for("hit your usage limit")
    codex.wait_ready()
    codex.submit("and now")
    # Stop fired once: for the second turn. The refused one fired nothing (no StopFailure).
    assert codex.wait_hook("Stop")["last_assistant_message"] == "back again"
    assert len(codex.hook_calls("Stop")) == 1
    assert len(codex.fake.requests) == 2  # not retried
