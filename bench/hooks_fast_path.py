"""Hook fast path: each installed hook command, run as Claude Code runs it, vs `python -c pass`.

Cases: (1) a session in a directory no project maps (no env marker): the hook must exit at
once; (2) a bridge session (env marker) whose event has nothing to send (an empty reply; a
SessionStart, which only records the session id). PermissionRequest, Elicitation,
PermissionDenied and StopFailure are measured unmapped only: for a bridge session they post a
prompt (or a notice: what ended the turn, once per failed turn), which is no fast path.

Then the decision hooks with the events they really get on every tool call: PreToolUse
(``pre_tool_use.py``, a Bash call) and PostToolUse (``session_event.py``), each unmapped,
mapped with no prompt pending, mapped while another session's prompt is pending (one request
file to read), and PreToolUse for a tool in ``permissionTools`` (answers "ask").

Last, the statusLine command (run on every refresh of Claude Code's status line; without a
statusLine of the user's own, it prints the bridge's), unmapped and for a bridge session
(whose figures it caches).

Each command is run through ``sh -c`` with the event JSON on stdin, interleaved with the
baseline ``python -c pass`` on the same interpreter, and the medians are compared (``+ms``:
the median extra time of a hook run over the baseline run next to it). The runtime dir
exists, as it does while the bot runs. Target: ≤ 1.3×.

    .venv/bin/python bench/hooks_fast_path.py [--runs 60]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bridge.claude import settings as claude_settings
from bridge.state import decisions, runtime
from bridge_testkit import hook_input

CHANNEL = "100000000000000003"
# a mapped one always posts (StopFailure: what ended the turn, once per failed turn)
POSTING = ("PermissionRequest", "Elicitation", "PermissionDenied", "StopFailure")
ASKING_TOOL = "WebFetch"  # in permissionTools: PreToolUse answers "ask"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        env, project = setup(tmp)
        baseline = f"{sys.executable} -c pass"
        mapped = {**env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
        print(f"interpreter: {sys.executable}  runs per case: {runs}")
        print(f"{'hook':<20} {'case':<36} {'median ms':>9} {'baseline':>9} {'ratio':>6} {'+ms':>5}")
        for event, hook in claude_settings.HOOKS.items():
            command = claude_settings.hook_command(hook.script)
            cases = [("unmapped cwd", env, tmp), ("mapped, nothing to send", mapped, project)]
            if event == "Notification":
                reply_pinged(runtime.Runtime(env["DISCORD_BRIDGE_RUNTIME_DIR"]))
            for case, case_env, cwd in cases[:1] if event in POSTING else cases:
                stdin = json.dumps(event_input(event, cwd)).encode()
                report(event, case, side_by_side(command, baseline, stdin, case_env, cwd, runs))
        print()
        print("decision hooks, real tool-call events:")
        rt = runtime.Runtime(env["DISCORD_BRIDGE_RUNTIME_DIR"])
        for event, script, tool in (
            ("PreToolUse", "pre_tool_use.py", "Bash"),
            ("PostToolUse", "session_event.py", "Bash"),
            ("PreToolUse", "pre_tool_use.py", ASKING_TOOL),
        ):
            command = claude_settings.hook_command(script)
            if tool == ASKING_TOOL:
                cases = [("mapped, permissionTools → ask", mapped, project, False)]
            else:
                cases = [
                    ("unmapped cwd", env, tmp, False),
                    ("mapped, nothing pending", mapped, project, False),
                    ("mapped, other session's prompt open", mapped, project, True),
                ]
            for case, case_env, cwd, other_pending in cases:
                request_id = pending_elsewhere(rt) if other_pending else None
                stdin = json.dumps(tool_event(event, cwd, tool)).encode()
                figures = side_by_side(
                    command, baseline, stdin, case_env, cwd, runs, output=tool == ASKING_TOOL
                )
                if request_id:
                    still = decisions.read_request(rt, request_id)
                    assert still is not None and decisions.is_pending(rt, still)
                    decisions.close(rt, request_id)
                report(f"{event} {tool}", case, figures)
        print()
        print("statusLine command:")
        command = claude_settings.status_line_command()
        status_cases = [("unmapped cwd", env, tmp), ("mapped, caches", mapped, project)]
        for case, case_env, cwd in status_cases:
            stdin = json.dumps(status_event(cwd)).encode()
            figures = side_by_side(command, baseline, stdin, case_env, cwd, runs, output=True)
            report("statusLine", case, figures)


def report(hook: str, case: str, figures: tuple[float, float, float]) -> None:
    median, base, extra = figures
    print(f"{hook:<20} {case:<36} {median:9.1f} {base:9.1f} {median / base:6.2f} {extra:5.1f}")


def setup(tmp: str) -> tuple[dict[str, str], str]:
    home = os.path.join(tmp, "bridge-home")
    project = os.path.join(tmp, "project")
    os.makedirs(home)
    os.makedirs(project)
    cfg = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {
                    "botToken": "unused",
                    "ownerUserId": "100000000000000002",
                    # Unroutable: a hook that tried the network on these paths would stall.
                    "apiBaseUrl": "http://127.0.0.1:9/api/v10",
                },
                "permissionTools": [ASKING_TOOL],
                "projects": [{"name": "p", "channelId": CHANNEL, "projectPath": project}],
            }
        ],
    }
    with open(os.path.join(home, "config.json"), "w") as handle:
        json.dump(cfg, handle)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": tmp,
        "DISCORD_BRIDGE_HOME": home,
        "DISCORD_BRIDGE_RUNTIME_DIR": os.path.join(tmp, "runtime"),
        "DISCORD_BRIDGE_STATE_DIR": os.path.join(tmp, "runtime"),
    }
    # hook_command() writes these on the command line, as `hooks install` would.
    os.environ.update({k: v for k, v in env.items() if k.startswith("DISCORD_BRIDGE_")})
    runtime.Runtime(env["DISCORD_BRIDGE_RUNTIME_DIR"]).ensure()  # the bot made it
    return env, project


SESSION = "cbe55835-1c2d-4e5f-8a9b-0123456789ab"
COMMON = {"session_id": SESSION, "transcript_path": "/nonexistent.jsonl"}
NPM_TEST = {"command": "npm test", "description": "Run the tests"}


def tool_event(event: str, cwd: str, tool: str) -> dict:
    fields = {"permission_mode": "default", "tool_name": tool, "tool_input": NPM_TEST}
    if event != "PermissionRequest":  # the one tool event without the call's id
        fields["tool_use_id"] = "toolu_bench"
    if event == "PostToolUse":
        fields["tool_response"] = {"stdout": "ok", "stderr": "", "interrupted": False}
    return hook_input(event, **COMMON, cwd=cwd, **fields)


def pending_elsewhere(rt: runtime.Runtime) -> str:
    """A prompt of another session, waiting (this process stands in for its hook)."""
    request_id = decisions.new_id()
    decisions.write_request(rt, decisions.Request(
        id=request_id, kind="permission", session_id="other", channel_id=CHANNEL,
        tool_name="Bash", tool_input={"command": "rm -rf build"},
        deadline=time.time() + 3600, pid=os.getpid()))  # fmt: skip
    return request_id


# Each event as Claude Code sends it, with nothing for a bridge session to send: an empty
# reply, the idle notice after a reply that pinged already (reply_pinged), an empty piece.
NOTHING_TO_SEND = {
    "Stop": {"last_assistant_message": ""},
    "StopFailure": {"error": "unknown"},
    "SessionStart": {"source": "startup", "model": "claude-opus-5-5"},
    "UserPromptSubmit": {"prompt": "go"},
    "MessageDisplay": {"message_id": "c9940e11-0000-4000-8000-000000000002", "final": False,
                       "delta": ""},
    "Notification": {"message": "Claude is waiting for your input",
                     "notification_type": "idle_prompt"},
    "Elicitation": {"mcp_server_name": "elic", "message": "Name it", "mode": "form",
                    "requested_schema": {"type": "object",
                                         "properties": {"name": {"type": "string"}}}},
    "PermissionDenied": {"permission_mode": "auto", "tool_name": "Bash", "tool_input": NPM_TEST,
                         "tool_use_id": "toolu_bench", "reason": "risky"},
}  # fmt: skip


def reply_pinged(rt: runtime.Runtime) -> None:
    """The session's reply has pinged the owner for this wait (bridge/handlers/notify.py)."""
    os.makedirs(rt.waits, mode=0o700, exist_ok=True)
    with open(os.path.join(rt.waits, SESSION), "w"):
        pass


