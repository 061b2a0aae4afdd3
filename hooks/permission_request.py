"""Claude Code ``PermissionRequest`` hook: ask on Discord (permission, question or plan),
wait for the answer, and give Claude Code the decision; no decision leaves the terminal's."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # see stop.py

try:
    from bridge.asking import on_permission_request
    from bridge.hookkit import run
except Exception as err:  # a broken install must never break Claude Code: no decision
    sys.stderr.write(f"discord-bridge hook cannot start: {err!r}\n")
    sys.exit(0)

if __name__ == "__main__":
    run(on_permission_request)
