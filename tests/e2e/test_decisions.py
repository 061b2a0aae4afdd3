"""Claude Code's prompts answered from Discord: permission, always-allow, questions, plans.

Real CLI in tmux, real hooks, real bot against the emulator: each test clicks what a user
would click and asserts what the model received (at the fake Anthropic API), what happened
on disk, and what the prompt message shows afterwards.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from bridge_testkit import QUESTIONS
from fake_anthropic import Turn, echo, last_user_text, text, tool_use, tool_uses

# Tests marked claude_versions run on every tested Claude Code version (bridge/claude/versions.py):
# those whose outcome depends on the CLI (hook outputs it applies, its dialogs, its interrupt).
# Those that exercise only the bridge's side (owner check, timeout, restart, Discord outage,
# two sessions) run on the pinned version alone, to keep the suite's time down.
VERSIONED = pytest.mark.claude_versions

PERMISSION = "Claude wants to use"
REFUSED = "Only this bridge's owner and its allowed users can do that."  # every refusal


def components(message: dict) -> list[dict]:
    return [c for row in message.get("components") or [] for c in row["components"]]


def custom_id(message: dict, label: str) -> str:
    for component in components(message):
        if component.get("label", "").startswith(label):
            return component["custom_id"]
    raise AssertionError(f"no button {label!r} in {[c.get('label') for c in components(message)]}")


def wait_prompt(rig, marker: str = PERMISSION, since: int | None = None, project="project-a"):
    return rig.wait_bot_message(project, content_contains=marker, timeout=60, since=since)


def wait_closed(rig, message: dict, timeout: float = 30.0) -> dict:
    """The prompt message once its buttons are gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = next(
            m for m in rig.discord.messages(message["channel_id"]) if m["id"] == message["id"]
        )
        if not current.get("components"):
            return current
        time.sleep(0.05)
    raise AssertionError(f"prompt still open:\n{rig.diagnostics()}")


def current_message(rig, message: dict) -> dict:
    return next(m for m in rig.discord.messages(message["channel_id"]) if m["id"] == message["id"])


def wait_screen(rig, text: str, timeout: float = 2.5) -> None:
    deadline = time.monotonic() + timeout
    while text not in rig.screen():
        assert time.monotonic() < deadline, f"{text!r} not on screen:\n{rig.screen()}"
        time.sleep(0.1)


def model_saw(rig, n: int) -> str:
    """What the model got in its ``n``-th request (1-based): the last user message."""
    return last_user_text(rig.api.wait_requests(n, timeout=60)[n - 1])


@VERSIONED
def test_allow_deny_and_tell_claude_reach_the_model(rig) -> None:
    project = rig.projects["project-a"]
    rig.api.script(
        tool_use("Bash", {"command": "touch allowed.txt", "description": "Create a file"}),
        echo(),
        tool_use("Bash", {"command": "touch denied.txt", "description": "Create another"}),
        echo(),
        tool_use("Bash", {"command": "touch told.txt", "description": "And another"}),
        echo(),
    )
    rig.start_bot()

    rig.post("make a file")
    prompt = wait_prompt(rig)
    assert "touch allowed.txt" in prompt["content"] and "Create a file" in prompt["content"]
    answer = rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    assert answer["response_type"] == 7  # the prompt was updated in place, within 3 s
    assert "[tool_result]" in model_saw(rig, 2)
    assert (project / "allowed.txt").exists()
    closed = wait_closed(rig, prompt)
    assert f"Allowed** by <@{rig.ids['alice']}>" in closed["content"]
    rig.wait_bot_message(content_contains="Model saw:")

    rig.post("make another")
    prompt = wait_prompt(rig)
    rig.discord.click(prompt["id"], custom_id(prompt, "Deny"))
    saw = model_saw(rig, 4)
    assert "[tool_result is_error]" in saw and "Denied from Discord" in saw
    assert not (project / "denied.txt").exists()
    rig.wait_bot_message(content_contains="Model saw:")

    rig.post("and another")
    prompt = wait_prompt(rig)
    opened = rig.discord.click(prompt["id"], custom_id(prompt, "Tell Claude"))
    assert opened["response_type"] == 9 and opened["modal"]
    rig.discord.submit_modal(opened, {"text": "use make told instead"})
    saw = model_saw(rig, 6)
    assert "[tool_result is_error]" in saw and "use make told instead" in saw
    assert not (project / "told.txt").exists()
    assert "use make told instead" in wait_closed(rig, prompt)["content"]


