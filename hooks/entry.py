"""What every hook script does: run its handler from :mod:`bridge`, always exiting 0.

The handler is imported only once the event turned out to be a bridge session's (most hook
calls on a machine are not: they exit after reading the config), and inside a guard, so that
even a broken install (a bridge module that no longer imports) gives Claude Code no decision
rather than a failing hook.
"""

import sys


def run_hook(module: str, handler: str) -> None:
    try:
        from bridge.handlers.context import run
    except Exception as err:  # a broken install must never break Claude Code: no decision
        cannot_start(err)
    run(lambda: load_handler(module, handler))


def load_handler(module: str, handler: str):
    try:
        return getattr(__import__(module, fromlist=[handler]), handler)
    except Exception as err:
        cannot_start(err)


def cannot_start(err: BaseException) -> None:
    sys.stderr.write(f"discord-bridge hook cannot start: {err!r}\n")
    sys.exit(0)
