"""Claude Code ``PreToolUse`` hook: the tool shows in the status message, prompts the
terminal answered are closed, ``permissionTools`` always ask. Runs before every tool call:
the fast path imports nothing heavy and uses no network."""

import os
import sys

_up = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # see stop.py
sys.path.insert(0, os.path.dirname(_up) if os.path.exists(_up + "/__init__.py") else _up)

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.events", "on_tool_start")
