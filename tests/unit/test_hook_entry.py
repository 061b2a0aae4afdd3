"""A hook whose bridge code cannot be imported still exits 0 with no decision."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["stop.py", "pre_tool_use.py", "permission_request.py"])
def test_a_broken_install_gives_no_decision_and_exit_0(tmp_path, script: str) -> None:
    shutil.copytree(REPO / "hooks", tmp_path / "hooks")
    shutil.copytree(REPO / "bridge", tmp_path / "bridge")
    for module in ("handlers/events.py", "handlers/permission.py"):
        with open(tmp_path / "bridge" / module, "a") as handle:
            handle.write("\ndef broken(:\n")  # a syntax error, as after a bad upgrade
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(tmp_path / "hooks" / script)],
        input=b'{"hook_event_name": "PreToolUse", "tool_name": "Bash"}',
        capture_output=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == b""
    assert b"discord-bridge hook cannot start: SyntaxError" in done.stderr
