"""Claude Code ``Stop`` hook: post Claude's reply to the session's Discord channel."""

import os
import sys

# Run as `python -I -S <this file>`: without site, start-up is ~5 ms shorter. bridge/ sits
# beside hooks/ (in site-packages, or in the source tree for an editable install);
# bridge.rest loads site itself when a request is really about to be made.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bridge.hookkit import run
from bridge.session_events import on_turn_end

if __name__ == "__main__":
    run(on_turn_end)
