"""Getting messages onto Discord from outside the bot: in order, within a budget, or spooled.

Every message the hooks send is built by :func:`bridge.discord.post.message_payload` (no
mentions unless one is granted, a nonce with ``enforce_nonce`` so a retry never posts twice)
and delivered by :func:`deliver`: in order, after anything already waiting in the channel's
outbox, within a time budget below the hook's timeout; whatever Discord does not take now is
spooled to the outbox, which the bot drains when Discord answers again. While the bot runs,
messages are handed to it instead (:func:`hand_off`): it posts them on its warm connection.
"""

from __future__ import annotations

import time

from bridge.discord import handoff
from bridge.state import private_files, runtime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.config import Server
    from bridge.discord.outbox import Outbox
    from bridge.discord.post import Post
    from bridge.discord.rest import DiscordREST

HOOK_BUDGET = 40.0  # seconds for all delivery (deliver's default); the Stop hook's timeout is 60


def deliver(
    rt: runtime.Runtime,
    server: Server,
    channel: str,
    posts: list[Post],
    budget: float = HOOK_BUDGET,
    claim: handoff.Claim | None = None,
) -> None:
    """Post in order after anything already waiting in the outbox; spool what is not sent.

    Everything happens within ``budget`` seconds (below the hook's timeout): a hook killed
    by Claude Code would lose the reply it had not spooled yet. ``claim``: the Stop event the
    bot runs, whose messages go out once they are all in the outbox (:func:`hand_off`).
    """
    from bridge.discord.outbox import Outbox

    deadline = time.monotonic() + budget
    outbox = Outbox(rt.ensure().outbox)  # a notice may come before any reply
    spool = _Spool(outbox, rt, server.name, channel)
    unsent = list(posts)  # what is still ours to deliver or spool, whatever happens below
    try:
        if unsent and hand_off(rt, outbox, server.name, channel, unsent, claim=claim) is not None:
            _figure(rt, "handoff", len(unsent))
            return  # the running bot posted them
    except NotTaken as err:
        unsent = []  # in the outbox now: drained below, in order, and kept on disk
        _figure(rt, "spooled", len(err.paths))
        try:
            for path in err.paths:
                outbox.make_durable(path)
        except OSError as sync_err:
            log(rt, f"could not sync the outbox of #{channel}: {sync_err!r}")
    except Exception as err:  # e.g. a full disk: post directly (same nonces, never twice)
        log(rt, f"handing messages for #{channel} to the bot failed: {err!r}")
    if not server.hooks_post_directly:  # its API is gone with the bot (`try`): it posts them
        spool(unsent, "the bot is not running")
        return
    from bridge.discord.rest import DiscordREST  # here: httpx, typing… only to post directly

    try:
        with outbox.locked(channel, until=deadline) as locked:
            if not locked:  # the bot is draining a backlog right now: queue behind it
                spool(unsent, "the channel's outbox is being drained")
                return
            with DiscordREST(server.api_base, server.token) as rest:
                sender = _Sender(rest, channel, deadline, rt)
                if outbox.pending(channel) and not outbox.drain(
                    channel, sender.send_entry, deadline
                ):
                    spool(unsent, "older messages are still waiting")
                    return
                while unsent:
                    if not sender.send(unsent[0]):
                        spool(unsent, "Discord did not answer in time")
                        return
                    unsent.pop(0)
    except Exception as err:  # never lose a reply to a surprise (a broken outbox entry …)
        log(rt, f"delivering to #{channel} failed: {err!r}")
        if unsent and not spool.done:
            spool(unsent, "delivery failed")


def hand_off(
    rt: runtime.Runtime,
    outbox: Outbox,
    server_name: str,
    channel: str,
    posts: list[Post],
    receipt: bool = False,
    wait: float = handoff.HANDOFF_WAIT,
    claim: handoff.Claim | None = None,
) -> list[str] | None:
    """Give ``posts`` to the running bot (see :mod:`bridge.discord.handoff`). Returns their
    outbox entries once the bot has posted them; None when no bot listens (nothing was
    spooled) — or, when it did not take them within ``wait``, raises :class:`NotTaken`
    carrying the entries, which are in the outbox for the caller to post itself. ``claim``:
    the entries wait for it, released once they are all written (:class:`handoff.Claim`)."""
    if not handoff.bot_listening(rt):
        return None
    # Not fsynced: the bot takes them within milliseconds (waiting for the disk cost every
    # reply 8 ms p50 on the shared machine); what it does not take is made durable then.
    gate = claim.path if claim is not None else None
    paths = [outbox.enqueue(channel, server_name, post, receipt, False, gate) for post in posts]
    if claim is not None:
        claim.release()
    woken = handoff.wake_bot(rt, channel)
    if woken and handoff.wait_taken(paths, time.monotonic() + wait):
        return paths
    raise NotTaken(paths)


class NotTaken(Exception):
    """The bot did not take handed-off entries in time; they wait in the outbox."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"{len(paths)} message(s) not taken by the bot")
        self.paths = paths


class _Spool:
    def __init__(self, outbox: Outbox, rt: runtime.Runtime, server_name: str, channel: str):
        self.outbox, self.rt, self.server_name, self.channel = outbox, rt, server_name, channel

        self.done = False

    def __call__(self, posts: list[Post], why: str) -> None:
        if not posts:
            return
        for post in posts:
            self.outbox.enqueue(self.channel, self.server_name, post)
        self.done = True
        _figure(self.rt, "spooled", len(posts))
        log(self.rt, f"{why}: {len(posts)} message(s) for #{self.channel} queued")


class _Sender:
    """Posts for :func:`deliver` within its deadline. ``send`` returns False when the post
    should be spooled (Discord unreachable, out of time) and True when it is done with it."""

    def __init__(self, rest: DiscordREST, channel: str, deadline: float, rt: runtime.Runtime):
        self.rest = rest
        self.channel = channel
        self.deadline = deadline
        self.rt = rt

    def send(self, post: Post) -> bool:
        from bridge.discord.post import DeliveryError

        remaining = self.deadline - time.monotonic()
        if remaining < 1.0:
            return False
        self.rest.budget = min(self.rest.budget, remaining - 0.5)
        try:
            self.rest.send_post(self.channel, post)
            _figure(self.rt, "direct", 1)
        except DeliveryError as err:
            if err.retryable:
                return False
            log(self.rt, f"Discord refused a reply message for #{self.channel}: {err}")
        except Exception as err:  # an answer we did not expect: keep the message
            log(self.rt, f"sending to #{self.channel} failed: {err!r}")
            return False
        return True

    def send_entry(self, _entry: dict, post: Post) -> None:
        """For :meth:`Outbox.drain`, which wants a DeliveryError when a post must wait."""
        from bridge.discord.post import DeliveryError

        if not self.send(post):
            raise DeliveryError("not sent yet", retryable=True)


def log(rt: runtime.Runtime, line: str) -> None:
    private_files.append_log(rt.hook_log, line)


def _figure(rt: runtime.Runtime, way: str, count: int) -> None:
    """The metrics' count of messages by way (``state/hook_figures.py``): one append."""
    private_files.append_if_there(rt.hook_figures, f"post {way} {count}\n")
