"""Claude Code ``MessageDisplay`` hook: the assistant text as it streams, for the status
message. Fires for every streamed piece: one small file append, nothing else."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.events", "on_message_display")
