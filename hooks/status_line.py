"""Claude Code ``statusLine`` command: cache model, context and cost for the reply footer, and
print the status line (the user's previous command's output unchanged, or a compact one)."""

import gc
import os
import sys

gc.disable()  # a short process: nothing cyclic worth collecting (bridge/handlers/__init__.py)

# Run as `python -I -S <this file>` on every status refresh: see hooks/stop.py for why.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bridge.handlers.status_line import main  # noqa: E402 - after gc.disable() and the path

if __name__ == "__main__":
    from bridge.handlers.context import leave

    leave(main(sys.argv[1:]))  # without the interpreter's tear-down (see there)
