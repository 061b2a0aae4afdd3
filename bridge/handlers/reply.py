"""The Stop hook's job: turn Claude's final reply into Discord messages and deliver them.

Reply text comes from the event's ``last_assistant_message`` (or the transcript), attachment
markers become uploads from the session's ``outputs/`` directory, Markdown tables become aligned
code blocks, a footer (model, context, cost from the statusLine cache) ends the reply, the text
is split into ≤ 2000-character messages with balanced code fences (a reply too long for
``replies.attachAfterMessages`` messages posts its start and attaches the whole as
``reply.md``), and everything is delivered in order, spooling to the outbox whatever Discord
does not take now.
"""

from __future__ import annotations

import time

from bridge import fastjson
from bridge.handlers.context import HookContext
from bridge.state import runtime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.discord.outbox import Outbox
    from bridge.discord.render.attachments import OutputFile
    from bridge.discord.rest import DiscordREST, Post

NO_MENTIONS = {"parse": []}  # model output must never ping @everyone, roles or users
HOOK_BUDGET = 40.0  # seconds for all delivery; the Stop hook's timeout in settings.json is 60
MAX_ATTACHMENTS = 20  # markers honoured per reply; each file is read into memory
FULL_REPLY_NAME = "reply.md"
FULL_REPLY_NOTE = "📎 The full reply is attached as `reply.md`."


def on_stop(context: HookContext) -> None:
    text = reply_text(context.event)
    if not text.strip():
        return
    rt = context.runtime.ensure()
    outputs = rt.channel_dir("outputs", context.channel_id)
    cfg = context.cfg
    footer = reply_footer(rt, context.event.get("session_id")) if cfg.footer else ""
    mention = _owner_mention(context)
    if mention:
        footer = f"{footer} · 🔔 {mention}" if footer else f"-# 🔔 {mention}"
    posts = build_posts(text, outputs, cfg.upload_limit, cfg.attach_after, footer)
    if mention:  # only the footer's mention may ping (the model's text never does)
        from bridge.handlers.notify import allowed

        footer_post = next(p for p in reversed(posts) if mention in p.payload.get("content", ""))
        footer_post.payload["allowed_mentions"] = allowed(mention)
    deliver(context, posts)


def _owner_mention(context: HookContext) -> str:
    """Claude now waits for the user: ping the owner with the reply, once per wait."""
    from bridge.handlers.notify import claim_wait, mention_for

    mention = mention_for(context)
    return mention if mention and claim_wait(context) else ""


def reply_footer(rt: runtime.Runtime, session_id: object) -> str:
    """``-# Opus 5.5 · ctx 12% · $0.43`` from what the statusLine command cached for this
    session; empty when it has not run for it (not installed, or no refresh yet).

    A record without context usage predates the session's first API response: its cost
    ($0.00) would be wrong for the reply it ends, so there is no footer until one arrives.
    """
    from bridge.discord.render.footer import footer_line
    from bridge.handlers.status_line import read_status

    record = read_status(rt, session_id)
    if not record or record.get("context_percent") is None:
        return ""
    return footer_line(record)


def reply_text(event: dict) -> str:
    """``last_assistant_message``; the transcript only when the event lacks that key (an
    empty message is an answer: the transcript could still hold an older one)."""
    text = event.get("last_assistant_message")
    if text is not None:
        return text if isinstance(text, str) else ""
    path = event.get("transcript_path")
    return last_assistant_text(path) if isinstance(path, str) else ""


