"""The Stop hook's job: turn Claude's final reply into Discord messages and deliver them.

Reply text comes from the event's ``last_assistant_message`` (or the transcript), attachment
markers become uploads from the session's ``outputs/`` directory, Markdown tables become aligned
code blocks, a footer (model, context, cost: ``reply_footer``; the bot may bring it in by an
edit once the turn's record is in the transcript, so that the reply never waits for it) ends
the reply, the text is split into ≤ 2000-character messages with balanced code fences (a reply
too long for ``replies.attachAfterMessages`` messages posts its start and attaches the whole as
``reply.md``), and everything is delivered in order, spooling to the outbox whatever Discord
does not take now.
"""

from __future__ import annotations

from bridge.claude.transcript import reply_and_note
from bridge.handlers.context import HookContext

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.discord.post import Post
    from bridge.discord.render.attachments import OutputFile, Refused
    from bridge.handlers.notify import DeskQuery
    from bridge.handlers.turn_changes import PendingChanges

MAX_ATTACHMENTS = 20  # markers honoured per reply; each file is read into memory
FULL_REPLY_NAME = "reply.md"
FULL_REPLY_NOTE = "📎 The full reply is attached as `reply.md`."
SLOW_REPLY_NOTE = "⚠️ This reply could not be laid out in time: it is attached as `reply.md`."
FORMAT_BUDGET = 10.0  # seconds for build_posts; delivery gets 40 more; the hook's timeout: 60
# Of a reply, what the bot is handed to read aloud: ample for voice.maxReplySeconds of prose.
SPEECH_CHARS = 32 * 1024
LONG_REPLY_CHARS = 256 * 1024  # beyond this (and 4x attachAfterMessages), lay out the start only


def on_stop(
    context: HookContext, turn_changes: PendingChanges | None = None, desk: DeskQuery | None = None
) -> bool:
    """Post the reply; False when there was nothing to post. ``turn_changes``: what the turn
    changed in git, waited for (once the reply is laid out) only when it goes on the reply
    (a turn too short for a status message, or progress off). ``desk``: whether the owner
    is at the desk, asked of tmux earlier (:func:`bridge.handlers.notify.ask_desk`)."""
    from bridge.handlers.background import reply_heading

    text, note = reply_and_note(context.event)
    heading = reply_heading(context)  # a background task's report prompted this reply
    if not text.strip() and not note and not heading:
        return False
    rt = context.runtime.ensure()
    outputs = rt.channel_dir("outputs", context.channel_id)
    cfg = context.cfg
    known = _footer_now(context, text) if cfg.footer else None  # tmux answers meanwhile
    tail = Tail(mention=_owner_mention(context, desk))
    if known is not None:
        _add_footer(context, text, tail, *known)
    changes = turn_changes() if turn_changes is not None and turn_changes.on_reply else None
    if changes:
        from bridge.handlers.turn_changes import diff_button

        tail.changes = changes["summary"]
        tail.components = [diff_button(context.channel_id, changes)]
    if heading:
        text = f"{heading}\n{text}"
    posts = build_posts(text, outputs, cfg.upload_limit, cfg.attach_after, tail, note=note)
    if posts:  # the bot may also speak it (voice.replies): it takes the text, never the hook
        posts[-1].speech = text[:SPEECH_CHARS]
    context.deliver(posts)
    return True


class Tail:
    """What ends a reply, laid out by :func:`build_posts` after its text: the turn's changes
    summary above the footer line, the owner's mention at the end of that line (the one ping
    a reply may carry: only the message holding it grants it), and the components (the
    **Diff** button) of the reply's last message. ``pending``: the bot brings a better footer
    in later (``handlers/reply_footer``); the reply is then laid out with ``room``, a line as
    long as the footer line could become, in place of its own."""

    __slots__ = ("changes", "components", "footer", "mention", "pending", "room")

    def __init__(
        self,
        footer: str = "",
        mention: str = "",
        changes: str = "",
        components: list[dict] | None = None,
    ) -> None:
        self.footer = footer  # ``-# Opus 5.5 · ctx 12% · $0.43`` or empty
        self.mention = mention  # ``<@id>`` or empty
        self.changes = changes
        self.components = components or []
        self.pending: dict | None = None
        self.room = ""

    def text(self, layout: bool = False) -> str:
        """The lines that end the reply's last text message (``layout``: with the room for
        a later footer in place of the footer line)."""
        line = self.room if layout and self.pending else self.line()
        return "\n".join(part for part in (self.changes, line) if part)

    def settle(self, chunk: str) -> str | None:
        """The reply's last text message laid out with the room: with its own line instead;
        None if it does not end with the room (the reply is then laid out again without)."""
        if not chunk.endswith(self.room):
            return None
        return chunk[: len(chunk) - len(self.room)] + self.line()

    def line(self) -> str:
        """The footer line: the footer with the mention at its end."""
        from bridge.handlers.reply_footer import ending_line  # only with a reply to post

        return ending_line(self.footer, self.mention)


def _footer_now(context: HookContext, text: str) -> tuple[str, bool]:
    """The footer as known now, and whether it is final (this reply's record is in the
    transcript)."""
    from bridge.handlers import reply_footer as footers

    event = context.event
    return footers.current_footer(
        context.runtime, event.get("session_id"), event.get("transcript_path"), text
    )


