"""Claude Code ``SessionStart`` hook: record the session id so the bot can resume it."""

import os
import sys

# Run as `python -I -S <this file>`: without site, start-up is ~5 ms shorter. bridge/ sits
# beside hooks/ (in site-packages, or in the source tree for an editable install);
# bridge.rest loads site itself when a request is really about to be made.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bridge.hookkit import run
from bridge.session_record import on_session_start

if __name__ == "__main__":
    run(on_session_start)
