"""Claude Code ``UserPromptSubmit``, ``PostToolUse`` and ``PostToolUseFailure`` hook: the
turn's progress, and Discord prompts the terminal answered meanwhile are closed."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

try:
    from bridge.hookkit import run
    from bridge.session_events import on_prompt_or_tool_done
except Exception as err:  # a broken install must never break Claude Code: no decision
    sys.stderr.write(f"discord-bridge hook cannot start: {err!r}\n")
    sys.exit(0)

if __name__ == "__main__":
    run(on_prompt_or_tool_done)
