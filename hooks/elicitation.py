"""Claude Code ``Elicitation`` hook: an MCP server asks for input; ask the owner on Discord
(a form, or a link), wait, and give Claude Code the answer; no answer leaves its dialog."""

import os
import sys

_up = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # see stop.py
sys.path.insert(0, os.path.dirname(_up) if os.path.exists(_up + "/__init__.py") else _up)

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.elicitation", "on_elicitation")
