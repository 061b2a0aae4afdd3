"""Claude Code ``PermissionDenied`` hook: auto mode refused a tool call; say so on Discord and,
if the owner asks within ``prompts.retryWaitSeconds``, let the model try it again."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.denied", "on_permission_denied")
