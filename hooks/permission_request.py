"""Claude Code ``PermissionRequest`` hook: ask on Discord (permission, question or plan),
wait for the answer, and give Claude Code the decision; no decision leaves the terminal's."""

import os
import sys

_up = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # see stop.py
sys.path.insert(0, os.path.dirname(_up) if os.path.exists(_up + "/__init__.py") else _up)

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.permission", "on_permission_request")
