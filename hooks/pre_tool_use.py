"""Claude Code ``PreToolUse`` hook: close prompts the terminal answered; ``permissionTools``
always ask. Runs before every tool call: the fast path imports nothing heavy."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

from bridge.asking import on_pre_tool_use
from bridge.hookkit import run

if __name__ == "__main__":
    run(on_pre_tool_use)