def status_event(cwd: str) -> dict:
    """What Claude Code gives the statusLine command (the parts the bridge reads; no
    hook_input: it is not a hook event)."""
    return {**COMMON, "cwd": cwd, "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"},
            "context_window": {"used_percentage": 12}}  # fmt: skip


def event_input(event: str, cwd: str) -> dict:
    if event in NOTHING_TO_SEND:
        return hook_input(event, **COMMON, cwd=cwd, **NOTHING_TO_SEND[event])
    return tool_event(event, cwd, "Bash")  # the tool events: a call not in permissionTools


def side_by_side(
    command: str, baseline: str, stdin: bytes, env: dict, cwd: str, runs: int, output=False
) -> tuple[float, float, float]:
    """Median hook time, median baseline time, and the median of the paired differences
    (each hook run next to a baseline run: steadier than the ratio on a busy machine)."""
    hook_times, base_times = [], []
    for _ in range(3):  # warm the page cache and the .pyc files
        run(command, stdin, env, cwd, output)
        run(baseline, stdin, env, cwd)
    for _ in range(runs):
        hook_times.append(run(command, stdin, env, cwd, output))
        base_times.append(run(baseline, stdin, env, cwd))
    extra = statistics.median(h - b for h, b in zip(hook_times, base_times, strict=True))
    return statistics.median(hook_times), statistics.median(base_times), extra


def run(command: str, stdin: bytes, env: dict, cwd: str, output: bool = False) -> float:
    """Milliseconds for one run; ``output``: the hook must answer (else it must be silent)."""
    start = time.perf_counter()
    result = subprocess.run(["sh", "-c", command], input=stdin, env=env, cwd=cwd,
                            capture_output=True)  # fmt: skip
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0 or bool(result.stdout) != output or result.stderr:
        raise SystemExit(
            f"{command} misbehaved: {result.returncode} {result.stdout!r} {result.stderr!r}"
        )
    return elapsed


if __name__ == "__main__":
    main()
