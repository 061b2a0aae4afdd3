"""Claude Code ``Stop`` hook: post Claude's reply to the session's Discord channel."""

from bridge.hookkit import run
from bridge.reply import on_stop

if __name__ == "__main__":
    run(on_stop)
