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

from bridge.claude.transcript import reply_and_note
from bridge.discord.delivery import allowed, message_payload
from bridge.handlers.context import HookContext
from bridge.state import runtime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.discord.render.attachments import OutputFile
    from bridge.discord.rest import Post

MAX_ATTACHMENTS = 20  # markers honoured per reply; each file is read into memory
FULL_REPLY_NAME = "reply.md"
FULL_REPLY_NOTE = "📎 The full reply is attached as `reply.md`."
SLOW_REPLY_NOTE = (
    "⚠️ This reply could not be laid out for Discord in time: it is attached as `reply.md`."
)
FORMAT_BUDGET = (
    10.0  # seconds for build_posts; delivery gets 40 more, the Stop hook's timeout is 60
)
LONG_REPLY_CHARS = (
    256 * 1024
)  # beyond this (and 4x what attachAfterMessages shows), lay out the start only


def on_stop(context: HookContext) -> None:
    text, note = reply_and_note(context.event)
    if not text.strip() and not note:
        return
    rt = context.runtime.ensure()
    outputs = rt.channel_dir("outputs", context.channel_id)
    cfg = context.cfg
    footer = reply_footer(rt, context.event.get("session_id")) if cfg.footer else ""
    mention = _owner_mention(context)
    if mention:
        footer = f"{footer} · 🔔 {mention}" if footer else f"-# 🔔 {mention}"
    posts = build_posts(text, outputs, cfg.upload_limit, cfg.attach_after, footer, note=note)
    if mention:  # only the footer's mention may ping (the model's text never does)
        footer_post = next(p for p in reversed(posts) if mention in p.payload.get("content", ""))
        footer_post.payload["allowed_mentions"] = allowed(mention)
    context.deliver(posts)


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
    from bridge.state.status_cache import read_status

    record = read_status(rt, session_id)
    if not record or record.get("context_percent") is None:
        return ""
    return footer_line(record)


def build_posts(
    text: str,
    outputs_dir: str,
    upload_limit: int,
    attach_after: int = 4,
    footer: str = "",
    budget: float = FORMAT_BUDGET,
    note: str = "",
) -> list[Post]:
    """Messages for one reply: text chunks first, files attached from the last chunk on.

    ``note`` (what was cut reading the reply), refusal notes and ``footer`` end the last
    message. A reply that would take more than ``attach_after`` messages posts
    ``attach_after - 1`` of them, then a note with the whole reply attached as ``reply.md``
    (cut at ``upload_limit``, and the note says so). Laying the reply out may take ``budget``
    seconds; past that, the reply is only attached, with a note.
    """
    import time

    from bridge.discord.render.attachments import extract_markers, format_refusals, plan_uploads
    from bridge.discord.render.split import SplitTimeout, split_message
    from bridge.discord.rest import Post

    deadline = time.monotonic() + budget
    body, names = extract_markers(text)
    files, refused = _resolve_files(outputs_dir, names, upload_limit)
    tail = _paragraphs(note, format_refusals(refused), footer)
    try:
        chunks, full = _lay_out(body, tail, upload_limit, attach_after, deadline)
    except SplitTimeout:  # pathological text: attach it rather than lose it to the hook's timeout
        full, cut_note = _full_reply(body, upload_limit)
        chunks = split_message(_paragraphs(SLOW_REPLY_NOTE, cut_note, tail))
    if full is not None:
        files.insert(0, full)
    posts = [Post(message_payload(chunk)) for chunk in chunks]
    for i, batch in enumerate(plan_uploads(files)):
        uploads = [(f.upload_name, f.data) for f in batch]
        if i == 0 and posts:
            posts[-1].files = uploads
        else:
            posts.append(Post(message_payload(""), uploads))
    return posts


def _lay_out(
    body: str, tail: str, upload_limit: int, attach_after: int, deadline: float
) -> tuple[list[str], OutputFile | None]:
    """The reply's message texts, and ``reply.md`` when the reply is too long to post."""
    from bridge.discord.render.split import DISCORD_MESSAGE_LIMIT, close_open_fence, split_message

    keep = max(attach_after, 1)
    # Far more text than ``attach_after`` messages hold: only its start is ever shown, so
    # only the start is laid out (a 50 MB reply must not be rendered and split whole).
    huge = len(body) > max(LONG_REPLY_CHARS, 4 * keep * DISCORD_MESSAGE_LIMIT)
    shown = body[: 2 * (keep + 2) * DISCORD_MESSAGE_LIMIT] if huge else body
    if "|" in shown:  # only then can there be a table to render (and its module to import)
        from bridge.discord.render.tables import render_tables

        shown = render_tables(shown)
    if tail:
        shown = close_open_fence(shown)  # the footer must not end up inside a code block
    if not huge:
        chunks = split_message(_paragraphs(shown, tail), deadline=deadline)
        if len(chunks) <= keep:
            return chunks, None
    full, cut_note = _full_reply(body, upload_limit)
    head = split_message(shown, deadline=deadline)[: attach_after - 1]
    return head + split_message(_paragraphs(FULL_REPLY_NOTE, cut_note, tail)), full


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


def _full_reply(body: str, upload_limit: int) -> tuple[OutputFile, str]:
    """The reply as Claude wrote it (markers removed, tables as Markdown), as ``reply.md``,
    cut to ``upload_limit`` bytes; the second value says what was cut (empty if nothing)."""
    from bridge.discord.render.attachments import OutputFile, format_size

    data = body.encode()
    note = ""
    if len(data) > upload_limit:
        note = (
            f"⚠️ The reply is {format_size(len(data))}, over the {format_size(upload_limit)}"
            f" upload limit: `reply.md` holds its first {format_size(upload_limit)},"
            " the rest was cut."
        )
        data = data[:upload_limit].decode(errors="ignore").encode()  # whole characters only
    return OutputFile(name=FULL_REPLY_NAME, upload_name=FULL_REPLY_NAME, data=data), note


def _paragraphs(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)