def test_a_bidi_override_in_a_command_is_shown_as_it_runs(rig) -> None:
    """Trojan Source in a Bash call: U+202E makes the rest of the line display reversed, so
    a raw prompt would show ``touch reportexe.txt`` for a file named ``report‮txt.exe``.
    The prompt shows the character as ⟦U+202E⟧ (and says so); Deny keeps it from running."""
    project = rig.projects["project-a"]
    command = "touch report\u202etxt.exe"
    rig.api.script(tool_use("Bash", {"command": command, "description": "Make a report"}), echo())
    rig.start_bot()
    rig.post("make the report")
    prompt = wait_prompt(rig)
    content = prompt["content"]
    assert "touch report⟦U+202E⟧txt.exe" in content, content
    assert "\u202e" not in content
    assert "Hidden or look-alike characters are shown as ⟦U+…⟧" in content
    rig.discord.click(prompt["id"], custom_id(prompt, "Deny"))
    assert "[tool_result is_error]" in model_saw(rig, 2)
    assert list(project.iterdir()) == []


@VERSIONED
def test_always_allow_for_this_project_writes_local_settings(rig) -> None:
    project = rig.projects["project-a"]
    rig.api.script(
        tool_use("Bash", {"command": "npm --version", "description": "npm version"}),
        echo(),
        tool_use("Bash", {"command": "npm --version", "description": "again"}),
        text("second run done"),
    )
    rig.start_bot()
    rig.post("check npm")
    prompt = wait_prompt(rig)
    always = [c for c in components(prompt) if c["label"].startswith("Always allow")]
    assert always, prompt
    scope = custom_id(prompt, "↻ “Always” applies to:")
    cycled = rig.discord.click(prompt["id"], scope)  # this session -> this project (just me)
    assert cycled["response_type"] == 7
    stale = rig.discord.click(prompt["id"], always[0]["custom_id"])  # a client not redrawn yet
    assert stale["ephemeral"] and "out of date" in stale["message"]["content"], stale
    prompt = current_message(rig, prompt)
    button = custom_id(prompt, "Always allow")
    assert "this project (just me)" in next(
        c["label"] for c in components(prompt) if c["custom_id"] == button
    )
    rig.discord.click(prompt["id"], button)
    assert "[tool_result]" in model_saw(rig, 2)
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert any(rule.startswith("Bash(npm") for rule in local["permissions"]["allow"]), local
    rig.wait_bot_message(content_contains="Model saw:")

    rig.post("check npm again")
    rig.wait_bot_message(content_contains="second run done")
    messages = rig.bot_messages()
    assert sum(PERMISSION in m["content"] for m in messages) == 1  # no second prompt


def test_bot_restart_between_prompt_and_click_still_decides(rig) -> None:
    rig.api.script(
        tool_use("Bash", {"command": "touch after-restart.txt", "description": "Create"}),
        echo(),
    )
    rig.start_bot()
    rig.post("make a file")
    prompt = wait_prompt(rig)
    rig.stop_bot()
    rig.start_bot()
    answer = rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    assert answer["response_type"] == 7
    assert "[tool_result]" in model_saw(rig, 2)
    assert (rig.projects["project-a"] / "after-restart.txt").exists()


