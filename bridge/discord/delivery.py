"""Getting messages onto Discord from outside the bot: payloads, mentions, posting, spooling.

Every message the hooks send is built by :func:`message_payload` (no mentions unless one is
granted, a nonce with ``enforce_nonce`` so a retry never posts twice) and delivered by
:func:`deliver`: in order, after anything already waiting in the channel's outbox, within a
time budget below the hook's timeout; whatever Discord does not take now is spooled to the
outbox, which the bot drains when Discord answers again.
"""

from __future__ import annotations

import time

from bridge.discord.post import message_payload
from bridge.state import runtime

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
) -> None:
    """Post in order after anything already waiting in the outbox; spool what is not sent.

    Everything happens within ``budget`` seconds (below the hook's timeout): a hook killed
    by Claude Code would lose the reply it had not spooled yet.
    """
    from bridge.discord.outbox import Outbox
    from bridge.discord.rest import DiscordREST

    deadline = time.monotonic() + budget
    outbox = Outbox(rt.ensure().outbox)  # a notice may come before any reply
    spool = _Spool(outbox, rt, server.name, channel)
    unsent = list(posts)  # what is still ours to deliver or spool, whatever happens below
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


class _Spool:
    def __init__(self, outbox: Outbox, rt: runtime.Runtime, server_name: str, channel: str):
        self.outbox, self.rt, self.server_name, self.channel = outbox, rt, server_name, channel

        self.done = False

    def __call__(self, posts: list[Post], why: str) -> None:
        for post in posts:
            self.outbox.enqueue(self.channel, self.server_name, post)
        self.done = True
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
            send_post(self.rest, self.channel, post)
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


def send_post(rest: DiscordREST, channel: str, post: Post) -> None:
    """Create the message; if Discord refuses its files (too large for this server, …),
    send the text anyway with a note rather than lose both."""
    from bridge.discord.post import DeliveryError, Post

    try:
        rest.create_message(channel, post)
    except DeliveryError as err:
        if err.retryable or not post.files:
            raise
        if post.payload.get("content"):
            rest.create_message(channel, Post(post.payload))  # same nonce, without the files
        rest.create_message(channel, Post(message_payload(refused_files_note(post, err))))


def refused_files_note(post: Post, err: Exception) -> str:
    """What the channel is told when Discord refused a message's files."""
    names = ", ".join(f"`{name}`" for name, _ in post.files)[:1500]
    status, code = getattr(err, "status", None), getattr(err, "code", None)
    if status == 403:
        why = "the bot lacks the **Attach Files** permission in this channel"
        return f"⚠️ Not attached: {names} ({why}; {status}/{code or '?'})"
    return f"⚠️ Discord refused the attached files {names} ({status or 'error'})"


def log(rt: runtime.Runtime, line: str) -> None:
    runtime.append_log(rt.hook_log, line)
