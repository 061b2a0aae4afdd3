"""Claude Code ``MessageDisplay`` hook: the assistant text as it streams, for the status
message. Fires for every streamed piece: one small file append, nothing else."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

try:
    from bridge.hookkit import run
    from bridge.session_events import on_message_display
except Exception as err:  # a broken install must never break Claude Code: no decision
    sys.stderr.write(f"discord-bridge hook cannot start: {err!r}\n")
    sys.exit(0)

if __name__ == "__main__":
    run(on_message_display)
