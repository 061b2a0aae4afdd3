"""Claude Code ``Stop`` hook: post Claude's reply to the session's Discord channel."""

import os
import sys

# Run as `python -I -S <this file>`: without site, start-up is ~5 ms shorter. bridge/ sits
# beside hooks/ (in site-packages, or in the source tree for an editable install);
# bridge.rest loads site itself when a request is really about to be made.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bridge.asking import on_session_event
from bridge.hookkit import HookContext, run
from bridge.reply import on_stop


def on_turn_end(context: HookContext) -> None:
    on_session_event(context)  # a prompt still open was answered in the terminal
    on_stop(context)


if __name__ == "__main__":
    run(on_turn_end)
