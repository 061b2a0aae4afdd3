"""Hook fast path: each installed hook command, run as Claude Code runs it, vs `python -c pass`.

Cases: (1) a session in a directory no project maps (no env marker): the hook must exit at
once; (2) a bridge session (env marker) whose event has nothing to send (an empty reply; a
SessionStart, which only records the session id). PermissionRequest, Elicitation,
PermissionDenied and StopFailure are measured unmapped only: for a bridge session they post a
prompt (or a notice: what ended the turn, once per failed turn), which is no fast path.
UserPromptSubmit also in a git repository (the project the bench makes has none): it
snapshots the working tree as the turn starts (``bridge/handlers/turn_changes.py``), each
run a fresh turn (the record is removed after each run, as the turn's Stop would). A
checkout that takes that snapshot after the hook has answered, in a process of its own, is
timed without it (the CPU is spent meanwhile, off the prompt's path); the next run starts
once it is done.

Then the decision hooks with the events they really get on every tool call: PreToolUse
(``pre_tool_use.py``, a Bash call) and PostToolUse (``session_event.py``), each unmapped,
mapped with no prompt pending, mapped while another session's prompt is pending (one request
file to read), and PreToolUse for a tool in ``permissionTools`` (answers "ask").

Last, the statusLine command (run on every refresh of Claude Code's status line; without a
statusLine of the user's own, it prints the bridge's), unmapped and for a bridge session
(whose figures it caches).

Each command is run through ``sh -c`` with the event JSON on stdin, interleaved with the
baseline ``python -c pass`` on the same interpreter, and the medians are compared. Two figures
come from the same runs: wall clock (what Claude Code waits; ``+ms``: the median extra time of a
hook run over the baseline run next to it) and CPU time (user + system of the process, from
``getrusage``: much steadier than the wall clock on a loaded machine, since waiting for a CPU
does not count). The runtime dir exists, as it does while the bot runs. Target: ≤ 1.3×.

``--before DIR``: the hook commands of another checkout (``hooks install`` as that checkout
writes them, on this interpreter: with ``-I -S`` a hook imports the ``bridge`` beside its
script) are run too, in the same rounds (baseline, before, now, baseline, ...), and printed
side by side with this checkout's. ``--instructions``: instead of timing, the instructions
each command executes in user space, counted once by ``valgrind --tool=callgrind`` (the same
count whatever the machine's load; the kernel's share, file operations and process start, is
not in it), the command run directly rather than through ``sh``.

    .venv/bin/python bench/hooks_fast_path.py [--runs 60] [--before DIR] [--instructions]
                                              [--only HOOK]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from bridge.claude import settings as claude_settings
from bridge.state import decisions, runtime
from bridge_testkit import hook_input

CHANNEL = "100000000000000003"
# a mapped one always posts (StopFailure: what ended the turn, once per failed turn)
POSTING = ("PermissionRequest", "Elicitation", "PermissionDenied", "StopFailure")
ASKING_TOOL = "WebFetch"  # in permissionTools: PreToolUse answers "ask"
NOW = "now"  # this checkout's label
MISSING = f"{'—':>13}"  # a hook the other checkout does not have (an event new since)


Setup = Callable[[], Callable[[], None] | None]  # a case's set-up; returns its check and undo


class Case:
    """One row: a hook command (by script, or ``STATUS_LINE``) fed one event."""

    def __init__(
        self,
        hook: str,
        name: str,
        script: str,
        stdin: bytes,
        env: dict,
        cwd: str,
        output: bool = False,
        around: Setup | None = None,
        after_each: Callable[[], None] | None = None,
    ) -> None:
        self.hook, self.name, self.script, self.stdin = hook, name, script, stdin
        self.env, self.cwd, self.output = env, cwd, output
        self.around = around  # sets the case up, returns what checks and undoes it
        self.after_each = after_each or (lambda: None)  # after every run of a hook
        self.title = ""  # printed above the case: the first of a group


STATUS_LINE = "statusLine"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--before", help="a checkout whose hooks are measured next to these")
    parser.add_argument("--only", help="the cases whose hook names this (e.g. SessionStart)")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions (callgrind) instead of timing",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env, project = setup(tmp)
        commands = {NOW: this_checkout_commands()}
        if args.before:
            commands = {"before": checkout_commands(args.before), **commands}
        print(f"interpreter: {sys.executable}  runs per case: {args.runs}  load average: {load()}")
        if args.before:
            print(f"before: {os.path.abspath(args.before)}  now: {checkout_root()}")
        print(header(list(commands), args.instructions))
        for case in cases(env, project, tmp):
            if args.only and args.only not in case.hook:
                continue
            if case.title:
                print(f"\n{case.title}")
            undo = case.around() if case.around else None
            try:
                if args.instructions:
                    row = count_case(case, commands)
                else:
                    row = time_case(case, commands, args.runs)
            finally:
                if undo:
                    undo()
            print(row)
        print(f"load average at the end: {load()}")


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def settings_argv(command: str) -> list[str]:
    """An installed command's interpreter argv (a checkout without ``python_argv`` never
    prefixed one)."""
    python_argv = getattr(claude_settings, "python_argv", None)
    return python_argv(command) if python_argv else shlex.split(command, comments=True)


def checkout_root() -> str:
    return os.path.dirname(claude_settings.HOOKS_DIR)


def this_checkout_commands() -> dict[str, str]:
    scripts = {hook.script for hook in claude_settings.HOOKS.values()} | {"pre_tool_use.py"}
    found = {script: claude_settings.hook_command(script) for script in scripts}
    found[STATUS_LINE] = claude_settings.status_line_command()
    return found


# Run in the other checkout, by this interpreter: its own settings module says how it
# installs its hooks (flags, arguments), so the commands are the ones it would really run.
_ASK_CHECKOUT = """
import json, sys
from bridge.claude import settings
scripts = {h.script for h in settings.HOOKS.values()} | {"pre_tool_use.py"}
found = {s: settings.hook_command(s) for s in scripts}
found["statusLine"] = settings.status_line_command()
print(json.dumps(found))
"""


def checkout_commands(checkout: str) -> dict[str, str]:
    root = os.path.abspath(checkout)
    result = subprocess.run(
        [sys.executable, "-S", "-c", f"import sys; sys.path.insert(0, {root!r})\n{_ASK_CHECKOUT}"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ""},
        cwd=root,
    )
    if result.returncode != 0:
        raise SystemExit(f"cannot read the hook commands of {root}: {result.stderr[-2000:]}")
    found = json.loads(result.stdout)
    for command in found.values():
        script = settings_argv(command)[3]
        if not script.startswith(root + os.sep):
            raise SystemExit(f"{root}: its hooks are not its own ({script})")
    return found


def cases(env: dict[str, str], project: str, tmp: str) -> list[Case]:
    """Every row of the table, in order."""
    mapped = {**env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
    rt = runtime.Runtime(env["DISCORD_BRIDGE_RUNTIME_DIR"])
    found = []
    for event, hook in claude_settings.HOOKS.items():
        both = [("unmapped cwd", env, tmp), ("mapped, nothing to send", mapped, project)]
        for name, case_env, cwd in both[:1] if event in POSTING else both:
            stdin = json.dumps(event_input(event, cwd)).encode()
            around = (lambda: reply_pinged(rt)) if event == "Notification" else None
            found.append(Case(event, name, hook.script, stdin, case_env, cwd, around=around))
        if event == "UserPromptSubmit":  # the turn's start snapshot: a project in git
            repo = git_project(project)
            stdin = json.dumps(event_input(event, repo)).encode()
            found.append(
                Case(
                    event,
                    "mapped, git repository",
                    hook.script,
                    stdin,
                    mapped,
                    repo,
                    after_each=lambda: turn_consumed(rt),
                )
            )
    decision_hooks = len(found)
    for event, script, tool in (
        ("PreToolUse", "pre_tool_use.py", "Bash"),
        ("PostToolUse", "session_event.py", "Bash"),
        ("PreToolUse", "pre_tool_use.py", ASKING_TOOL),
    ):
        if tool == ASKING_TOOL:
            variants = [("mapped, permissionTools → ask", mapped, project, False)]
        else:
            variants = [
                ("unmapped cwd", env, tmp, False),
                ("mapped, nothing pending", mapped, project, False),
                ("mapped, other session's prompt open", mapped, project, True),
            ]
        for name, case_env, cwd, other_pending in variants:
            stdin = json.dumps(tool_event(event, cwd, tool)).encode()
            around = (lambda: pending_elsewhere(rt)) if other_pending else None
            found.append(
                Case(
                    f"{event} {tool}",
                    name,
                    script,
                    stdin,
                    case_env,
                    cwd,
                    output=tool == ASKING_TOOL,
                    around=around,
                )
            )
    status_line = len(found)
    for name, case_env, cwd in (("unmapped cwd", env, tmp), ("mapped, caches", mapped, project)):
        stdin = json.dumps(status_event(cwd)).encode()
        found.append(Case(STATUS_LINE, name, STATUS_LINE, stdin, case_env, cwd, output=True))
    found[decision_hooks].title = "decision hooks, real tool-call events:"
    found[status_line].title = "statusLine command:"
    return found


def header(labels: list[str], instructions: bool) -> str:
    unit = "M instr." if instructions else "wall ms"
    figures = "".join(f"{label:>13}" for label in labels)
    line = f"{'hook':<20} {'case':<36} {unit:>9}{figures}"
    if not instructions:
        line += "   +ms |" + "".join(f"{'cpu ' + label:>11}" for label in labels)
    return line


def time_case(case: Case, commands: dict[str, dict[str, str]], runs: int) -> str:
    """Each checkout's command and the baseline, in rounds; their medians side by side."""
    baseline = f"{sys.executable} -c pass"
    argvs = {label: found[case.script] for label, found in commands.items() if case.script in found}
    walls: dict[str, list[float]] = {label: [] for label in [*argvs, "base"]}
    cpus: dict[str, list[float]] = {label: [] for label in walls}
    extra = []
    for round_ in range(runs + 3):  # the first 3 warm the page cache and the .pyc files
        base = measure(baseline, case.stdin, case.env, case.cwd)
        for label, command in argvs.items():
            wall, cpu = measure(command, case.stdin, case.env, case.cwd, case.output)
            case.after_each()
            if round_ >= 3:
                walls[label].append(wall)
                cpus[label].append(cpu)
                if label == NOW:
                    extra.append(wall - base[0])
        if round_ >= 3:
            walls["base"].append(base[0])
            cpus["base"].append(base[1])
    wall = {label: statistics.median(values) for label, values in walls.items()}
    cpu = {label: statistics.median(values) for label, values in cpus.items()}
    line = f"{case.hook:<20} {case.name:<36} {wall['base']:9.1f}"
    for label in commands:
        line += (
            f" {wall[label]:6.1f} {wall[label] / wall['base']:4.2f}×" if label in argvs else MISSING
        )
    line += f" {statistics.median(extra):5.1f} |"
    for label in commands:
        line += f" {cpu[label] / cpu['base']:9.2f}×" if label in argvs else f"{'—':>11}"
    return line


