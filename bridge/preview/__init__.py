"""``/preview``: the web app a session is building, seen through a headless Chromium.

``ports``: the loopback TCP ports a session's processes listen on (from ``/proc``);
``address``: what a ``/preview`` argument may name (this machine's loopback, nothing else);
``browser``: the Chromium that loads it and what it saw (playwright, imported only here).
"""
