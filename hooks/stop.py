"""Claude Code ``Stop`` hook: post Claude's reply to the session's Discord channel, then
close the turn's status message."""

import os
import sys

# Every hook runs as `python -I -S <this file>`: without site, start-up is ~5 ms shorter.
# bridge/ sits beside hooks/ (in site-packages, or in the source tree for an editable
# install); bridge.discord.rest loads site itself when a request is really about to be made.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bridge.handlers import run_hook

if __name__ == "__main__":
    run_hook("bridge.handlers.events", "on_turn_end")