def count_case(case: Case, commands: dict[str, dict[str, str]]) -> str:
    """Instructions of each checkout's command and of the baseline (one counted run each,
    after one run that warms the .pyc files)."""
    base = instructions([sys.executable, "-c", "pass"], case)
    line = f"{case.hook:<20} {case.name:<36} {base / 1e6:9.2f}"
    for found in commands.values():
        if case.script not in found:
            line += MISSING
            continue
        argv = settings_argv(found[case.script])  # the interpreter's own count, without nice
        run(found[case.script], case.stdin, case.env, case.cwd, case.output)
        case.after_each()
        count = instructions(argv, case)
        case.after_each()
        line += f" {count / 1e6:6.2f} {count / base:4.2f}×"
    return line


def instructions(argv: list[str], case: Case) -> int:
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        input=case.stdin,
        env=case.env,
        cwd=case.cwd,
        capture_output=True,
    )
    found = re.search(rb"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"callgrind failed on {argv}: {result.stderr[-2000:]!r}")
    return int(found.group(1))


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


def git_project(project: str) -> str:
    """A git repository in the project, a few files committed, one edited, one untracked."""
    repo = os.path.join(project, "repo")
    os.makedirs(os.path.join(repo, "src"))
    for name in ("README.md", "src/app.py", "src/util.py"):
        with open(os.path.join(repo, name), "w") as handle:
            handle.write(f"{name}\n" * 50)
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "start"]):
        subprocess.run(["git", "-C", repo, *identity, *args], check=True, capture_output=True)
    with open(os.path.join(repo, "src/app.py"), "a") as handle:
        handle.write("edited\n")
    with open(os.path.join(repo, "notes.txt"), "w") as handle:
        handle.write("untracked\n")
    return repo