def last_assistant_text(transcript_path: str) -> str:
    """Texts of the newest main-thread assistant message (blocks share ``message.id``)."""
    try:
        with open(transcript_path, "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return ""
    current_id, texts = None, []
    for line in lines:
        try:
            record = fastjson.loads(line)
        except ValueError:
            continue  # the last line may still be being written
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        if record.get("isSidechain"):
            continue
        message = record.get("message") or {}
        if message.get("id") != current_id:
            current_id, texts = message.get("id"), []
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(block.get("text", ""))
    return "\n".join(texts)


def build_posts(
    text: str, outputs_dir: str, upload_limit: int, attach_after: int = 4, footer: str = ""
) -> list[Post]:
    """Messages for one reply: text chunks first, files attached from the last chunk on.

    Refusal notes and ``footer`` end the last message. A reply that would take more than
    ``attach_after`` messages posts ``attach_after - 1`` of them, then a note with the whole
    reply attached as ``reply.md`` (unless that file is over ``upload_limit``: then all of it
    is posted).
    """
    from bridge.discord.render.attachments import extract_markers, format_refusals, plan_uploads
    from bridge.discord.render.split import close_open_fence, split_message
    from bridge.discord.rest import Post

    body, names = extract_markers(text)
    files, refused = _resolve_files(outputs_dir, names, upload_limit)
    tail = _paragraphs(format_refusals(refused), footer)
    shown = body
    if "|" in body:  # only then can there be a table to render (and its module to import)
        from bridge.discord.render.tables import render_tables

        shown = render_tables(body)
    if tail:
        shown = close_open_fence(shown)  # the footer must not end up inside a code block
    chunks = split_message(_paragraphs(shown, tail))
    full = _full_reply(body, upload_limit) if len(chunks) > max(attach_after, 1) else None
    if full is not None:
        head = split_message(shown)[: attach_after - 1]
        chunks = head + split_message(_paragraphs(FULL_REPLY_NOTE, tail))
        files.insert(0, full)
    posts = [Post(message_payload(chunk)) for chunk in chunks]
    for i, batch in enumerate(plan_uploads(files)):
        uploads = [(f.upload_name, f.data) for f in batch]
        if i == 0 and posts:
            posts[-1].files = uploads
        else:
            posts.append(Post(message_payload(""), uploads))
    return posts


def _resolve_files(outputs_dir: str, names: list[str], upload_limit: int) -> tuple[list, list]:
    """The marker files that may be uploaded (read now) and the refusals, in marker order."""
    from bridge.discord.render.attachments import Refused, resolve_output_file

    files, refused = [], []
    for name in names[MAX_ATTACHMENTS:]:
        refused.append(Refused(name, f"more than {MAX_ATTACHMENTS} files in one reply"))
    for name in names[:MAX_ATTACHMENTS]:
        result = resolve_output_file(outputs_dir, name, upload_limit)
        (refused if isinstance(result, Refused) else files).append(result)
    return files, refused


def _full_reply(body: str, upload_limit: int) -> OutputFile | None:
    """The reply as Claude wrote it (markers removed, tables as Markdown), as ``reply.md``."""
    from bridge.discord.render.attachments import OutputFile

    data = body.encode()
    if len(data) > upload_limit:
        return None
    return OutputFile(name=FULL_REPLY_NAME, upload_name=FULL_REPLY_NAME, data=data)


def _paragraphs(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)


def message_payload(content: str) -> dict:
    from bridge.discord.rest import new_nonce

    payload = {"allowed_mentions": NO_MENTIONS, "nonce": new_nonce(), "enforce_nonce": True}
    if content:
        payload["content"] = content
    return payload


def deliver(context: HookContext, posts: list[Post], budget: float = HOOK_BUDGET) -> None:
    """Post in order after anything already waiting in the outbox; spool what is not sent.

    Everything happens within ``budget`` seconds (below the hook's timeout): a hook killed
    by Claude Code would lose the reply it had not spooled yet.
    """
    from bridge.discord.outbox import Outbox

    deadline = time.monotonic() + budget
    outbox = Outbox(context.runtime.outbox)
    channel = context.channel_id
    with outbox.locked(channel, until=deadline) as locked:
        if not locked:  # the bot is draining a backlog right now: queue behind it
            _spool(outbox, context, posts, "the channel's outbox is being drained")
            return
        with context.rest() as rest:
            sender = _Sender(rest, channel, deadline, context)
            if outbox.pending(channel) and not outbox.drain(channel, sender.send_entry, deadline):
                _spool(outbox, context, posts, "older messages are still waiting")
                return
            for i, post in enumerate(posts):
                if not sender.send(post):
                    _spool(outbox, context, posts[i:], "Discord did not answer in time")
                    return


class _Sender:
    """Posts for :func:`deliver` within its deadline. ``send`` returns False when the post
    should be spooled (Discord unreachable, out of time) and True when it is done with it."""

    def __init__(self, rest: DiscordREST, channel: str, deadline: float, context: HookContext):
        self.rest = rest
        self.channel = channel
        self.deadline = deadline
        self.context = context

    def send(self, post: Post) -> bool:
        from bridge.discord.rest import DeliveryError

        remaining = self.deadline - time.monotonic()
        if remaining < 1.0:
            return False
        self.rest.budget = min(self.rest.budget, remaining - 0.5)
        try:
            send_post(self.rest, self.channel, post)
        except DeliveryError as err:
            if err.retryable:
                return False
            log(self.context, f"Discord refused a reply message for #{self.channel}: {err}")
        except Exception as err:  # an answer we did not expect: keep the message
            log(self.context, f"sending to #{self.channel} failed: {err!r}")
            return False
        return True

    def send_entry(self, _entry: dict, post: Post) -> None:
        """For :meth:`Outbox.drain`, which wants a DeliveryError when a post must wait."""
        from bridge.discord.rest import DeliveryError

        if not self.send(post):
            raise DeliveryError("not sent yet", retryable=True)


def send_post(rest: DiscordREST, channel: str, post: Post) -> None:
    """Create the message; if Discord refuses its files (too large for this server, …),
    send the text anyway with a note rather than lose both."""
    from bridge.discord.rest import DeliveryError, Post

    try:
        rest.create_message(channel, post)
    except DeliveryError as err:
        if err.retryable or not post.files:
            raise
        if post.payload.get("content"):
            rest.create_message(channel, Post(post.payload))  # same nonce, without the files
        names = ", ".join(f"`{name}`" for name, _ in post.files)[:1800]
        note = f"⚠️ Discord refused the attached files {names} ({err.status or 'error'})"
        rest.create_message(channel, Post(message_payload(note)))


def _spool(outbox: Outbox, context: HookContext, posts: list[Post], why: str) -> None:
    for post in posts:
        outbox.enqueue(context.channel_id, context.server.name, post)
    log(context, f"{why}: {len(posts)} message(s) for #{context.channel_id} queued")


def log(context: HookContext, line: str) -> None:
    runtime.append_log(context.runtime.hook_log, line)
