"""Claude Code ``UserPromptSubmit``, ``PostToolUse`` and ``PostToolUseFailure`` hook: the
turn's progress, and Discord prompts the terminal answered meanwhile are closed."""

import os
import sys

_up = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # see stop.py
sys.path.insert(0, os.path.dirname(_up) if os.path.exists(_up + "/__init__.py") else _up)

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.events", "on_prompt_or_tool_done")
