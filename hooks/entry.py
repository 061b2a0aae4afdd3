"""What every hook script does: run its handler from :mod:`bridge`, always exiting 0.

The handler is imported here, inside the guard, so that even a broken install (a bridge
module that no longer imports) gives Claude Code no decision rather than a failing hook.
"""

import sys


def run_hook(module: str, handler: str) -> None:
    try:
        from bridge.handlers.context import run

        function = getattr(__import__(module, fromlist=[handler]), handler)
    except Exception as err:  # a broken install must never break Claude Code: no decision
        sys.stderr.write(f"discord-bridge hook cannot start: {err!r}\n")
        sys.exit(0)
    run(function)
