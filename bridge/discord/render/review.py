"""A review from the phone, as Discord shows it and as Claude reads it (issue 20 §1).

Pure. Four things are drawn here: the file select under a diff (25 files a page), one file's
hunks with the new file's line numbers (the numbers a comment takes), the draft review
message (what is gathered so far), and the one prompt **Send review** types into the
session. File names and contents are the repository's (untrusted): in Discord they only
appear in code blocks that cannot be closed (``diff_view.defuse``), in code spans holding no
backtick (:func:`code_span`), or escaped; the caller sends with no mentions allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bridge.discord.render.diff_view import DiffView, defuse
from bridge.discord.render.split import DISCORD_MESSAGE_LIMIT, split_message
from bridge.discord.render.visible import escape

if TYPE_CHECKING:
    from bridge.sessions.review_files import CommentNow
    from bridge.state.review_drafts import Comment

PAGE = 25  # options in a select menu (Discord's limit)
LABEL_LIMIT = 100  # a select option's label and description
TITLE_LIMIT = 45  # a modal's title
QUOTED_LINES = 20  # lines quoted per comment in the prompt; more are counted
QUOTED_WIDTH = 300  # characters quoted per line
PREVIEW = 90  # characters of a comment shown in the draft message


# --- the file select --------------------------------------------------------------------------


def pages(count: int) -> int:
    return max(1, -(-count // PAGE))


def file_options(files: list, page: int) -> list[tuple[str, str, str]]:
    """``(label, value, description)`` of the files on ``page``: the value is the file's
    index in ``files`` (``FileChange``s, in the diff's order)."""
    start = page * PAGE
    options = []
    for index, change in enumerate(files[start : start + PAGE], start):
        counts = "binary" if change.added is None else f"+{change.added} −{change.removed}"
        options.append((tail(printable(change.path), LABEL_LIMIT), str(index), counts))
    return options


# --- one file ---------------------------------------------------------------------------------


def file_view(
    path: str, counts: str, numbered: list[str], inline_messages: int, reason: str = ""
) -> DiffView:
    """``numbered`` (``review_lines.numbered``) in ``diff`` code blocks, split like replies,
    or, past ``inline_messages`` messages, attached as ``<file>.diff.txt`` after its start.
    ``reason``: why no comment can be made on this file (said instead of how to)."""
    how = (
        escape(reason)
        if reason
        else "The numbers are the file's lines in this diff: "
        "**Comment…** takes one (`12`) or a range (`12-18`)."
    )
    title = f"💬 {code_span(path)} · {counts}\n{how}"
    if not numbered:
        return DiffView([title])
    body = defuse("\n".join(numbered))
    chunks = split_message(f"{title}\n```diff\n{body}\n```")
    if len(chunks) <= inline_messages:
        return DiffView(chunks)
    name = tail(_file_name(path), 80) + ".diff.txt"
    note = f"📎 The whole file's diff is attached as {code_span(name)}."
    room = DISCORD_MESSAGE_LIMIT - len(title) - len(note) - 2
    head = split_message(f"```diff\n{body}\n```", room)[0]
    return DiffView([f"{title}\n{note}\n{head}"], (name, "\n".join(numbered).encode()))


def modal_title(path: str) -> str:
    """``Comment on app.py`` within a modal title's 45 characters (the end of a long path)."""
    return tail("Comment on " + printable(path), TITLE_LIMIT, keep=len("Comment on "))


# --- the draft message ------------------------------------------------------------------------


def draft_content(comments: list[Comment], files: int) -> str:
    """The draft review message: what is gathered, one line per comment (within 2,000)."""
    count = len(comments)
    head = (
        f"📝 **Draft review** · {_count(count, 'comment')} on {_count(files, 'file')}"
        " — typed to Claude as one prompt when you press **Send review**."
    )
    return head + "\n" + comment_list(comments, DISCORD_MESSAGE_LIMIT - len(head) - 1)


def sent_content(comments: list[Comment], files: int, by: str, as_file: str | None = None) -> str:
    how = f" (in {code_span(as_file)})" if as_file else ""
    head = (
        f"✅ **Review sent** to Claude by {escape(by)}: {_count(len(comments), 'comment')} "
        f"on {_count(files, 'file')}{how}."
    )
    return head + "\n" + comment_list(comments, DISCORD_MESSAGE_LIMIT - len(head) - 1)


def discarded_content(count: int, by: str) -> str:
    return f"🗑️ Draft review discarded by {escape(by)} ({_count(count, 'comment')})."


def comment_list(comments: list[Comment], budget: int) -> str:
    """``1. `app.py` 12–18 — the comment…`` per comment, as many as ``budget`` holds."""
    lines: list[str] = []
    used = 0
    for number, comment in enumerate(comments, 1):
        line = f"{number}. {comment_label(comment, markdown=True)} — {preview(comment.text)}"
        more = f"… and {len(comments) - number + 1} more"
        if used + len(line) + 1 > budget - len(more) - 1 and number < len(comments):
            lines.append(more)
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def comment_label(comment: Comment, markdown: bool = False) -> str:
    """``app.py 12–18`` (with the path in a code span for a message)."""
    path = printable(comment.path)
    start, end = comment.start, comment.end
    lines = f"{start}" if start == end else f"{start}–{end}"
    return f"{code_span(path)} {lines}" if markdown else f"{path} {lines}"


def preview(text: str, limit: int = PREVIEW) -> str:
    flat = " ".join(text.split())
    return escape(flat if len(flat) <= limit else flat[: limit - 1] + "…")


# --- the prompt -------------------------------------------------------------------------------


def review_prompt(items: list[CommentNow]) -> str:
    """Every comment with its file, lines, the lines quoted as they are now, and the comment:
    enough for Claude to act without reading the diff again."""
    files = len(dict.fromkeys(item.path for item in items))
    parts = [
        f"Review of your changes: {_count(len(items), 'comment')} on {_count(files, 'file')}. "
        "Please address each one. Line numbers and quoted lines are the files as they are now."
    ]
    for number, item in enumerate(items, 1):
        parts.append(_prompt_item(number, item))
    return "\n\n".join(parts)


def _prompt_item(number: int, item: CommentNow) -> str:
    path = printable(item.path)
    if item.gone:
        head = f"{number}. {path} (this file no longer exists; the comment was on these lines):"
        body = _quote(item.was or [], item.was_start)
    elif item.removed:
        head = (
            f"{number}. {path}, around line {item.start} (the lines this comment was on "
            "were removed since; they read):"
        )
        body = _quote(item.was or [], item.was_start)
    else:
        notes = []
        if item.moved_from and item.moved_from != (item.start, item.end):
            notes.append(f"{_lines(*item.moved_from)} when commented")
        if item.changed:
            notes.append("changed since this comment was written")
        aside = f" ({'; '.join(notes)})" if notes else ""
        head = f"{number}. {path}, {_lines(item.start, item.end)}{aside}:"
        body = _quote(item.lines, item.start)
        if item.changed and item.was is not None:
            body += f"\n   When commented, they read:\n{_quote(item.was, item.was_start)}"
    comment = "\n   ".join(item.text.strip().splitlines())
    return f"{head}\n{body}\n   Comment: {comment}"


def _lines(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def _quote(lines: list[str], first: int) -> str:
    if not lines:
        return "   (no lines)"
    width = len(str(first + min(len(lines), QUOTED_LINES) - 1))
    out = []
    for offset, line in enumerate(lines[:QUOTED_LINES]):
        text = line.expandtabs(4).rstrip()
        if len(text) > QUOTED_WIDTH:
            text = text[: QUOTED_WIDTH - 1] + "…"
        out.append(f"   {first + offset:>{width}} | {text}")
    if len(lines) > QUOTED_LINES:
        out.append(f"   … ({len(lines) - QUOTED_LINES} more lines)")
    return "\n".join(out)


def pointer_prompt(path: str, comments: int, files: int) -> str:
    """The short prompt typed for a review too tall to type: where the whole review is."""
    return (
        f"Review of your changes: {_count(comments, 'comment')} on {_count(files, 'file')}, "
        f"written out in {path} (too long to type here). Please read that file and address "
        "each comment."
    )


# --- text helpers -----------------------------------------------------------------------------


def printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def code_span(text: str) -> str:
    """``text`` in a code span it cannot end: its backticks become look-alikes (ˋ)."""
    return "`" + printable(text).replace("`", "ˋ") + "`"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def tail(text: str, limit: int, keep: int = 0) -> str:
    """``text`` within ``limit`` characters: its first ``keep`` and its end, ``…`` between."""
    if len(text) <= limit:
        return text
    return text[:keep] + "…" + text[len(text) - (limit - keep - 1) :]


def _file_name(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name) or "file"
