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
move the ❯, Enter confirms). A dialog with no list names its keys in its last line instead
(2.1.332's "Auto mode can't check actions in this session", measured)::

     Enter to stay in auto mode · shift+Tab to leave for accept edits mode and stop · Esc to cancel

and each key but Esc (every screen prompt has its own Escape) is an option of its own.
:func:`read_dialog` turns a captured screen (plain text) into a :class:`Dialog`;
:func:`keys_for` says which keys pick an option. Pure functions, no tmux.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from bridge.claude.screen import RULE, input_box

POINTER = "❯"
RULES = (RULE, "▔▔▔▔")  # the line above a dialog: a rule, or the top edge of a panel
INNER_RULE = "╌╌╌╌"  # the dashed lines around a command in a permission dialog
QUESTION_LIMIT = 1500  # characters of question text kept (a Discord message holds 2,000)
_NUMBERED = re.compile(r"(?P<n>\d{1,2})\.\s+(?P<label>.+)")
_CHECKBOX = re.compile(r"^\[[^\]]?\]")  # ``[ ] demo`` / ``[✔] demo`` in a multi-select list
# The keys a dialog's last line may offer ("Enter to …"), as tmux names them; Esc is left out.
HINT_KEYS = {"enter": "Enter", "shift+tab": "BTab", "tab": "Tab", "space": "Space"}
HINT_SEPARATOR = " · "


@dataclass(frozen=True)
class Option:
    label: str
    number: int | None  # the number Claude Code shows (``2. No``), None for a plain list
    key: str | None = None  # a dialog without a list: the key that answers (``BTab``)

    @property
    def toggles(self) -> bool:
        """A checkbox of a multi-select list: Enter ticks or unticks it, the dialog stays."""
        return _CHECKBOX.match(self.label) is not None


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
    rules = [i for i, line in enumerate(lines) if line.strip().startswith(RULES)]
    start = rules[-1] + 1 if rules else 0
    pointers = [i for i in range(start, len(lines)) if lines[i].lstrip().startswith(POINTER)]
    if not pointers:
        return _keys_dialog(lines[start:])
    at = pointers[-1]
    column = lines[at].index(POINTER)  # every option line has ❯ or a space here
    first, last = at, at
    while first - 1 >= start and _in_list(lines[first - 1], column):
        first -= 1
    while last + 1 < len(lines) and _in_list(lines[last + 1], column):
        last += 1
    numbered = _NUMBERED.fullmatch(lines[at][column + 1 :].strip()) is not None
    options: list[Option] = []
    selected = 0
    for index in range(first, last + 1):
        text = lines[index][column + 1 :].strip()
        match = _NUMBERED.fullmatch(text)
        if numbered and match is None:
            if options:  # a long option wrapped onto the next line
                previous = options[-1]
                options[-1] = Option(f"{previous.label} {text}", previous.number)
            continue
        if index == at:
            selected = len(options)
        options.append(Option(match["label"], int(match["n"])) if match else Option(text, None))
    if len(options) < 2:
        return None
    question = _question(lines[start:first])
    labels = [_CHECKBOX.sub("[]", o.label) for o in options]  # a toggle is the same dialog
    digest = hashlib.sha256("\n".join([question, *labels]).encode()).hexdigest()
    return Dialog(question, tuple(options), selected, digest[:12])


def _keys_dialog(lines: list[str]) -> Dialog | None:
    """A dialog whose last line offers keys (``Enter to … · shift+Tab to … · Esc to
    cancel``): one option per key but Esc; None unless it offers one at least, and Esc."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if len(filled) < 2:
        return None
    last = filled[-1]
    hints = lines[last].strip().split(HINT_SEPARATOR)
    options = []
    for hint in hints:
        name, to, action = hint.partition(" to ")
        key = HINT_KEYS.get(name.lower())
        if to and key is not None and action:
            options.append(Option(f"{name}: {action}", None, key))
    if not options or not any(h.lower().startswith("esc to ") for h in hints):
        return None
    question = _question(lines[:last])
    labels = [o.label for o in options]
    digest = hashlib.sha256("\n".join([question, *labels]).encode()).hexdigest()
    return Dialog(question, tuple(options), 0, digest[:12])


def keys_for(dialog: Dialog, index: int) -> list[str]:
    """The tmux keys that pick option ``index``: the key a dialog without a list names, its
    digit in a numbered list (a digit picks at once), else arrow keys from the highlighted
    option, then Enter."""
    option = dialog.options[index]
    if option.key is not None:
        return [option.key]
    if option.number is not None and option.number < 10:
        return [str(option.number)]
    step = "Down" if index > dialog.selected else "Up"
    return [step] * abs(index - dialog.selected) + ["Enter"]


def _in_list(line: str, column: int) -> bool:
    """A line of the option list: blank up to the ❯ column, a space there (the ❯ is on
    another line), then text."""
    return (
        len(line) > column + 1
        and not line[: column + 1].strip()
        and bool(line[column + 1 :].strip())
    )


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
