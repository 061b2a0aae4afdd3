"""What each Claude Code hook event of a bridge session does (hooks/*.py call these).

:func:`run_hook` is what every hook script does: run its handler, always exiting 0. The
handler is imported only once the event turned out to be a bridge session's (most hook calls
on a machine are not: they exit after reading the config), and inside a guard, so that even
a broken install (a bridge module that no longer imports) gives Claude Code no decision
rather than a failing hook. It lives here, in the package every handler is in, because a
module costs each hook process its import (``bench/hook_imports.py``): hooks/ holds only the
scripts.
"""

from __future__ import annotations

import gc
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

    from bridge.handlers.context import HookContext


class Found:
    """What this hook process has read already (the Stop hook's hand-off, its trusted env:
    ``stop_handoff``), so that its handler's path does not read it again."""

    env: dict[str, str] | None = None


def hook_process() -> None:
    """What a hook process does first. A hook is a short process whose imports make objects
    by the thousand: the cyclic collector would run over them a few times for nothing (1.8 M
    of the ~51 M instructions of a bridge session's UserPromptSubmit,
    bench/hooks_fast_path.py --instructions). The hooks that wait for the owner turn it back
    on (permission.ask)."""
    gc.disable()


def run_hook(module: str, handler: str) -> None:
    hook_process()
    try:
        from bridge.handlers.context import run
    except Exception as err:  # a broken install must never break Claude Code: no decision
        cannot_start(err)
    run(lambda: load_handler(module, handler))


def load_handler(module: str, handler: str) -> Callable[[HookContext], dict | None]:
    try:
        return getattr(__import__(module, fromlist=[handler]), handler)
    except Exception as err:
        cannot_start(err)


def cannot_start(err: BaseException) -> NoReturn:
    sys.stderr.write(f"discord-bridge hook cannot start: {err!r}\n")
    sys.exit(0)
