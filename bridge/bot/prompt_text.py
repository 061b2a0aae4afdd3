"""A Discord message as Claude Code's prompt: its first character defused, attached files
listed, the ✅ it gets once typed. Shared by every room that types a prompt (the relay,
``/queue``, a review, a scheduled prompt, a preview's **Send to Claude**).
"""

from __future__ import annotations

DELIVERED = "✅"
SPECIAL_PREFIXES = ("!", "#", "&")


def defuse_prefix(text: str) -> str:
    """Messages are prompts, never terminal commands.

    A leading space keeps ``!`` (bash mode: a shell command with no permission check), ``#``
    and ``&`` from switching modes; Claude Code trims it before looking for slash commands,
    so a ``/command`` gets a backslash instead (``\\/model`` reaches the model as text). A
    path such as ``/etc/hosts …`` is left alone: Claude Code does not take it for a command.

    Claude Code's trim is JavaScript's: every Unicode space (NBSP, U+3000 …) and line break,
    so ``"\\u00a0/model x"`` is the command ``/model x``. Leading whitespace of every kind
    (``str.isspace``, a superset of JavaScript's) goes first, so the check sees the first
    character Claude Code sees.
    """
    text = text.lstrip()
    if text.startswith("/"):
        first_word = text.split(maxsplit=1)[0]
        return "\\" + text if "/" not in first_word[1:] else text
    return " " + text if text.startswith(SPECIAL_PREFIXES) else text


def compose_prompt(text: str, attachment_paths: list[str]) -> str:
    """The text, then one ``Attached file: /path`` line per download.

    Not ``[attachment: /path]``: Claude Code 2.1.330 does not submit an input whose line is
    a bracketed absolute path (Enter is swallowed), measured in tmux. Leading newlines go, so
    that :func:`defuse_prefix` sees the real first character.
    """
    lines = [f"Attached file: {path}" for path in attachment_paths]
    return "\n".join([text, *lines] if text else lines).strip("\n")