def _add_footer(context: HookContext, text: str, tail: Tail, footer: str, final: bool) -> None:
    """The footer on the ``tail``; when this reply's record is not in the transcript yet and
    the bot takes the reply, what the bot needs to bring the footer in once it is. With no bot
    to edit the message later (or no line to edit), wait for the record here."""
    from bridge.discord import handoff
    from bridge.handlers import reply_footer as footers

    rt, event = context.runtime, context.event
    session, transcript = event.get("session_id"), event.get("transcript_path")
    if not final and handoff.bot_listening(rt):
        tail.footer = footer
        tail.pending = footers.pending(event, text, tail.line(), tail.mention)
        if tail.pending is not None:
            tail.room = footers.longest_line(rt, session, tail.mention)
            return
    if not final:
        footer = footers.reply_footer(rt, session, transcript, text)
    tail.footer = footer


def _owner_mention(context: HookContext, desk: DeskQuery | None) -> str:
    """Claude now waits for the user: ping the owner with the reply, once per wait."""
    from bridge.handlers.notify import claim_wait, mention_for

    mention = mention_for(context, desk)
    return mention if mention and claim_wait(context) else ""


def build_posts(
    text: str,
    outputs_dir: str,
    upload_limit: int,
    attach_after: int = 4,
    tail: Tail | None = None,
    budget: float = FORMAT_BUDGET,
    note: str = "",
) -> list[Post]:
    """Messages for one reply: text chunks first, files attached from the last chunk on.

    ``note`` (what was cut reading the reply), refusal notes and the ``tail``'s text end the
    last text message, which alone may ping the tail's mention; the tail's components go on
    the very last message. A reply that would take more than ``attach_after`` messages posts
    ``attach_after - 1`` of them, then a note with the whole reply attached as ``reply.md``
    (cut at ``upload_limit``, and the note says so). Laying the reply out may take ``budget``
    seconds; past that, the reply is only attached, with a note.
    """
    import time

    from bridge.discord.post import Post, allowed, message_payload
    from bridge.discord.render.attachments import extract_markers, format_refusals, plan_uploads

    tail = tail or Tail()
    deadline = time.monotonic() + budget
    body, names = extract_markers(text)
    files, refused = _resolve_files(outputs_dir, names, upload_limit)
    refusals = format_refusals(refused)
    ending = _paragraphs(note, refusals, tail.text(layout=True))
    chunks, full = _lay_out_in_time(body, ending, upload_limit, attach_after, deadline)
    if tail.pending:
        last = tail.settle(chunks[-1]) if chunks else None
        if last is not None:
            chunks[-1] = last
        else:  # no room where the footer line goes: the reply keeps the footer it has
            tail.pending = None
            ending = _paragraphs(note, refusals, tail.text())
            chunks, full = _lay_out_in_time(body, ending, upload_limit, attach_after, deadline)
    if full is not None:
        files.insert(0, full)
    posts = [Post(message_payload(chunk)) for chunk in chunks]
    if tail.mention and posts:  # the message ending with the tail; the model's text never pings
        posts[-1].payload["allowed_mentions"] = allowed(tail.mention)
    if tail.pending and posts:  # the bot brings the footer in there once the record lands
        posts[-1].footer = tail.pending
    for i, batch in enumerate(plan_uploads(files)):
        uploads = [(f.upload_name, f.data) for f in batch]
        if i == 0 and posts:
            posts[-1].files = uploads
        else:
            posts.append(Post(message_payload(""), uploads))
    if tail.components and posts:
        posts[-1].payload["components"] = tail.components
    return posts


def _lay_out_in_time(
    body: str, ending: str, upload_limit: int, attach_after: int, deadline: float
) -> tuple[list[str], OutputFile | None]:
    """:func:`_lay_out`, or past the ``deadline`` (pathological text) the reply attached
    rather than lost to the hook's timeout."""
    from bridge.discord.render.split import SplitTimeout, split_message

    try:
        return _lay_out(body, ending, upload_limit, attach_after, deadline)
    except SplitTimeout:
        full, cut_note = _full_reply(body, upload_limit)
        return split_message(_paragraphs(SLOW_REPLY_NOTE, cut_note, ending)), full


def _lay_out(
    body: str, ending: str, upload_limit: int, attach_after: int, deadline: float
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
    if ending:
        shown = close_open_fence(shown)  # the footer must not end up inside a code block
    if not huge:
        chunks = split_message(_paragraphs(shown, ending), deadline=deadline)
        if len(chunks) <= keep:
            return chunks, None
    full, cut_note = _full_reply(body, upload_limit)
    head = split_message(shown, deadline=deadline)[: attach_after - 1]
    return head + split_message(_paragraphs(FULL_REPLY_NOTE, cut_note, ending)), full


def _resolve_files(
    outputs_dir: str, names: list[str], upload_limit: int
) -> tuple[list[OutputFile], list[Refused]]:
    """The marker files that may be uploaded (read now) and the refusals, in marker order."""
    from bridge.discord.attachment_files import resolve_output_file
    from bridge.discord.render.attachments import Refused

    files: list[OutputFile] = []
    refused = [
        Refused(name, f"more than {MAX_ATTACHMENTS} files in one reply")
        for name in names[MAX_ATTACHMENTS:]
    ]
    for name in names[:MAX_ATTACHMENTS]:
        result = resolve_output_file(outputs_dir, name, upload_limit)
        if isinstance(result, Refused):
            refused.append(result)
        else:
            files.append(result)
    return files, refused


def _full_reply(body: str, upload_limit: int) -> tuple[OutputFile, str]:
    """The reply as Claude wrote it (markers removed, tables as Markdown), as ``reply.md``,
    cut to ``upload_limit`` bytes; the second value says what was cut (empty if nothing)."""
    from bridge.discord.render.attachments import OutputFile
    from bridge.sizes import format_size

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
