"""Reading a Claude Code dialog off the screen: its question, its options, the highlighted one.

Claude Code shows screens no hook reports (folder trust, the bypass-permissions warning, an API
key approval, "Switch model?", MCP server approvals) and the dialogs hooks do report
(permission, question, plan). They share one shape, measured on 2.1.330::

    ──────────────────────────────────     (a rule: the dialog starts below the last one)
     Accessing workspace:
     …the question…
     ❯ No, exit                            (❯ marks the highlighted option)
       Yes, I trust this folder
     Enter to confirm · Esc to cancel

Options are either numbered (``❯ 1. Yes`` / ``2. No``: a digit picks one) or plain (arrow keys
move the ❯, Enter confirms). :func:`read_dialog` turns a captured screen (plain text) into a
:class:`Dialog`; :func:`keys_for` says which keys pick an option. Pure functions, no tmux.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from bridge.claude.screen import RULE, input_box

POINTER = "❯"
INNER_RULE = "╌╌╌╌"  # the dashed lines around a command in a permission dialog
QUESTION_LIMIT = 1500  # characters of question text kept (a Discord message holds 2,000)
_NUMBERED = re.compile(r"(?P<n>\d{1,2})\.\s+(?P<label>.+)")


@dataclass(frozen=True)
class Option:
    label: str
    number: int | None  # the number Claude Code shows (``2. No``), None for a plain list


@dataclass(frozen=True)
class Dialog:
    question: str  # the dialog's text above its options, blank runs collapsed
    options: tuple[Option, ...]
    selected: int  # index of the highlighted option
    fingerprint: str  # the question and option labels, hashed: "the same dialog"

    @property
    def numbered(self) -> bool:
        return all(o.number is not None for o in self.options)


def read_dialog(screen: str) -> Dialog | None:
    """The dialog on ``screen``, or None when Claude Code shows its input box or no list of
    at least two options under a ``❯``."""
    if input_box(screen) is not None:
        return None
    lines = [line.rstrip() for line in screen.splitlines()]
    rules = [i for i, line in enumerate(lines) if line.strip().startswith(RULE)]
    start = rules[-1] + 1 if rules else 0
    pointers = [i for i in range(start, len(lines)) if lines[i].lstrip().startswith(POINTER)]
    if not pointers:
        return None
    at = pointers[-1]
    column = lines[at].index(POINTER) + len(POINTER) + 1  # where option labels start
    first, last = at, at
    while first - 1 >= start and _continues(lines[first - 1], column):
        first -= 1
    while _indent(lines[first]) > column:  # the wrapped tail of a line above the list
        first += 1
    while last + 1 < len(lines) and _continues(lines[last + 1], column):
        last += 1
    options: list[Option] = []
    selected = 0
    for index in range(first, last + 1):
        line = lines[index]
        text = line[column:].strip() if len(line) > column else ""
        if _indent(line) > column and options:  # a long option wrapped onto the next line
            previous = options[-1]
            options[-1] = Option(f"{previous.label} {line.strip()}", previous.number)
            continue
        if index == at:
            selected = len(options)
        match = _NUMBERED.fullmatch(text)
        options.append(Option(match["label"], int(match["n"])) if match else Option(text, None))
    if len(options) < 2:
        return None
    if any(o.number is not None for o in options) and not all(
        o.number is not None for o in options
    ):
        options = [Option(_label_of(o), None) for o in options]
    question = _question(lines[start:first])
    digest = hashlib.sha256("\n".join([question, *(o.label for o in options)]).encode()).hexdigest()
    return Dialog(question, tuple(options), selected, digest[:12])


def keys_for(dialog: Dialog, index: int) -> list[str]:
    """The tmux keys that pick option ``index``: its digit in a numbered list (a digit
    picks at once), else arrow keys from the highlighted option, then Enter."""
    option = dialog.options[index]
    if option.number is not None and option.number < 10:
        return [str(option.number)]
    step = "Down" if index > dialog.selected else "Up"
    return [step] * abs(index - dialog.selected) + ["Enter"]


def _continues(line: str, column: int) -> bool:
    """An option line, or the wrapped tail of one."""
    return bool(line.strip()) and _indent(line) >= column and not line.strip().startswith(RULE)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _label_of(option: Option) -> str:
    return f"{option.number}. {option.label}" if option.number is not None else option.label


def _question(lines: list[str]) -> str:
    kept: list[str] = []
    for line in lines:
        text = line.strip()
        if text.startswith(INNER_RULE):
            continue
        if text or (kept and kept[-1]):
            kept.append(text)
    question = "\n".join(kept).strip()
    return question[:QUESTION_LIMIT]
