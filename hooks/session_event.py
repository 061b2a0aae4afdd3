"""Claude Code ``PostToolUse``, ``PostToolUseFailure`` and ``UserPromptSubmit`` hook: the
session moved on, so a Discord prompt still open for it was answered in the terminal."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

from bridge.asking import on_session_event
from bridge.hookkit import run

if __name__ == "__main__":
    run(on_session_event)
