"""The bot's side of the Stop hook's hand-off: run the Stop handler on the warm bot.

A Stop hook spools its whole event to ``stops/<name>.json`` and wakes the bot with
``stop:<name>`` (``bridge.handlers.stop_handoff``). The bot claims the file by renaming it to
``<name>.json.taken`` (the hook, which waits for that, then exits; a claim that comes too late
loses to the hook's own rename, and the hook posts as before), then runs in a worker thread
the handler the hook would have run, with the hook's env (``handlers.events.on_turn_end``:
the reply laid out and posted first, then the turn's changes and the status message), its
modules imported once at start. The claimed file is removed as soon as the reply is in the
outbox (``HookContext.claim``), or once the handler returns; one left by a bot that died
before that is run when the bot starts again (:meth:`recover`), so that a reply the bot had
claimed is not lost. Nor posted twice: its outbox entries wait for the claim to go
(``discord.handoff.Claim``), so those of a bot killed before that were never posted, and are
dropped before the event runs again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal

from bridge.discord.handoff import Claim
from bridge.discord.outbox import Outbox
from bridge.handlers import stop_handoff
from bridge.state import runtime

log = logging.getLogger(__name__)

_NAME = re.compile(r"[0-9a-f]{16}\.json")  # stop_handoff.spool's names, nothing else
# A test's crash point: the bot kills itself (SIGKILL) with the reply spooled and the claim
# not yet released (tests/e2e/test_handoff.py), the moment a crash there would matter.
_CRASH_WHEN_SPOOLED = os.environ.get("DISCORD_BRIDGE_TEST_CRASH") == "stop-spooled"


class StopEvents:
    """Stop events handed over by hooks, run in worker threads of the bot's loop."""

    def __init__(self, rt: runtime.Runtime) -> None:
        self.folder = rt.path(stop_handoff.STOPS)
        self.outbox = Outbox(rt.outbox)
        self.running: set[asyncio.Future] = set()
        _preload()

    def handed(self, name: str) -> None:
        """A hook woke the bot for ``stops/<name>`` (called on the event loop)."""
        if not _NAME.fullmatch(name):
            return
        future = asyncio.get_running_loop().run_in_executor(None, self.take, name)
        self.running.add(future)
        future.add_done_callback(self.running.discard)

    def take(self, name: str) -> None:
        """Claim the event and run its handler; nothing if the hook took it back first."""
        path = os.path.join(self.folder, name)
        try:
            os.rename(path, path + stop_handoff.CLAIMED)
        except FileNotFoundError:
            return  # the hook gave up waiting and runs it itself
        self.run_claimed(path + stop_handoff.CLAIMED)

    def run_claimed(self, claimed: str) -> None:
        try:
            spooled = stop_handoff.read_event(claimed)
            if spooled is None:
                log.warning("ignored a Stop event of the wrong shape: %s", claimed)
            else:
                log.info("took a Stop event from its hook: %s", os.path.basename(claimed))
                run_handler(*spooled, Claim(claimed, lambda: _spooled(claimed)))
        except Exception:
            log.exception("the Stop handler failed for %s", claimed)
        finally:
            _release(claimed)

    def recover(self) -> None:
        """At start: run what a previous bot claimed and did not finish, and take what a hook
        spooled for it. (Blocking: call in a thread.)"""
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return
        for name in names:
            if name.endswith(stop_handoff.CLAIMED) and _NAME.fullmatch(name[: -len(".taken")]):
                claimed = os.path.join(self.folder, name)
                dropped = self.outbox.drop_claimed(claimed)  # never posted: the re-run posts
                log.info(
                    "running a Stop event a previous bot had claimed: %s (%d of its"
                    " messages were in the outbox)",
                    name,
                    dropped,
                )
                self.run_claimed(claimed)
            elif _NAME.fullmatch(name):
                self.take(name)


def _spooled(claimed: str) -> None:
    """The reply is in the outbox: release the claim."""
    if _CRASH_WHEN_SPOOLED:
        os.kill(os.getpid(), signal.SIGKILL)
    _release(claimed)


def _release(claimed: str) -> None:
    """The claim is no longer needed: the reply is in the outbox (or the handler is done)."""
    try:
        os.unlink(claimed)
    except FileNotFoundError:
        pass


def run_handler(env: dict[str, str], event: dict, claim: Claim) -> None:
    """What the hook would have run for this event, with its env (``context.resolve``);
    its messages wait in the outbox until ``claim`` is released."""
    from bridge.handlers.context import resolve
    from bridge.handlers.events import on_turn_end

    if event.get("hook_event_name") != "Stop":
        return
    context = resolve(event, env)
    if context is not None:
        context.claim = claim
        on_turn_end(context)


def _preload() -> None:
    """Import once what the Stop handler imports as it goes, so that no reply waits for it."""
    from bridge.discord import delivery, outbox, post  # noqa: F401
    from bridge.discord.render import attachments, split  # noqa: F401
    from bridge.handlers import (  # noqa: F401
        background,
        context,
        events,
        notify,
        reply,
        reply_footer,
        turn_changes,
    )
