"""Reading the Codex TUI's screen: its input box, its busy marker, its dialogs.

Measured on Codex 0.171.0 in tmux (160×45). Idle, the bottom of the screen is::

    › Ask Codex to do anything                 (the box: ›, then its text or a dim placeholder)
      gpt-5 default · /path/to/project         (the footer: model, cwd, the last prompt)
      ← for agents · ? for shortcuts

Busy, a ``• Working (2s • esc to interrupt)`` line stands above the box, which stays (text
typed then is queued for the next turn). A dialog replaces the box, its options marked with
the same ``›``, numbered::

      Hooks need review
      1 hook is new or changed.
      Hooks can run outside the sandbox after you trust them.
    › 1. Review hooks
      2. Trust all and continue
      3. Continue without trusting (hooks won't run)
      enter confirm · esc skip

A digit there only moves the ``›`` (Enter confirms), so its options are read as a plain list:
arrows, a check that the ``›`` is on the option, then Enter (``bridge.sessions.screen_keys``).
Pure functions over a captured screen (plain text); nothing here talks to tmux.
"""

from __future__ import annotations

import hashlib
import re

from bridge.claude.dialogs import QUESTION_LIMIT, Dialog, Option

POINTER = "›"
# The dim hints Codex shows in an empty box (0.171.0's binary holds these two).
PLACEHOLDERS = ("Ask Codex to do anything", "Ask a follow-up question")
BUSY_MARKER = "esc to interrupt"  # "• Working (2s • esc to interrupt)" above the box
_OPTION = re.compile(r"(?P<n>\d{1,2})\.\s+(?P<label>.+)")
QUESTION_LINES = 12  # lines above a dialog's options read as its question, at most


def _pointer_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith(POINTER + " ") or line == POINTER]


def input_box(screen: str) -> str | None:
    """The text in Codex's input box, or None when a dialog (or nothing) is on screen.

    The box is the last line starting with ``›``; a numbered option there (``› 1. …``), or
    an option or a dialog's key hint below it, means a dialog holds the screen instead."""
    lines = screen.splitlines()
    pointers = _pointer_lines(lines)
    if not pointers:
        return None
    at = pointers[-1]
    first = lines[at][1:].strip()
    if _OPTION.fullmatch(first) or any(_is_option_or_hint(line) for line in lines[at + 1 :]):
        return None
    body = [first, *(line.strip() for line in _box_continuation(lines[at + 1 :]))]
    text = "\n".join(body).strip()
    return "" if text in PLACEHOLDERS else text


def _box_continuation(lines: list[str]) -> list[str]:
    """The box's further lines (a long or multi-line prompt, indented): up to the blank
    line between the box and its footer (measured: idle, busy and holding text alike)."""
    kept: list[str] = []
    for line in lines:
        if not line.strip():
            return kept
        kept.append(line)
    return []  # no blank line below: not the box's layout, its own line only


def _is_option_or_hint(line: str) -> bool:
    text = line.strip()
    return bool(_OPTION.fullmatch(text)) or text.startswith(("enter confirm", "enter to "))


def is_busy(screen: str) -> bool:
    """A turn is running: the ``esc to interrupt`` line above the box."""
    return BUSY_MARKER in screen


def is_prompt_ready(screen: str) -> bool:
    """Codex shows its input box, empty."""
    return input_box(screen) == ""


def mode_on_screen(screen: str) -> str | None:
    """Codex's footer shows no permission mode the bridge knows: always None."""
    return None


def read_dialog(screen: str) -> Dialog | None:
    """The dialog on ``screen`` (its question above its numbered options), or None when the
    input box shows or no list of two options or more is under a ``›``."""
    if input_box(screen) is not None:
        return None
    lines = [line.rstrip() for line in screen.splitlines()]
    pointers = [i for i in _pointer_lines(lines) if _OPTION.fullmatch(lines[i][1:].strip())]
    if not pointers:
        return None
    at = pointers[-1]
    first = at
    while first > 0 and _OPTION.fullmatch(lines[first - 1].strip()):
        first -= 1
    last = at
    while last + 1 < len(lines) and _OPTION.fullmatch(lines[last + 1].strip()):
        last += 1
    options: list[Option] = []
    for index in range(first, last + 1):
        match = _OPTION.fullmatch(lines[index].lstrip(POINTER).strip())
        assert match is not None
        options.append(Option(match["label"], None))
    if len(options) < 2:
        return None
    question = _question(lines[max(0, first - QUESTION_LINES) : first])
    digest = hashlib.sha256("\n".join([question, *(o.label for o in options)]).encode())
    return Dialog(question, tuple(options), at - first, digest.hexdigest()[:12])


def _question(lines: list[str]) -> str:
    """The dialog's own lines above its options: the blank lines right above them skipped,
    then back to two blank lines in a row (its question and a command may stand one blank
    line apart)."""
    kept: list[str] = []
    for line in reversed(lines):
        if not line.strip() and (not kept or not kept[-1]):
            if len(kept) > 1:
                break
            continue
        kept.append(line.strip())
    return "\n".join(reversed(kept)).strip()[:QUESTION_LIMIT]
