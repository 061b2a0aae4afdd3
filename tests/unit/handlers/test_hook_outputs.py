"""Every JSON a hook prints is in Claude Code's published contract: the Agent SDK's hook types of
the pinned CLI (``bridge_testkit.hook_contract``; strict, so a field the contract does not
define fails). Each hook in hooks/ runs as Claude Code runs it (``python -I -S``, real JSON on
stdin, its locations on the command line) against the Discord emulator, for every answer the
bridge gives: each outcome a click on Discord (or the prompt's timeout) decides for a
permission, a question and a plan, "always" with each kind of suggestion Claude Code offers at
each scope, the PreToolUse "ask" of ``permissionTools``, and the events that print nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bridge import fastjson
from bridge.claude.hook_table import HOOKS
from bridge.claude.permissions import SCOPES
from bridge.discord.prompt_actions import PLAN_MODES
from bridge.handlers.permission import cli_answer
from bridge.state import decisions, locations, runtime
from bridge.state.decisions import Decision, Request
from bridge_testkit import FORM, QUESTIONS, hook_input
from bridge_testkit.hook_contract import HookContract
from discord_emulator import Emulator

REPO = Path(__file__).resolve().parents[3]
BASH = {"command": "touch made-by-bash.txt", "description": "Create a file"}
PLAN = {"plan": "# Plan\n\n1. Add README.md\n", "planFilePath": "/p/.claude/plans/x.md"}
# What Claude Code offers for "always" (measured: a Bash call outside the project, a
# Write), plus the rule it offers for a command: one of each kind the bridge passes back.
SUGGESTIONS = [
    {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "touch perm-*"}],
        "behavior": "allow",
        "destination": "session",
    },
    {"type": "addDirectories", "directories": ["/home/dev/proj"], "destination": "session"},
    {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
]
CONTENT = {"name": "demo", "color": "green", "count": 3, "confirm": True}
ANSWERS = {
    "Which database should we use?": "SQLite",
    "Which features do you want?": "Auth, Billing",
}


class Hooks:
    """A bridge home whose one project posts to the emulator, and the hooks run in it."""

    def __init__(self, tmp_path: Path, emu: Emulator) -> None:
        self.emu = emu
        self.channel = emu.ids["project-a"]
        self.project = tmp_path / "project-a"
        self.project.mkdir()
        home = tmp_path / "bridge-home"
        home.mkdir(mode=0o700)
        server = {
            "name": "main",
            "discord": {
                "botToken": emu.bot_token,
                "ownerUserId": emu.ids["alice"],
                "apiBaseUrl": emu.api_base,
            },
            "permissionTools": ["Bash"],
            "projects": [
                {"name": "project-a", "channelId": self.channel, "projectPath": str(self.project)}
            ],
        }
        # no footer: the Stop hook would wait for the reply's record in a transcript
        config = {"schemaVersion": 2, "servers": [server], "replies": {"footer": False}}
        (home / "config.json").write_text(json.dumps(config))
        (home / "config.json").chmod(0o600)
        self.runtime = runtime.Runtime(str(tmp_path / "runtime"))
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "LANG": "C.UTF-8",
            "DISCORD_BRIDGE_HOME": str(home),
            "DISCORD_BRIDGE_RUNTIME_DIR": self.runtime.root,
            "DISCORD_BRIDGE_STATE_DIR": self.runtime.root,
            "DISCORD_BRIDGE_CHANNEL_ID": self.channel,  # a pane the bot started
            "TMUX_PANE": "%7",
        }

    def start(self, event: dict) -> subprocess.Popen:
        script = REPO / "hooks" / HOOKS[event["hook_event_name"]].script
        with tempfile.TemporaryFile() as stdin:  # all of it there at once, as Claude Code writes
            stdin.write(json.dumps(event).encode())
            stdin.seek(0)
            return subprocess.Popen(
                [sys.executable, "-I", "-S", str(script), *locations.hook_args(self.env)],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                cwd=self.project,
            )

    def printed(self, hook: subprocess.Popen) -> dict | None:
        """What the hook printed for Claude Code (None: nothing); it exits 0, silently."""
        out, err = hook.communicate(timeout=30)
        assert (hook.returncode, err.decode()) == (0, "")
        return json.loads(out) if out.strip() else None

    def run(self, event: dict) -> dict | None:
        return self.printed(self.start(event))

    def posted_request(self, timeout: float = 15) -> Request:
        """The request of the prompt the waiting hook has posted on Discord."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            prompts = Path(self.runtime.prompts)
            for path in prompts.glob(f"*{decisions.REQUEST}") if prompts.is_dir() else []:
                request = decisions.read_request(self.runtime, path.name.split(".")[0])
                if request is not None and request.message_id:
                    return request
            time.sleep(0.02)
        raise AssertionError(f"no prompt posted; hook log:\n{self.log()}")

    def log(self) -> str:
        path = Path(self.runtime.hook_log)
        return path.read_text() if path.exists() else ""