def turn_consumed(rt: runtime.Runtime) -> None:
    """After a UserPromptSubmit: its snapshot taken (a checkout that takes it after answering
    is waited for, as its next hook would), then the record gone, as a Stop takes it: the
    next prompt snapshots again."""
    turns = rt.path("turns")
    pending = os.path.join(turns, f"{CHANNEL}.pending")
    deadline = time.monotonic() + 10
    while os.path.lexists(pending) and time.monotonic() < deadline:
        time.sleep(0.002)
    try:
        os.unlink(os.path.join(turns, f"{CHANNEL}.json"))
    except FileNotFoundError:
        pass


def pending_elsewhere(rt: runtime.Runtime) -> Callable[[], None]:
    """A prompt of another session, waiting (this process stands in for its hook). Returns
    what checks that the hooks left it pending, then closes it."""
    request_id = decisions.new_id()
    decisions.write_request(
        rt,
        decisions.Request(
            id=request_id,
            kind="permission",
            session_id="other",
            channel_id=CHANNEL,
            tool_name="Bash",
            tool_input={"command": "rm -rf build"},
            deadline=time.time() + 3600,
            pid=os.getpid(),
        ),
    )

    def check_and_close() -> None:
        still = decisions.read_request(rt, request_id)
        assert still is not None and decisions.is_pending(rt, still)
        decisions.close(rt, request_id)

    return check_and_close


