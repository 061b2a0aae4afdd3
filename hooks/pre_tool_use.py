"""Claude Code ``PreToolUse`` hook: the tool shows in the status message, prompts the
terminal answered are closed, ``permissionTools`` always ask. Runs before every tool call:
the fast path imports nothing heavy and uses no network."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

try:
    from bridge.hookkit import run
    from bridge.session_events import on_tool_start
except Exception as err:  # a broken install must never break Claude Code: no decision
    sys.stderr.write(f"discord-bridge hook cannot start: {err!r}\n")
    sys.exit(0)

if __name__ == "__main__":
    run(on_tool_start)
