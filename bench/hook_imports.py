"""Modules each hook imports on its fast path, counted with ``python -X importtime``.

Every module a hook imports costs it start-up time on every tool call (see
``hooks_fast_path.py`` for the time itself); this counts them, deterministically, for the same
hooks and events: the cases of ``hooks_fast_path.py`` itself (each installed hook command
with real event JSON on stdin, unmapped and mapped with nothing to send, UserPromptSubmit in
a git repository, the decision hooks with the tool-call events they get, the statusLine
command). A process a hook leaves behind to finish its work after answering (the turn's
snapshot) is not counted: the hook's stderr is gone by then, and Claude Code does not wait
for it. ``bridge`` counts the project's own modules
(``bridge.*`` and ``hooks.*``) among the total; ``--list`` names them.

    .venv/bin/python bench/hook_imports.py [--list]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

from hooks_fast_path import STATUS_LINE, cases, setup

from bridge.claude import settings as claude_settings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true", help="name the bridge modules imported")
    show = parser.parse_args().list
    with tempfile.TemporaryDirectory() as tmp:
        env, project = setup(tmp)
        print(f"{'hook':<28} {'case':<36} {'modules':>7} {'bridge':>6}")
        for case in cases(env, project, tmp):  # the very cases hooks_fast_path.py times
            if case.title:
                print(f"\n{case.title}")
            undo = case.around() if case.around else None
            script = case.script
            if script == STATUS_LINE:
                script = claude_settings.status_line_command()
            try:
                modules = imported(script, case.stdin, case.env, case.cwd)
                case.after_each()
            finally:
                if undo:
                    undo()
            report(case.hook, case.name, modules, show)


def imported(script: str, stdin: bytes, env: dict, cwd: str) -> list[str]:
    """The modules one run of the installed hook command (or ``script``: a whole command)
    imports, in import order."""
    command = script if " " in script else claude_settings.hook_command(script)
    argv = claude_settings.python_argv(command)
    argv[1:1] = ["-X", "importtime"]
    result = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True)
    if result.returncode != 0:
        raise SystemExit(f"{script} failed: {result.stderr.decode()[-2000:]}")
    lines = result.stderr.decode().splitlines()
    rows = [line for line in lines if line.startswith("import time:") and "|" in line]
    return [row.rsplit("|", 1)[1].strip() for row in rows[1:]]  # the first is the header


def report(hook: str, case: str, modules: list[str], show: bool) -> None:
    ours = [name for name in modules if name.split(".")[0] in ("bridge", "hooks")]
    print(f"{hook:<28} {case:<36} {len(modules):7d} {len(ours):6d}")
    if show:
        print("    " + " ".join(ours))


if __name__ == "__main__":
    main()
