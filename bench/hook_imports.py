"""Modules each hook imports on its fast path, counted with ``python -X importtime``.

Every module a hook imports costs it start-up time on every tool call (see
``hooks_fast_path.py`` for the time itself); this counts them, deterministically, for the same
hooks and events: each installed hook command with real event JSON on stdin, unmapped (not a
bridge session) and mapped with nothing to send, the decision hooks with the tool-call
events they get, and the statusLine command. ``bridge`` counts the project's own modules
(``bridge.*`` and ``hooks.*``) among the total; ``--list`` names them.

    .venv/bin/python bench/hook_imports.py [--list]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

from hooks_fast_path import (
    ASKING_TOOL,
    CHANNEL,
    event_input,
    reply_pinged,
    setup,
    status_event,
    tool_event,
)

from bridge.claude import settings as claude_settings
from bridge.state import runtime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true", help="name the bridge modules imported")
    show = parser.parse_args().list
    with tempfile.TemporaryDirectory() as tmp:
        env, project = setup(tmp)
        mapped = {**env, "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL}
        print(f"{'hook':<28} {'case':<30} {'modules':>7} {'bridge':>6}")
        for event, hook in claude_settings.HOOKS.items():
            cases = [("unmapped cwd", env, tmp), ("mapped, nothing to send", mapped, project)]
            if event == "Notification":  # as hooks_fast_path.py: the reply pinged already
                reply_pinged(runtime.Runtime(env["DISCORD_BRIDGE_RUNTIME_DIR"]))
            for case, case_env, cwd in cases[:1] if event == "PermissionRequest" else cases:
                stdin = json.dumps(event_input(event, cwd)).encode()
                report(event, case, imported(hook.script, stdin, case_env, cwd), show)
        for event, script, tool in (
            ("PreToolUse", "pre_tool_use.py", "Bash"),
            ("PostToolUse", "session_event.py", "Bash"),
            ("PreToolUse", "pre_tool_use.py", ASKING_TOOL),
        ):
            cases = [("unmapped cwd", env, tmp), ("mapped, nothing pending", mapped, project)]
            for case, case_env, cwd in cases[1:] if tool == ASKING_TOOL else cases:
                stdin = json.dumps(tool_event(event, cwd, tool)).encode()
                report(f"{event} {tool}", case, imported(script, stdin, case_env, cwd), show)
        status_cases = [("unmapped cwd", env, tmp), ("mapped, caches", mapped, project)]
        for case, case_env, cwd in status_cases:
            stdin = json.dumps(status_event(cwd)).encode()
            command = claude_settings.status_line_command()
            report("statusLine", case, imported(command, stdin, case_env, cwd), show)


def imported(script: str, stdin: bytes, env: dict, cwd: str) -> list[str]:
    """The modules one run of the installed hook command (or ``script``: a whole command)
    imports, in import order."""
    command = script if " " in script else claude_settings.hook_command(script)
    argv = shlex.split(command, comments=True)
    argv[1:1] = ["-X", "importtime"]
    result = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True)
    if result.returncode != 0:
        raise SystemExit(f"{script} failed: {result.stderr.decode()[-2000:]}")
    lines = result.stderr.decode().splitlines()
    rows = [line for line in lines if line.startswith("import time:") and "|" in line]
    return [row.rsplit("|", 1)[1].strip() for row in rows[1:]]  # the first is the header


def report(hook: str, case: str, modules: list[str], show: bool) -> None:
    ours = [name for name in modules if name.split(".")[0] in ("bridge", "hooks")]
    print(f"{hook:<28} {case:<30} {len(modules):7d} {len(ours):6d}")
    if show:
        print("    " + " ".join(ours))


if __name__ == "__main__":
    main()
