"""Claude Code ``StopFailure`` hook: an API error ended the turn (no Stop follows), so the
turn's status message is closed saying so."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.events", "on_turn_failed")