@pytest.fixture
def hooks(tmp_path: Path, emu: Emulator) -> Hooks:
    return Hooks(tmp_path, emu)


# --- PermissionRequest: every answer to a permission, a question and a plan -----------------


def permission_event(cwd: Path) -> dict:
    return hook_input(
        "PermissionRequest",
        cwd=cwd,
        permission_mode="default",
        tool_name="Bash",
        tool_input=BASH,
        permission_suggestions=SUGGESTIONS,
    )


def question_event(cwd: Path) -> dict:
    return hook_input(
        "PermissionRequest",
        cwd=cwd,
        permission_mode="default",
        tool_name="AskUserQuestion",
        tool_input=QUESTIONS,
    )


def plan_event(cwd: Path) -> dict:
    return hook_input(
        "PermissionRequest",
        cwd=cwd,
        permission_mode="plan",
        tool_name="ExitPlanMode",
        tool_input=PLAN,
    )


def form_event(cwd: Path) -> dict:
    return hook_input(
        "Elicitation",
        cwd=cwd,
        mcp_server_name="elic",
        message="Please describe the project",
        mode="form",
        requested_schema=FORM,
    )


def url_event(cwd: Path) -> dict:
    return hook_input(
        "Elicitation",
        cwd=cwd,
        mcp_server_name="elic",
        mode="url",
        message="Sign in to the fake service",
        url="https://example.com/auth",
        elicitation_id="elic-6",
    )


def denied_event(cwd: Path) -> dict:
    return hook_input(
        "PermissionDenied",
        cwd=cwd,
        permission_mode="auto",
        tool_name="Bash",
        tool_input=BASH,
        tool_use_id="toolu_fake_adff231520994ed5ad99",
        reason="FAKE-CLASSIFIER: risky",
    )


ANSWERED = [  # (name, the prompt's event, the decision file as the bot or the hook writes it)
    # and whether the hook prints an answer (no answer: Claude Code's own dialog or flow)
    ("allow", permission_event, {"outcome": decisions.ALLOWED, "by": "1"}, True),
    (
        "always",
        permission_event,
        {"outcome": decisions.ALWAYS_ALLOWED, "suggestion": 0, "scope": "l", "by": "1"},
        True,
    ),
    (
        "deny",
        permission_event,
        {"outcome": decisions.DENIED, "message": "Denied from Discord by Ann.", "by": "1"},
        True,
    ),
    ("tell", permission_event, {"outcome": decisions.TOLD_INSTEAD, "message": "run tests"}, True),
    (
        "timeout",
        permission_event,
        {"outcome": decisions.TIMED_OUT, "left_to_terminal": False},
        True,
    ),
    (
        "timeout, left to the terminal",
        permission_event,
        {"outcome": decisions.TIMED_OUT, "left_to_terminal": True},
        False,
    ),
    (
        "answered in the terminal",
        permission_event,
        {"outcome": decisions.ANSWERED_ELSEWHERE, "event": "PostToolUse"},
        False,
    ),
    (
        "question answered",
        question_event,
        {"outcome": decisions.ANSWERED, "answers": ANSWERS},
        True,
    ),
    (
        "plan approved",
        plan_event,
        {"outcome": decisions.PLAN_APPROVED, "mode": "acceptEdits"},
        True,
    ),
    (
        "plan approved with notes",
        plan_event,  # updatedInput.plan: ExitPlanMode's input is open
        {"outcome": decisions.PLAN_APPROVED, "mode": "default", "message": "keep the old API"},
        True,
    ),
    (
        "plan sent back",
        plan_event,
        {"outcome": decisions.KEEP_PLANNING, "message": "add tests first"},
        True,
    ),
    ("form sent", form_event, {"outcome": decisions.ACCEPTED, "content": CONTENT}, True),
    ("link followed", url_event, {"outcome": decisions.ACCEPTED}, True),
    ("form declined", form_event, {"outcome": decisions.DECLINED}, True),
    ("form cancelled", form_event, {"outcome": decisions.CANCELLED}, True),
    ("form left to the terminal", form_event, {"outcome": decisions.TO_TERMINAL}, False),
    (
        "form interrupted",
        form_event,
        {"outcome": decisions.ANSWERED_ELSEWHERE, "event": "interrupted"},
        True,
    ),  # cancel
    (
        "form timed out",
        form_event,
        {"outcome": decisions.TIMED_OUT, "left_to_terminal": False},
        True,
    ),
    ("retry", denied_event, {"outcome": decisions.RETRY, "by": "1"}, True),
    ("no retry", denied_event, {"outcome": decisions.NO_RETRY, "by": "1"}, False),
]


