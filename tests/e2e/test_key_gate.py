"""No key the bot presses answers a permission dialog the owner did not answer (issue 18, 3).

Claude Code takes a dialog's keys before the dialog is on the screen, and the PermissionRequest
hook posts its prompt while the dialog is being drawn: a command sent the moment the prompt
shows on Discord used to read the input box and press its keys into the dialog (``/keys
Enter`` wrote the file; ``/mode`` cycled through "accept edits"). Here every command that
presses keys is sent within 100 ms of the prompt reaching the emulator, or right after the
tool call's PreToolUse, and must be refused with the dialog left open, the file unwritten and
the prompt still the owner's to answer.
"""

from __future__ import annotations

import json
import time

from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text, tool_use
from tests.e2e.test_control import interrupt_button
from tests.e2e.test_decisions import custom_id

DIALOG = "Do you want to create"
PERMISSION = "Claude wants to use"


def writes(rig, names: list[str]) -> None:
    """One turn: a Write of each name in turn (each asks), then a reply."""
    project = rig.projects["project-a"]
    calls = [tool_use("Write", {"file_path": str(project / n), "content": "x\n"}) for n in names]
    rig.api.script(*calls, echo(prefix="Saw: "))


def the_prompt(rig, since: int) -> dict:
    """The permission prompt posted after ``since``, as soon as the emulator has it (a long
    poll); checks that it is less than 100 ms old, so what follows races the dialog."""
    record = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=rig.ids["project-a"],
        author_id=rig.ids["bot_id"],
        content_contains=PERMISSION,
        timeout=60,
    )
    assert time.monotonic() - record["t"] < 0.1  # the emulator's clock: CLOCK_MONOTONIC too
    return record["message"]


def answer_of(rig, result: dict, since: int) -> str:
    """The text the user sees for a slash command or a deferred click (its follow-up)."""
    if result["response_type"] == 4:
        return result["message"]["content"]
    kind = "message_update" if result["response_type"] == 5 else "message_create"
    record = rig.discord.wait(
        since=since, kind=kind, interaction_id=result["interaction_id"], timeout=30
    )
    return record["message"]["content"]


def refused_with_the_dialog_open(rig, answer: str, name: str) -> None:
    """Refused, saying what to do, and the dialog is on screen. That no key reached it shows
    next: the prompt's own Allow or Deny is what Claude Code applies."""
    assert answer.startswith("⚠️") and "not sent" in answer, (name, answer)
    wait_until(lambda: DIALOG in rig.screen(), 10, f"the dialog, after {name}")
    assert "plan mode on" not in rig.screen()


def soon(check, what: str, timeout: float = 60.0) -> None:
    """Poll ``check`` every 5 ms (``wait_until``'s 100 ms would miss the race)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def test_every_key_command_sent_as_the_prompt_appears_is_refused(rig) -> None:
    commands = [
        ("mode", {"mode": "plan"}),
        ("keys", {"keys": "Enter"}),
        ("model", {"name": "claude-test-model"}),
        ("esc", None),
        ("⏹", None),
    ]
    names = [f"gate{i}.txt" for i in range(len(commands))]
    writes(rig, names)
    rig.start_bot()
    since = rig.discord.mark()
    rig.post("write the files")
    status: tuple[str, str] | None = None
    for step, (name, options) in enumerate(commands):
        prompt = the_prompt(rig, since)
        mark = rig.discord.mark()
        if name == "⏹":
            assert status is not None
            result = rig.discord.click(*status)
        else:
            result = rig.discord.run_command(rig.ids["project-a"], name, options)
        answer = answer_of(rig, result, mark)
        assert "permission prompt" in answer, (name, answer)  # what the bridge knew for sure
        refused_with_the_dialog_open(rig, answer, name)
        if step == 0:  # the turn's ⏹, found while nothing races (the dialog waits for us)
            status = wait_until(lambda: interrupt_button(rig), what="the status message's ⏹")
        since = rig.discord.mark()
        last = step == len(commands) - 1
        rig.discord.click(prompt["id"], custom_id(prompt, "Allow" if last else "Deny"))
    rig.wait_bot_message(content_contains="Saw: ", timeout=60)
    # What Claude Code applied is the prompt's answer each time: Deny, then the last Allow.
    saw = [last_user_text(request) for request in rig.api.requests[1:]]
    assert len(saw) == len(commands), saw
    assert all("Denied from Discord" in text for text in saw[:-1]), saw
    assert "[tool_result]" in saw[-1] and "Denied" not in saw[-1], saw
    assert [n for n in names if (rig.projects["project-a"] / n).exists()] == [names[-1]]
    assert rig.api.requests[-1]["model"] != "claude-test-model"


def test_a_command_sent_as_a_tool_call_starts_waits_for_its_dialog_and_is_refused(rig) -> None:
    """Sent the moment PreToolUse has run, before Claude Code draws the dialog or its hook
    writes the request: the bot waits for the dialog that may come, then refuses."""
    writes(rig, ["started.txt"])
    rig.start_bot()
    rig.post("write started.txt")
    progress = rig.runtime_dir / "progress" / f"{rig.ids['project-a']}.jsonl"

    def tool_started() -> bool:
        lines = progress.read_text().splitlines() if progress.exists() else []
        return any(json.loads(line).get("kind") == "tool" for line in lines)

    soon(tool_started, "the Write's PreToolUse")
    since = rig.discord.mark()
    result = rig.discord.run_command(rig.ids["project-a"], "mode", {"mode": "plan"})
    answer = answer_of(rig, result, since)
    refused_with_the_dialog_open(rig, answer, "mode")
    assert not (rig.projects["project-a"] / "started.txt").exists()
    prompt = rig.wait_bot_message(content_contains=PERMISSION, timeout=60)
    rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    rig.wait_bot_message(content_contains="Saw: ", timeout=60)
    assert (rig.projects["project-a"] / "started.txt").read_text() == "x\n"
    assert "plan mode on" not in rig.screen()