@VERSIONED
def test_questions_answered_by_select_and_other_reach_the_model_exactly(rig) -> None:
    rig.api.script(tool_use("AskUserQuestion", QUESTIONS), echo())
    rig.start_bot()
    rig.post("set up the app")
    prompt = wait_prompt(rig, "Claude has questions")
    assert "Which database should we use?" in prompt["content"]
    assert "Relational, robust" in prompt["content"] and "(pick one or more)" in prompt["content"]
    select = next(c for c in components(prompt) if c["type"] == 3)
    assert select["max_values"] == 4  # three features + Other…

    answered = rig.discord.select(prompt["id"], select["custom_id"], ["o0", "o2"])
    assert answered["response_type"] == 7
    prompt = current_message(rig, prompt)
    assert "Features:** Auth, Billing" in prompt["content"]
    assert all(c["type"] == 2 for c in components(prompt))  # only question 1 left
    opened = rig.discord.click(prompt["id"], custom_id(prompt, "Other…"))
    rig.discord.submit_modal(opened, {"text": "CockroachDB, please"})

    saw = model_saw(rig, 2)
    assert '"Which database should we use?"="CockroachDB, please"' in saw, saw
    assert '"Which features do you want?"="Auth, Billing"' in saw, saw
    closed = wait_closed(rig, prompt)
    assert "Answered** by" in closed["content"] and "CockroachDB, please" in closed["content"]


def write_plan(plan: str, delay: float = 0.0) -> Turn:
    """Write the plan where plan mode's system reminder says it goes."""

    def build(request: dict) -> list[dict]:
        path = re.search(r"(/[^\s\"\\]+/\.claude/plans/[^\s\"\\]+\.md)", json.dumps(request))
        assert path, "no plan file path in the request"
        tool_input = {"file_path": path[1], "content": plan}
        return [
            {
                "type": "tool_use",
                "id": f"toolu_plan_{time.time_ns()}",
                "name": "Write",
                "input": tool_input,
            }
        ]

    return Turn(build=build, stop_reason="tool_use", delay=delay)


