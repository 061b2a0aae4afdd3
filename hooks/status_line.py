"""Claude Code ``statusLine`` command: cache model, context and cost for the reply footer, and
print the status line (the user's previous command's output unchanged, or a compact one)."""

import os
import sys

# Run as `python -I -S <this file>` on every status refresh: see hooks/stop.py for why.
_up = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(_up) if os.path.exists(_up + "/__init__.py") else _up)

from bridge.handlers import hook_process

hook_process()  # before the imports below (see there)

from bridge.handlers.status_line import main  # after hook_process()

if __name__ == "__main__":
    from bridge.handlers.context import leave

    leave(main(sys.argv[1:]))  # without the interpreter's tear-down (see there)
