"""The decision hooks run as Claude Code runs them (``python -I -S hooks/<script>``, event JSON
on stdin, a throwaway bridge home and runtime dir): PreToolUse asks for ``permissionTools``
and is silent otherwise; a later event closes its own session's prompt only; a
PermissionRequest that cannot reach Discord leaves the dialog to the terminal at once."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridge.claude import settings as claude_settings
from bridge.state import away, decisions, locations, runtime, status_cache
from bridge_testkit import hook_input

HOOKS = Path(__file__).resolve().parents[3] / "hooks"
CHANNEL = "100000000000000003"
SESSION = "cbe55835-1c2d-4e5f-8a9b-0123456789ab"
OTHER_SESSION = "8eee36f1-e3c7-4476-b0d3-591be9f4b59b"
BASH_INPUT = {"command": "touch made-by-bash.txt", "description": "Create a file"}


def closed_port() -> int:
    """A local port nothing listens on: connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Bridge:
    """A bridge home with one project (``tmp/project``) and a private runtime dir."""

    def __init__(self, tmp_path: Path, permission_tools: list[str], api_base: str) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir()
        home = tmp_path / "bridge-home"
        home.mkdir(mode=0o700)
        cfg = {
            "schemaVersion": 2,
            "servers": [
                {
                    "name": "main",
                    "discord": {
                        "botToken": "unused",
                        "ownerUserId": "100000000000000002",
                        "apiBaseUrl": api_base,
                    },
                    "permissionTools": permission_tools,
                    "projects": [
                        {"name": "p", "channelId": CHANNEL, "projectPath": str(self.project)}
                    ],
                }
            ],
        }
        (home / "config.json").write_text(json.dumps(cfg))
        (home / "config.json").chmod(0o600)
        self.runtime = runtime.Runtime(str(tmp_path / "runtime"))
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "DISCORD_BRIDGE_HOME": str(home),
            "DISCORD_BRIDGE_RUNTIME_DIR": self.runtime.root,
            "DISCORD_BRIDGE_STATE_DIR": self.runtime.root,
        }

    def run(
        self, script: str, stdin: dict | bytes, cwd: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess:
        data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
        env = {**self.env, **env}
        # As `hooks install` writes them: a hook takes its locations from its command line.
        return subprocess.run(
            [sys.executable, "-I", "-S", str(HOOKS / script), *locations.hook_args(env)],
            input=data,
            env=env,
            cwd=cwd or self.project,
            capture_output=True,
            timeout=30,
        )

    def no_direct_posts(self) -> None:
        """``hooksPostDirectly: false``: what the bot does not take is spooled at once."""
        path = Path(self.env["DISCORD_BRIDGE_HOME"]) / "config.json"
        cfg = json.loads(path.read_text())
        cfg["servers"][0]["discord"]["hooksPostDirectly"] = False
        path.write_text(json.dumps(cfg))

    def hook_log(self) -> str:
        path = Path(self.runtime.hook_log)
        return path.read_text() if path.exists() else ""


@pytest.fixture
def bridge(tmp_path) -> Bridge:
    api = f"http://127.0.0.1:{closed_port()}/api/v10"
    return Bridge(tmp_path, ["Bash", "Read", "AskUserQuestion", "ExitPlanMode", "mcp__gh__*"], api)


def event(name: str, cwd: Path, session: str = SESSION, **fields) -> dict:
    return hook_input(name, session_id=session, cwd=cwd, **fields)


def tool_event(name: str, cwd: Path, tool: str, tool_input: dict, **fields) -> dict:
    return event(
        name, cwd, permission_mode="default", tool_name=tool, tool_input=tool_input, **fields
    )


def quiet(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == b""
    assert result.stderr == b""


# --- PreToolUse -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Bash", BASH_INPUT),
        ("Read", {"file_path": "/etc/hosts"}),
        ("mcp__gh__create_issue", {"title": "x"}),
    ],
)
def test_a_permission_tool_gets_ask(bridge: Bridge, tool: str, tool_input: dict) -> None:
    result = bridge.run(
        "pre_tool_use.py", tool_event("PreToolUse", bridge.project, tool, tool_input)
    )
    assert result.returncode == 0 and result.stderr == b""
    assert json.loads(result.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": f"discord-bridge: {tool} is in permissionTools",
        }
    }


