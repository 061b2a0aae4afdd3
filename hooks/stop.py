"""Claude Code ``Stop`` hook: post Claude's reply to the session's Discord channel, then
close the turn's status message. While the bot runs, it is handed the whole event and does
both (``bridge.handlers.stop_handoff``); otherwise, or if it does not take it, this does."""

import os
import sys

# Every hook runs as `python -I -S <this file>`: without site, start-up is ~5 ms shorter.
# bridge.discord.rest loads site itself when a request is really about to be made. The folder
# that holds bridge/ goes on the path: in the source tree hooks/ sits beside bridge/; installed,
# these scripts are bridge/hooks/ (so no package named `hooks` is installed), one level deeper.
_up = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(_up) if os.path.exists(_up + "/__init__.py") else _up)

from bridge.handlers import run_hook
from bridge.handlers.stop_handoff import hand_to_bot

if __name__ == "__main__":
    hand_to_bot()  # exits once the bot has the event
    run_hook("bridge.handlers.events", "on_turn_end")
