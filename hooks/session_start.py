"""Claude Code ``SessionStart`` hook: record the session id so the bot can resume it."""

from bridge.hookkit import run
from bridge.session_record import on_session_start

if __name__ == "__main__":
    run(on_session_start)