def test_the_env_marker_maps_a_session_outside_the_project(bridge: Bridge, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    stdin = tool_event("PreToolUse", elsewhere, "Bash", BASH_INPUT)
    quiet(bridge.run("pre_tool_use.py", stdin, cwd=elsewhere))  # not ours without the marker
    marked = bridge.run("pre_tool_use.py", stdin, cwd=elsewhere, DISCORD_BRIDGE_CHANNEL_ID=CHANNEL)
    assert json.loads(marked.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Write", {"file_path": "/p/a.txt", "content": "x"}),
        ("mcp__other__x", {}),
        (
            "AskUserQuestion",
            {
                "questions": [
                    {
                        "question": "Which?",
                        "header": "H",
                        "multiSelect": False,
                        "options": [{"label": "a"}, {"label": "b"}],
                    }
                ]
            },
        ),
        ("ExitPlanMode", {"plan": "# Plan", "planFilePath": "/p/.claude/plans/x.md"}),
    ],
)
def test_other_tools_get_no_output(bridge: Bridge, tool: str, tool_input: dict) -> None:
    """AskUserQuestion and ExitPlanMode show their own dialog: never "ask", even listed."""
    quiet(bridge.run("pre_tool_use.py", tool_event("PreToolUse", bridge.project, tool, tool_input)))


@pytest.mark.parametrize(
    "stdin",
    [b"{not json", b"[1, 2]", b"\xff\xfe\x00", b"", b'{"tool_name": 7}'],
)
def test_malformed_input_exits_0_without_output(bridge: Bridge, stdin: bytes) -> None:
    result = bridge.run("pre_tool_use.py", stdin)
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr == b""  # errors go to the hook log, never to Claude Code's screen


def test_without_a_bridge_config_nothing_happens(bridge: Bridge, tmp_path) -> None:
    stdin = tool_event("PreToolUse", bridge.project, "Bash", BASH_INPUT)
    quiet(bridge.run("pre_tool_use.py", stdin, DISCORD_BRIDGE_HOME=str(tmp_path / "none")))
    assert not os.path.exists(bridge.runtime.root)


# --- a later event closes its own session's prompts -----------------------------------------


def pending(bridge: Bridge, session: str = SESSION, **fields) -> decisions.Request:
    rt = bridge.runtime.ensure()
    now = time.time()
    request = {
        "id": decisions.new_id(),
        "kind": "permission",
        "session_id": session,
        "channel_id": CHANNEL,
        "tool_name": "Bash",
        "tool_input": BASH_INPUT,
        "created": now,
        "deadline": now + 600,
        "timeout": 600,
        "pid": os.getpid(),  # a live process: this test's
        **fields,
    }
    record = decisions.Request.from_dict(request)
    assert record is not None
    decisions.write_request(rt, record)
    return record


def test_post_tool_use_closes_the_same_call_of_the_same_session(bridge: Bridge) -> None:
    mine, theirs = pending(bridge), pending(bridge, OTHER_SESSION)
    post = tool_event(
        "PostToolUse",
        bridge.project,
        "Bash",
        BASH_INPUT,
        tool_response={"stdout": "", "stderr": "", "interrupted": False},
    )
    quiet(bridge.run("session_event.py", post))
    assert decisions.read_decision(bridge.runtime, mine.id) == decisions.Decision(
        outcome=decisions.ANSWERED_ELSEWHERE,
        event="PostToolUse",
    )
    assert decisions.read_decision(bridge.runtime, theirs.id) is None
    assert decisions.is_pending(bridge.runtime, theirs)
    assert bridge.hook_log() == ""


def test_post_tool_use_of_another_call_closes_nothing(bridge: Bridge) -> None:
    request = pending(bridge)
    other = tool_event("PostToolUse", bridge.project, "Read", {"file_path": "/etc/hosts"})
    quiet(bridge.run("session_event.py", other))
    failed = tool_event("PostToolUseFailure", bridge.project, "Read", {"file_path": "/etc/hosts"})
    quiet(bridge.run("session_event.py", failed))
    assert decisions.is_pending(bridge.runtime, request)