def test_every_answer_to_a_prompt_is_in_the_contract(
    tmp_path: Path, emu: Emulator, hook_contract: HookContract
) -> None:
    """All prompts at once (a bridge home each): one hook process per answer, as in use."""
    waiting = []
    for n, (name, make_event, decision, prints) in enumerate(ANSWERED):
        (tmp_path / str(n)).mkdir()
        hooks = Hooks(tmp_path / str(n), emu)
        event = make_event(hooks.project)
        waiting.append((name, event, decision, prints, hooks, hooks.start(event)))
    try:
        for *_, decision, _prints, hooks, _hook in waiting:
            request = hooks.posted_request()
            decisions.decide(hooks.runtime, request.id, Decision.from_dict(decision))
        printed = [
            (name, event, prints, hooks.printed(hook))
            for name, event, _decision, prints, hooks, hook in waiting
        ]
    finally:
        for *_, hook in waiting:
            hook.kill()
    wrong = []
    for name, event, prints, output in printed:
        assert (output is not None) == prints, (name, output)  # None: Claude Code decides
        if output is None:
            continue
        errors = hook_contract.output_errors(event["hook_event_name"], output)
        wrong += [f"{name}: {error}\n    {json.dumps(output)}" for error in errors]
    assert not wrong, f"not in {hook_contract.about()}:\n" + "\n".join(wrong)


def test_always_with_every_suggestion_at_every_scope_and_every_plan_mode_is_in_the_contract(
    hook_contract: HookContract,
) -> None:
    """What varies within a kind above, answered in-process (what the hook prints is
    ``cli_answer``'s result as JSON): every kind of suggestion at every scope, every mode a
    plan's approval switches to."""
    request = Request(
        id=decisions.new_id(), tool_name="Bash", tool_input=BASH, permission_suggestions=SUGGESTIONS
    )
    plan = Request(id=decisions.new_id(), kind="plan", tool_name="ExitPlanMode", tool_input=PLAN)
    answers = [
        *[
            cli_answer(
                request, Decision(outcome=decisions.ALWAYS_ALLOWED, suggestion=n, scope=scope)
            )
            for n in range(len(SUGGESTIONS))
            for scope in SCOPES
        ],
        *[
            cli_answer(plan, Decision(outcome=decisions.PLAN_APPROVED, mode=mode, message=notes))
            for mode in PLAN_MODES.values()
            for notes in (None, "keep the old API")
        ],
    ]
    assert len(answers) == len(SUGGESTIONS) * len(SCOPES) + 2 * len(PLAN_MODES)
    for answer in answers:
        assert answer is not None
        hook_contract.check_output("PermissionRequest", fastjson.loads(fastjson.dumps(answer)))


def test_every_outcome_a_decision_can_have_is_answered_above() -> None:
    # every outcome constant of bridge/state/decisions.py (its other text constants: suffixes)
    outcomes = {
        value
        for name, value in vars(decisions).items()
        if name.isupper() and isinstance(value, str) and not value.startswith(".")
    }
    assert outcomes == {decision["outcome"] for _, _, decision, _ in ANSWERED}
    assert {s["type"] for s in SUGGESTIONS} >= {"addRules", "addDirectories", "setMode"}


