"""Claude Code ``SessionStart`` hook: record the session id so the bot can resume it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

try:
    from bridge.hookkit import run
    from bridge.session_record import on_session_start
except Exception as err:  # a broken install must never break Claude Code: no decision
    sys.stderr.write(f"discord-bridge hook cannot start: {err!r}\n")
    sys.exit(0)

if __name__ == "__main__":
    run(on_session_start)