def test_user_prompt_submit_closes_every_prompt_of_its_session(bridge: Bridge) -> None:
    mine = [pending(bridge), pending(bridge, tool_name="Write", tool_input={"file_path": "/p/a"})]
    theirs = pending(bridge, OTHER_SESSION)
    quiet(bridge.run("session_event.py", event("UserPromptSubmit", bridge.project, prompt="go")))
    assert all(not decisions.is_pending(bridge.runtime, r) for r in mine)
    assert decisions.is_pending(bridge.runtime, theirs)


def test_pre_tool_use_of_another_call_leaves_the_prompt_open_and_still_asks(
    bridge: Bridge,
) -> None:
    """Issue 13.13: another tool call starting says nothing about the open dialog."""
    mine, theirs = pending(bridge), pending(bridge, OTHER_SESSION)
    result = bridge.run("pre_tool_use.py", tool_event("PreToolUse", bridge.project, "Bash", {}))
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert decisions.read_decision(bridge.runtime, mine.id) is None
    assert decisions.is_pending(bridge.runtime, mine) and decisions.is_pending(
        bridge.runtime, theirs
    )


# --- PermissionRequest with Discord unreachable ---------------------------------------------


def test_permission_request_with_discord_unreachable_leaves_the_terminal(bridge: Bridge) -> None:
    stdin = tool_event(
        "PermissionRequest",
        bridge.project,
        "Bash",
        BASH_INPUT,
        permission_suggestions=[
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
        ],
    )
    start = time.monotonic()
    result = bridge.run("permission_request.py", stdin, DISCORD_BRIDGE_RETRY_SECONDS="0.2")
    elapsed = time.monotonic() - start
    quiet(result)  # no decision: Claude Code's own dialog stays
    assert elapsed < 5, elapsed
    assert os.listdir(bridge.runtime.prompts) == []  # its request file is gone
    assert f"prompt for #{CHANNEL} not posted" in bridge.hook_log()


def test_stop_failure_with_discord_unreachable_spools_its_notice_before_its_timeout(
    bridge: Bridge,
) -> None:
    """Claude Code kills the StopFailure hook after 10 s: with Discord refusing connections
    (and no bot), the notice must be in the outbox well before that."""
    bridge.runtime.ensure()
    stdin = event(
        "StopFailure",
        bridge.project,
        error="authentication_failed",
        last_assistant_message="Not logged in · Please run /login",
    )
    started = time.monotonic()
    quiet(bridge.run(claude_settings.HOOKS["StopFailure"].script, stdin))
    took = time.monotonic() - started
    assert took < claude_settings.HOOKS["StopFailure"].timeout - 2, took
    (spooled,) = Path(bridge.runtime.outbox, CHANNEL).glob("*.json")
    assert "Not logged in" in json.loads(spooled.read_text())["payload"]["content"]


