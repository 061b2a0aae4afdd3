"""A git diff as Discord shows it: inline ``diff`` code blocks, or a ``.diff`` file.

Pure. The diff is untrusted text (file names and contents are whatever the repository holds):
it only ever appears inside code blocks, with a zero-width space after every backtick that
another follows, and the caller sends it with no mentions allowed. Discord ends a block at
the next three backticks wherever they stand (mid-line, inside a longer run), so breaking
only each ``` would leave a live fence in a run of five; with no two backticks adjacent no
run of any length can close (or open) a block.

A diff that fits ``inline_messages`` messages is posted as ``diff`` code blocks split like
replies (``split.py`` closes and reopens the fence at each cut); a longer one becomes
``<name>.diff`` (the original bytes) with a per-file summary.
"""

from __future__ import annotations

from bridge.discord.render.split import DISCORD_MESSAGE_LIMIT, split_message

_ZWSP = "\u200b"
MAX_LISTED = 40  # files named in a long diff's summary


class DiffView:
    """What to send: ``messages`` (texts, in order) and, for a long diff, ``file``. A diff of
    two trees also carries them (``trees``: old, new) and its ``files`` (``FileChange``s),
    for the review's file select (``bridge/bot/changes/review.py``)."""

    def __init__(
        self,
        messages: list[str],
        file: tuple[str, bytes] | None = None,
        trees: tuple[str, str] | None = None,
        files: list | None = None,
    ) -> None:
        self.messages = messages
        self.file = file
        self.trees = trees
        self.files = files or []


def defuse(text: str) -> str:
    """``text`` that cannot close (or open) a code block: no two backticks adjacent."""
    return text.replace("``", f"`{_ZWSP}`").replace("``", f"`{_ZWSP}`")


def render(
    title: str,
    files: list,
    diff: str,
    cut: bool = False,
    inline_messages: int = 4,
    name: str = "changes",
) -> DiffView:
    """``title`` (Markdown the caller made safe), ``files`` (``FileChange``s), the diff text."""
    note = "\n⚠️ The diff was cut: it is too large to show whole." if cut else ""
    if diff.strip():
        body = f"{title}{note}\n```diff\n{defuse(diff.rstrip())}\n```"
        chunks = split_message(body)
        if len(chunks) <= inline_messages:
            return DiffView(chunks)
    listing = file_listing(files)
    text = f"{title}{note}\n📎 The whole diff is attached as `{name}.diff`.\n{listing}"
    return DiffView(split_message(text)[:1], (f"{name}.diff", diff.encode()))


def file_listing(files: list, budget: int = DISCORD_MESSAGE_LIMIT - 300) -> str:
    """``+12 −3  src/app.py`` per file (``binary`` for binary ones) in a code block."""
    lines = []
    used = 0
    for i, change in enumerate(files):
        counts = "binary" if change.added is None else f"+{change.added} −{change.removed}"
        line = f"{counts:>12}  {defuse(_printable(change.path))}"
        if i >= MAX_LISTED or used + len(line) > budget:
            lines.append(f"… and {len(files) - i} more")
            break
        lines.append(line)
        used += len(line) + 1
    return "```\n" + "\n".join(lines) + "\n```" if lines else ""


def _printable(path: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in path)