# Each event as Claude Code sends it, with nothing for a bridge session to send: an empty
# reply, the idle notice after a reply that pinged already (reply_pinged), an empty piece.
NOTHING_TO_SEND = {
    "Stop": {"last_assistant_message": ""},
    "StopFailure": {"error": "unknown"},
    "SessionStart": {"source": "startup", "model": "claude-opus-5-5"},
    "UserPromptSubmit": {"prompt": "go"},
    "MessageDisplay": {
        "message_id": "c9940e11-0000-4000-8000-000000000002",
        "final": False,
        "delta": "",
    },
    "Notification": {
        "message": "Claude is waiting for your input",
        "notification_type": "idle_prompt",
    },
    "Elicitation": {
        "mcp_server_name": "elic",
        "message": "Name it",
        "mode": "form",
        "requested_schema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    "PermissionDenied": {
        "permission_mode": "auto",
        "tool_name": "Bash",
        "tool_input": NPM_TEST,
        "tool_use_id": "toolu_bench",
        "reason": "risky",
    },
}


def reply_pinged(rt: runtime.Runtime) -> None:
    """The session's reply has pinged the owner for this wait (bridge/handlers/notify.py)."""
    os.makedirs(rt.waits, mode=0o700, exist_ok=True)
    with open(os.path.join(rt.waits, SESSION), "w"):
        pass


def status_event(cwd: str) -> dict:
    """What Claude Code gives the statusLine command (the parts the bridge reads; no
    hook_input: it is not a hook event)."""
    return {
        **COMMON,
        "cwd": cwd,
        "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"},
        "context_window": {"used_percentage": 12},
    }


def event_input(event: str, cwd: str) -> dict:
    if event in NOTHING_TO_SEND:
        return hook_input(event, **COMMON, cwd=cwd, **NOTHING_TO_SEND[event])
    return tool_event(event, cwd, "Bash")  # the tool events: a call not in permissionTools


def run(command: str, stdin: bytes, env: dict, cwd: str, output: bool = False) -> float:
    """Milliseconds for one run; ``output``: the hook must answer (else it must be silent)."""
    return measure(command, stdin, env, cwd, output)[0]


def measure(
    command: str, stdin: bytes, env: dict, cwd: str, output: bool = False
) -> tuple[float, float]:
    """Wall-clock and CPU milliseconds (user + system, the shell and what it ran) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        ["sh", "-c", command], input=stdin, env=env, cwd=cwd, capture_output=True
    )
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if result.returncode != 0 or bool(result.stdout) != output or result.stderr:
        raise SystemExit(
            f"{command} misbehaved: {result.returncode} {result.stdout!r} {result.stderr!r}"
        )
    return wall, cpu


if __name__ == "__main__":
    main()