@VERSIONED
def test_plan_keep_planning_then_approve_with_auto_accept(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["projects"][0]["permission"] = "plan"
    rig.write_config(raw)
    project = rig.projects["project-a"]
    rig.api.script(
        write_plan("# Plan\n\n1. Add README.md\n"),
        tool_use("ExitPlanMode", {}),
        write_plan("# Plan\n\n1. Add tests\n2. Add README.md\n", delay=3.0),
        tool_use("ExitPlanMode", {}),
        tool_use("Write", {"file_path": str(project / "README.md"), "content": "hello\n"}),
        text("all written"),
    )
    rig.start_bot()
    rig.post("plan a readme")
    first = wait_prompt(rig, "plan is ready")
    assert "1. **[2]** Add README.md" in first["content"]  # its steps numbered
    opened = rig.discord.click(first["id"], custom_id(first, "Keep planning"))
    rig.discord.submit_modal(opened, {"text": "add tests first"})
    saw = model_saw(rig, 3)
    assert "[tool_result is_error]" in saw and "add tests first" in saw
    wait_screen(rig, "plan mode on")  # still planning while the model answers (3 s)

    second = wait_prompt(rig, "1. **[2]** Add tests")
    rig.discord.click(second["id"], custom_id(second, "Approve, auto-accept"))
    assert "approved your plan" in model_saw(rig, 5)
    rig.wait_bot_message(content_contains="all written")
    assert (project / "README.md").read_text() == "hello\n"
    prompts = [m for m in rig.bot_messages() if "wants to use" in m["content"]]
    assert prompts == []  # the Write after approval raised no permission prompt


def bash_prompt_script(name: str) -> tuple:
    return (tool_use("Bash", {"command": f"touch {name}", "description": "Create"}), echo())


@VERSIONED
def test_terminal_answer_first_closes_the_discord_prompt(rig) -> None:
    rig.api.script(*bash_prompt_script("by-terminal.txt"))
    rig.start_bot()
    rig.post("make a file")
    prompt = wait_prompt(rig)
    wait_screen(rig, "Do you want to proceed?")
    time.sleep(0.6)  # dialogs ignore keys for ~0.3 s after they render
    rig.tmux.press(rig.pane().pane_id, "1")
    closed = wait_closed(rig, prompt)
    assert "Answered in the terminal" in closed["content"]
    assert (rig.projects["project-a"] / "by-terminal.txt").exists()

    late = rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    assert late["response_type"] == 4 and late["ephemeral"]
    assert "no longer pending" in late["message"]["content"]


@VERSIONED
def test_terminal_no_interrupts_and_closes_the_prompt(rig) -> None:
    rig.api.script(*bash_prompt_script("refused.txt"))
    rig.start_bot()
    rig.post("make a file")
    prompt = wait_prompt(rig)
    wait_screen(rig, "Do you want to proceed?")
    time.sleep(0.6)
    rig.tmux.press(rig.pane().pane_id, "Escape")
    closed = wait_closed(rig, prompt)
    assert "Interrupted" in closed["content"]
    assert not (rig.projects["project-a"] / "refused.txt").exists()


def test_only_the_owner_decides_and_a_double_click_decides_once(rig) -> None:
    rig.api.script(*bash_prompt_script("once.txt"))
    rig.start_bot()
    rig.post("make a file")
    prompt = wait_prompt(rig)
    allow, deny = custom_id(prompt, "Allow"), custom_id(prompt, "Deny")

    refused = rig.discord.click(prompt["id"], deny, user="bob")
    assert refused["response_type"] == 4 and refused["ephemeral"]
    assert refused["message"]["content"] == REFUSED
    assert current_message(rig, prompt)["components"]  # still open: nothing was decided
    modal = rig.discord.click(prompt["id"], custom_id(prompt, "Tell Claude"), user="bob")
    assert modal["response_type"] == 4 and not modal["modal"]

    first = rig.discord.click(prompt["id"], allow)
    second = rig.discord.click(prompt["id"], deny)
    assert first["response_type"] == 7
    assert second["response_type"] == 4 and second["ephemeral"]
    assert "[tool_result]" in model_saw(rig, 2)
    assert "Allowed** by" in wait_closed(rig, prompt)["content"]


def test_unanswered_prompt_times_out_with_a_denial_the_model_reads(rig) -> None:
    raw = rig.config()
    raw["prompts"] = {"timeoutSeconds": 10}
    rig.write_config(raw)
    rig.api.script(*bash_prompt_script("never.txt"))
    rig.start_bot()
    rig.post("make a file")
    prompt = wait_prompt(rig)
    saw = model_saw(rig, 2)  # ~10 s later
    assert "No answer from Discord within 10 s" in saw
    closed = wait_closed(rig, prompt)
    assert "No answer within 10 s** — denied" in closed["content"]
    late = rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    assert late["response_type"] == 4 and late["ephemeral"]


def test_discord_unreachable_leaves_the_terminal_dialog(rig) -> None:
    rig.api.script(*bash_prompt_script("fallback.txt"))
    rig.start_bot()
    rig.discord.set_outage("refuse")
    try:
        rig.post("make a file")
        wait_screen(rig, "Do you want to proceed?", timeout=30)
        hook_log = rig.state_dir / "logs" / "hooks.log"
        deadline = time.monotonic() + 15
        while "not posted" not in (hook_log.read_text() if hook_log.exists() else ""):
            assert time.monotonic() < deadline, rig.diagnostics()
            time.sleep(0.1)
        time.sleep(0.6)
        rig.tmux.press(rig.pane().pane_id, "1")
        assert "[tool_result]" in model_saw(rig, 2)
    finally:
        rig.discord.set_outage(None)
    assert (rig.projects["project-a"] / "fallback.txt").exists()


def test_two_sessions_waiting_at_once_get_their_own_answers(rig) -> None:
    rig.api.script(*bash_prompt_script("a.txt")[:1], *bash_prompt_script("b.txt")[:1])
    rig.start_bot()
    rig.post("make a", "project-a")
    prompt_a = wait_prompt(rig, "touch a.txt", project="project-a")
    rig.post("make b", "project-b")
    prompt_b = wait_prompt(rig, "touch b.txt", project="project-b")

    rig.api.script(echo())
    rig.discord.click(prompt_b["id"], custom_id(prompt_b, "Deny"))
    reply_b = rig.wait_bot_message("project-b", content_contains="Model saw:")
    assert "is_error" in reply_b["content"] and "Denied from Discord" in reply_b["content"]
    rig.api.script(echo())
    before_allow = rig.discord.mark()
    rig.discord.click(prompt_a["id"], custom_id(prompt_a, "Allow"))
    reply_a = rig.wait_bot_message("project-a", content_contains="Model saw:", since=before_allow)
    assert "[tool_result]" in reply_a["content"] and "is_error" not in reply_a["content"]
    assert (rig.projects["project-a"] / "a.txt").exists(), (reply_a, rig.diagnostics())
    assert not (rig.projects["project-b"] / "b.txt").exists()


NOT_VALID = "not valid for this prompt"


def test_crafted_custom_ids_are_refused_answered_and_decide_nothing(rig) -> None:
    """Issue 13.15: an allowed user's crafted custom_id — another kind's action, a malformed
    one, a modal the bot never opened — is checked against the prompt's kind and shape: it
    always gets an ephemeral answer and decides nothing; the real Allow then still works."""
    project = rig.projects["project-a"]
    rig.api.script(*bash_prompt_script("crafted.txt"))
    rig.start_bot()
    rig.post("make a file")
    prompt = wait_prompt(rig)
    rid = custom_id(prompt, "Allow").split(":")[2]

    for crafted in (
        f"db:p:{rid}:plan:keep",  # "keep planning" on a Bash prompt: decided a denial before
        f"db:p:{rid}:q3:other",
        f"db:p:{rid}",  # malformed: no action at all, never answered before
        "db:p:not-a-request:tell",
    ):
        submitted = rig.discord.submit_crafted_modal(prompt["id"], crafted, {"text": "x"})
        assert submitted["response_type"] == 4 and submitted["ephemeral"], (crafted, submitted)
        assert NOT_VALID in submitted["message"]["content"], crafted

    for crafted in (
        f"db:p:{rid}:plan:auto",  # a plan's approval on a Bash prompt: allow + acceptEdits
        f"db:p:{rid}:always:x:s",  # malformed: int("x") raised, the click went unanswered
        f"db:p:{rid}:always:7:u",  # a suggestion the prompt does not have
        f"db:p:{rid}:q0:o0",  # a question's option
        f"db:s:{rid}:q0",  # a question's select
    ):
        answered = (
            rig.discord.select(prompt["id"], crafted, ["o0"])
            if crafted.startswith("db:s:")
            else rig.discord.click(prompt["id"], crafted)
        )
        assert answered["response_type"] == 4 and answered["ephemeral"], (crafted, answered)
        assert NOT_VALID in answered["message"]["content"], crafted

    assert current_message(rig, prompt)["components"]  # still open: nothing was decided
    allowed = rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    assert allowed["response_type"] == 7
    assert "[tool_result]" in model_saw(rig, 2)
    assert (project / "crafted.txt").exists()
    assert f"Allowed** by <@{rig.ids['alice']}>" in wait_closed(rig, prompt)["content"]
    assert "acceptEdits" not in rig.screen() and "accept edits on" not in rig.screen()


def test_two_reads_at_once_each_prompt_is_answered_on_its_own(rig) -> None:
    """Two reads outside the project in one response (read-only tools run at once): each
    prompt stays open until it is answered on Discord, and both answers reach the model.
    (Issue 13.13's regression tests are the unit and hook-script ones: with this CLI the
    second call's PreToolUse did not land inside the first prompt's wait here.)"""
    outside = rig.tmp / "outside"
    outside.mkdir()
    for name in ("a", "b"):
        (outside / f"{name}.txt").write_text(f"content of {name}\n")
    reads = [("Read", {"file_path": str(outside / f"{n}.txt")}) for n in ("a", "b")]
    rig.api.script(tool_uses(reads), echo())
    rig.start_bot()
    rig.post("read both files")
    first = wait_prompt(rig)
    time.sleep(3)  # the second call starts meanwhile (its PreToolUse fires)
    answered = rig.discord.click(first["id"], custom_id(first, "Allow"))
    assert answered["response_type"] == 7, answered  # still open: decided here, not "no longer"
    assert "Allowed** by" in wait_closed(rig, first)["content"]
    second = None
    deadline = time.monotonic() + 60
    while second is None:
        assert time.monotonic() < deadline, rig.diagnostics()
        others = [
            m
            for m in rig.bot_messages("project-a")
            if PERMISSION in m["content"] and m["id"] != first["id"]
        ]
        second = others[0] if others else None
        time.sleep(0.1)
    rig.discord.click(second["id"], custom_id(second, "Allow"))
    saw = model_saw(rig, 2)
    assert "content of a" in saw and "content of b" in saw


def test_claude_code_killed_with_a_prompt_open_closes_the_prompt_and_its_hook(rig) -> None:
    """Claude Code runs the hook through a shell, which stays in between: when Claude Code
    dies the shell is re-parented and the hook's own parent does not change. The waiting
    hook must still see the session end (it watches its grandparent too), close the prompt
    and exit, instead of waiting out the prompt timeout."""
    import os
    import signal
    import subprocess

    rig.api.script(*bash_prompt_script("never.txt"))
    rig.start_bot()
    rig.post("make a file")
    prompt = wait_prompt(rig)
    pane = rig.pane().pane_id
    pid = int(rig.tmux.server.cmd("display-message", "-p", "-t", pane, "#{pane_pid}").stdout[0])
    os.kill(pid, signal.SIGKILL)
    closed = wait_closed(rig, prompt, timeout=15)
    assert "The Claude Code session ended" in closed["content"]

    def hooks_left() -> str:
        found = subprocess.run(
            ["pgrep", "-f", f"permission_request.py --home {rig.bridge_home}"],
            capture_output=True,
            text=True,
        )
        return found.stdout.strip()

    deadline = time.monotonic() + 10
    while hooks_left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not hooks_left()
    assert not (rig.projects["project-a"] / "never.txt").exists()


# --- issue 20: the plan annotated, what a permission prompt shows, reactions -----------------


def request_text(request: dict) -> str:
    return json.dumps(request, ensure_ascii=False)


def test_plan_notes_per_step_then_approved_with_notes_read_before_it_acts(rig) -> None:
    """Notes on steps go back as "keep planning", each quoted with its step; an approval with
    notes reaches the model in the approval's own result (the request whose answer is the
    implementation's first tool call), with the mode picked in the modal; then the Write it
    asks for shows its new file, a stranger's ✅ on it is ignored and the owner's allows."""
    raw = rig.config()
    raw["servers"][0]["projects"][0]["permission"] = "plan"
    rig.write_config(raw)
    project = rig.projects["project-a"]
    rig.api.script(
        write_plan("# Plan\n\n1. Add README.md\n2. Add tests\n"),
        tool_use("ExitPlanMode", {}),
        write_plan("# Plan\n\n1. Add README.md under docs/\n2. Add tests\n", delay=2.0),
        tool_use("ExitPlanMode", {}),
        tool_use("Write", {"file_path": str(project / "README.md"), "content": "hello\n"}),
        echo(),
    )
    rig.start_bot()
    rig.post("plan a readme")
    first = wait_prompt(rig, "plan is ready")
    assert "# **[1]** Plan" in first["content"] and "1. **[2]** Add README.md" in first["content"]
    select = next(c for c in components(first) if c["type"] == 3)
    assert [o["label"] for o in select["options"]] == [
        "1 · Plan",
        "2 · Add README.md",
        "3 · Add tests",
    ]
    opened = rig.discord.select(first["id"], select["custom_id"], ["s2", "s3"])
    assert opened["response_type"] == 9, opened
    labels = [(c["label"], c.get("description")) for c in opened["modal"]["components"]]
    assert labels == [("Step 2", "Add README.md"), ("Step 3", "Add tests")]
    rig.discord.submit_modal(opened, {"s2": "put it under docs/", "s3": ""})
    saw = model_saw(rig, 3)
    assert "[tool_result is_error]" in saw
    assert "Step 2: “Add README.md”\nput it under docs/" in saw and "Step 3" not in saw
    assert "asked Claude to **keep planning**" in wait_closed(rig, first)["content"]

    second = wait_prompt(rig, "under docs/")
    opened = rig.discord.click(second["id"], custom_id(second, "Approve with notes"))
    assert opened["response_type"] == 9 and opened["modal"]["title"].startswith("Approve")
    rig.discord.submit_modal(opened, {"mode": ["review"], "text": "NOTE: keep it short"})
    approval = rig.api.wait_requests(5, timeout=60)[4]  # answered with the Write: its first act
    saw = last_user_text(approval)
    assert "approved your plan" in saw and "(edited by user)" in saw, saw
    assert "## Notes from the review\n\nNOTE: keep it short" in saw
    assert "NOTE: keep it short" not in request_text(rig.api.requests[3])  # not before it
    closed = wait_closed(rig, second)
    assert (
        "Plan approved** by" in closed["content"]
        and "review each edit, with notes" in (closed["content"])
    )

    write = wait_prompt(rig)  # review each edit: the Write asks
    assert (
        f"**Create file** `{project / 'README.md'}` (1 line)\n```md\nhello\n```"
        in (write["content"])
    ), write["content"]
    rig.discord.react(write["channel_id"], write["id"], "✅", user="bob")
    rig.discord.react(write["channel_id"], write["id"], "✅")
    assert "[tool_result]" in model_saw(rig, 6)
    assert (project / "README.md").read_text() == "hello\n"
    closed = wait_closed(rig, write)
    assert f"Allowed** by <@{rig.ids['alice']}>" in closed["content"]
    assert f"from {rig.ids['bob']}" in rig.bot_output()  # seen, and ignored


def test_an_edit_prompt_shows_the_numbered_diff_and_a_reaction_denies(rig) -> None:
    """What the terminal shows for an Edit (2.1.332): the file's line numbers, three lines
    of context; ❌ from the owner denies as the button does (the model reads who denied)."""
    project = rig.projects["project-a"]
    app = project / "app.py"
    app.write_text(
        "".join(f"line {i}\n" for i in range(1, 41)) + "def main():\n"
        "    print('hi')\n    return 0\n"
    )
    edit = {
        "file_path": str(app),
        "old_string": "    print('hi')\n    return 0",
        "new_string": "    print('hello')\n    return 1",
    }
    rig.api.script(tool_use("Edit", edit), echo())
    rig.start_bot()
    rig.post("fix main")
    prompt = wait_prompt(rig)
    assert (
        f"**Edit file** `{app}`\n```diff\n   39 line 39\n   40 line 40\n   41 def main():\n"
        "-  42     print('hi')\n-  43     return 0\n"
        "+  42     print('hello')\n+  43     return 1\n```"
    ) in prompt["content"], prompt["content"]
    rig.discord.react(prompt["channel_id"], prompt["id"], "❌")
    saw = model_saw(rig, 2)
    assert "[tool_result is_error]" in saw and "Denied from Discord by" in saw
    assert "print('hi')" in app.read_text()
    assert "Denied** by" in wait_closed(rig, prompt)["content"]