# --- the other events --------------------------------------------------------------------------


def test_pre_tool_use_asks_for_permission_tools_in_the_contract(
    hooks: Hooks, hook_contract: HookContract
) -> None:
    ask = hooks.run(
        hook_input(
            "PreToolUse",
            cwd=hooks.project,
            permission_mode="default",
            tool_name="Bash",
            tool_input=BASH,
        )
    )
    assert ask is not None and ask["hookSpecificOutput"]["permissionDecision"] == "ask"
    hook_contract.check_output("PreToolUse", ask)
    other = hook_input(
        "PreToolUse", cwd=hooks.project, tool_name="Read", tool_input={"file_path": "/etc/hosts"}
    )
    assert hooks.run(other) is None


def quiet_events(cwd: Path) -> list[dict]:
    """An input of every other event the bridge registers, as Claude Code sends it."""
    tool = {"cwd": cwd, "permission_mode": "default", "tool_name": "Bash", "tool_input": BASH}
    return [
        hook_input("SessionStart", cwd=cwd, source="startup", model="claude-opus-5-5"),
        hook_input("UserPromptSubmit", cwd=cwd, permission_mode="default", prompt="make a file"),
        hook_input("PostToolUse", **tool, duration_ms=75),
        hook_input("PostToolUseFailure", **tool),
        hook_input(
            "MessageDisplay",
            cwd=cwd,
            message_id="c9940e11-0000-4000-8000-000000000002",
            final=True,
            delta="Creating a file.",
        ),
        hook_input(
            "Notification",
            cwd=cwd,
            message="Claude is waiting for your input",
            notification_type="idle_prompt",
        ),
        hook_input("Notification", cwd=cwd, message="Signed in", notification_type="auth_success"),
        hook_input("StopFailure", cwd=cwd, error="rate_limit", error_details="429"),
        hook_input(
            "Stop",
            cwd=cwd,
            permission_mode="default",
            last_assistant_message="Done.",
            background_tasks=[],
            session_crons=[],
        ),
    ]


def test_every_other_hook_prints_nothing_or_what_the_contract_allows(
    hooks: Hooks, hook_contract: HookContract
) -> None:
    events = quiet_events(hooks.project)
    running = [(event["hook_event_name"], hooks.start(event)) for event in events[:-1]]
    printed = [(name, hooks.printed(hook)) for name, hook in running]
    printed.append(("Stop", hooks.run(events[-1])))  # after the turn's other events, as in use
    for name, output in printed:
        if output is not None:
            hook_contract.check_output(name, output)
    assert hooks.emu.client.messages(hooks.channel)  # the hooks did their work meanwhile


def test_every_registered_event_is_run_above(hook_contract: HookContract, tmp_path) -> None:
    covered = {"PreToolUse"} | {
        event["hook_event_name"]
        for event in [*quiet_events(tmp_path), *(e(tmp_path) for _, e, _, _ in ANSWERED)]
    }
    assert set(HOOKS) == covered  # a new hook: add its outputs to this file
    assert set(HOOKS) <= set(hook_contract.events)  # and Claude Code has each of them


def test_a_threads_prompt_names_its_conversation_in_the_contract(
    hooks: Hooks, hook_contract: HookContract
) -> None:
    """UserPromptSubmit in a thread's session answers ``sessionTitle`` (the thread's name)
    until Claude Code reports that title back."""
    thread = "100000000000000077"
    path = Path(hooks.env["DISCORD_BRIDGE_HOME"]) / "config.json"
    config = json.loads(path.read_text())
    config["servers"][0]["projects"][0]["threads"] = [
        {"name": "fix the login", "channelId": thread}
    ]
    path.write_text(json.dumps(config))
    hooks.env["DISCORD_BRIDGE_THREAD_ID"] = thread
    prompt = {"cwd": hooks.project, "permission_mode": "default", "prompt": "hello"}
    named = hooks.run(hook_input("UserPromptSubmit", **prompt))
    assert named == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "sessionTitle": "fix the login"}
    }
    hook_contract.check_output("UserPromptSubmit", named)
    again = hook_input("UserPromptSubmit", **prompt, session_title="fix the login")
    assert hooks.run(again) is None
