"""Claude Code ``PermissionDenied`` hook: auto mode refused a tool call; say so on Discord and,
if the owner asks within ``prompts.retryWaitSeconds``, let the model try it again."""

import os
import sys

_up = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # see stop.py
sys.path.insert(0, os.path.dirname(_up) if os.path.exists(_up + "/__init__.py") else _up)

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.denied", "on_permission_denied")