def test_stop_failure_records_the_failed_turn_and_says_what_to_do(bridge: Bridge) -> None:
    """StopFailure (an API error ended the turn, no Stop follows) must close the status, and
    put Claude Code's own line with what to do in the channel (here: spooled, as with `try`
    while its bot is away)."""
    assert "StopFailure" in claude_settings.HOOKS
    bridge.no_direct_posts()
    bridge.runtime.ensure()
    details = "529 Overloaded"
    said = "API Error: Repeated 529 Overloaded errors"
    stdin = event(
        "StopFailure",
        bridge.project,
        error="overloaded",
        error_details=details,
        last_assistant_message=said,
    )
    quiet(bridge.run(claude_settings.HOOKS["StopFailure"].script, stdin))
    path = Path(bridge.runtime.progress) / f"{CHANNEL}.jsonl"
    (recorded,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert recorded["kind"] == "failed" and recorded["error"] == "overloaded"
    assert recorded["details"] == "529 Overloaded"
    (spooled,) = Path(bridge.runtime.outbox, CHANNEL).glob("*.json")
    content = json.loads(spooled.read_text())["payload"]["content"]
    assert content.startswith(f"⚠️ Claude Code stopped: {said}\n**What to do:** ")
    assert "overloaded" in content


def test_stop_failure_at_a_usage_limit_leaves_the_wait_to_the_bot(bridge: Bridge) -> None:
    """A usage limit (``rate_limit``): the wait is noted in the state dir for the bot, which
    posts "⏸ Usage limit" and resumes at the reset; no "stopped" notice is spooled."""
    bridge.no_direct_posts()
    bridge.runtime.ensure()
    said = "You've hit your 5-hour limit · resets 1:51pm (UTC)"
    stdin = event(
        "StopFailure",
        bridge.project,
        error="rate_limit",
        error_details="429 Too Many Requests",
        last_assistant_message=said,
    )
    quiet(bridge.run(claude_settings.HOOKS["StopFailure"].script, stdin))
    assert not list(Path(bridge.runtime.outbox).rglob("*.json"))
    wait = json.loads(Path(bridge.runtime.path("away"), f"limit-{CHANNEL}.json").read_text())
    assert wait["said"] == said and wait["state"] == "waiting" and wait["exact"] is False
    assert time.localtime(wait["resets_at"] - 60)[3:5] == (13, 51)  # the end of that minute


def test_a_resumed_session_with_a_costly_cache_rewrite_says_so(bridge: Bridge) -> None:
    """SessionStart ``resume`` with ``estimated_cache_write_usd`` from $0.50: said in the
    channel (it counts against a spend budget); a cheap one, or a fresh start, is not."""
    bridge.no_direct_posts()
    bridge.runtime.ensure()
    script = claude_settings.HOOKS["SessionStart"].script
    for source, cost in (("resume", 0.12), ("startup", 3.0), ("resume", 2.4)):
        stdin = event(
            "SessionStart",
            bridge.project,
            source=source,
            context_tokens=480000,
            estimated_cache_write_usd=cost,
            model="claude-opus-5-5",
        )
        quiet(bridge.run(script, stdin, DISCORD_BRIDGE_CHANNEL_ID=CHANNEL))
    spooled = list(Path(bridge.runtime.outbox).rglob("*.json"))
    contents = [json.loads(p.read_text())["payload"]["content"] for p in spooled]
    assert len(contents) == 1, contents
    assert contents[0].startswith("💸 This conversation was resumed with a cold prompt cache")
    assert "(480,000 tokens) to the cache again, about $2.40" in contents[0], contents[0]


def test_past_the_budget_a_tool_call_is_denied_and_the_turn_stopped(bridge: Bridge) -> None:
    """PreToolUse past ``budget.sessionUsd`` (Claude Code's cost in the statusLine cache):
    deny (the tool does not run) and ``continue: false`` (the turn stops), the stop noted
    once for the bot; below it, nothing is said."""
    path = Path(bridge.env["DISCORD_BRIDGE_HOME"]) / "config.json"
    cfg = json.loads(path.read_text())
    cfg["budget"] = {"sessionUsd": 1.0}
    path.write_text(json.dumps(cfg))
    rt = bridge.runtime.ensure()
    script = claude_settings.HOOKS["PreToolUse"].script
    call = tool_event(
        "PreToolUse", bridge.project, "Bash", {"command": "ls"}, tool_use_id="toolu_1"
    )
    status_cache.write_status(rt, SESSION, {"cost_usd": 0.95})
    below = bridge.run(script, call)
    assert below.returncode == 0 and b'"continue"' not in below.stdout, below
    assert not list(Path(rt.path("away")).glob("budget-*"))
    status_cache.write_status(rt, SESSION, {"cost_usd": 1.02})
    for _ in range(2):
        result = bridge.run(script, call)
        assert result.returncode == 0, result.stderr
        answer = json.loads(result.stdout)
        assert answer["continue"] is False
        decision = answer["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny"
        assert (
            "this session's budget is reached ($1.02 of $1.00)"
            in decision["permissionDecisionReason"]
        )
    stops = list(Path(rt.path("away")).glob("budget-*.json"))
    assert [p.name for p in stops] == [f"budget-{CHANNEL}.json"]
    assert json.loads(stops[0].read_text())["tool"] == "Bash"


def test_a_prompt_ends_a_usage_limit_wait(bridge: Bridge) -> None:
    rt = bridge.runtime.ensure()
    away.save(rt, "limit", CHANNEL, {"server": "main", "state": "waiting", "resets_at": None})
    prompt = event(
        "UserPromptSubmit",
        bridge.project,
        prompt="Your claude.ai usage limit has reset. Continue the task you were working on",
    )
    bridge.run(claude_settings.HOOKS["UserPromptSubmit"].script, prompt)
    wait = away.load(rt, "limit", CHANNEL)
    assert wait["state"] == "ended" and wait["ended_by"].startswith("Your claude.ai usage limit")
