"""A plan's steps, as the plan is written: what the plan prompt numbers and notes refer to.

Claude Code's plan (ExitPlanMode's ``plan``, read from its plan file) is Markdown. Each
heading, each list item (nested ones too) and each paragraph (a quote or a table too) is one
step, numbered from 1 in the order written; a fenced code block belongs to the step before it,
a rule (``---``) is no step. The plan prompt
shows the plan with each step's number in front of its text (:func:`numbered`); a note on a
step quotes that text back, so Claude knows which step is meant without our numbering.

What Claude reads (measured on 2.1.332, issue 20): notes sent with an approval ride in the
approval's ``updatedInput.plan`` (:func:`with_notes`): Claude Code answers the model "User has
approved your plan … ## Approved Plan (edited by user): <that plan>" in the very tool result
of the approval, before it acts, and saves it to the plan file. An extra key in
``updatedInput`` never reaches the model; a prompt typed once the approval lands reaches it
only with the result of its first action. Notes per step go back as "keep planning"
feedback (:func:`feedback`).

No imports: the PermissionRequest hook renders the plan prompt with this.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from collections.abc import Iterable

HEADING, ITEM, PARAGRAPH = "heading", "item", "paragraph"
QUOTED = 200  # characters of a step's text quoted back to Claude with a note
NOTES_HEADING = "## Notes from the review"


class Step:
    """One step: its number (from 1), the line it starts on, where its text starts on that
    line (after a heading's ``#``s or an item's marker), its kind, and its text (one line)."""

    __slots__ = ("column", "kind", "line", "number", "text")

    def __init__(self, number: int, line: int, column: int, kind: str, text: str) -> None:
        self.number, self.line, self.column = number, line, column
        self.kind, self.text = kind, text

    def __repr__(self) -> str:
        return f"Step({self.number}, {self.kind}, {self.text!r})"


def steps(plan: str) -> list[Step]:
    """The plan's steps in order."""
    found: list[tuple[int, int, str, list[str]]] = []  # line, column, kind, its text lines
    reading: list[str] | None = None  # the text lines of a paragraph or item still going on
    fence = ""
    for number, line in enumerate(plan.splitlines()):
        stripped = line.strip()
        if fence:
            fence = "" if stripped.startswith(fence) else fence
        elif stripped.startswith(("```", "~~~")):
            fence = stripped[:3]  # the code belongs to the step before it, if any
        elif not stripped or _is_rule(stripped):
            reading = None
        elif (start := _heading_text(line)) is not None:
            found.append((number, start, HEADING, [line[start:]]))
            reading = None  # a heading is one line
        elif (start := _item_text(line)) is not None:
            reading = [line[start:]]
            found.append((number, start, ITEM, reading))
        elif reading is not None:
            reading.append(stripped)  # a paragraph's or an item's next line
        else:
            start = _paragraph_text(line)
            reading = [line[start:].strip()]
            found.append((number, start, PARAGRAPH, reading))
    return [
        Step(n, line, column, kind, " ".join(" ".join(text).split()))
        for n, (line, column, kind, text) in enumerate(found, 1)
    ]


def count(plan: str) -> int:
    return len(steps(plan))


def tag(number: int) -> str:
    """How a step's number shows in front of its text."""
    return f"**[{number}]** "


def numbered(plan: str) -> str:
    """The plan with each step's number in front of its text (its Markdown kept: a heading
    stays a heading, an item an item)."""
    lines = plan.splitlines()
    for step in steps(plan):
        line = lines[step.line]
        lines[step.line] = line[: step.column] + tag(step.number) + line[step.column :]
    return "\n".join(lines)


def with_notes(plan: str, notes: str) -> str:
    """The plan as approved with notes: the plan, then the notes under their own heading."""
    return f"{plan.rstrip()}\n\n{NOTES_HEADING}\n\n{notes.strip()}\n"


def feedback(plan: str, notes: Iterable[tuple[int, str]]) -> str:
    """ "Keep planning" feedback from notes on steps (step number, note): each quoted with its
    number and the step's text, in the plan's order."""
    by_number = {step.number: step for step in steps(plan)}
    parts = ["Notes on the plan, by step (each quotes the step it is about):"]
    for number, note in sorted(notes):
        step = by_number.get(number)
        quoted = _clip(step.text, QUOTED) if step else ""
        parts.append(f"Step {number}: “{quoted}”\n{note.strip()}")
    return "\n\n".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_rule(stripped: str) -> bool:
    """``---``, ``***``, ``___`` (spaces allowed between): a rule, no step."""
    compact = stripped.replace(" ", "")
    return len(compact) >= 3 and compact[0] in "-*_" and compact == compact[0] * len(compact)


def _heading_text(line: str) -> int | None:
    """Where a heading's text starts (``## Title`` → 3), or None if not a heading."""
    indent = len(line) - len(line.lstrip(" "))
    if indent > 3:
        return None
    rest = line[indent:]
    hashes = len(rest) - len(rest.lstrip("#"))
    if not 1 <= hashes <= 6 or not rest[hashes : hashes + 1].isspace() or not rest[hashes:].strip():
        return None
    after = rest[hashes:]
    return indent + hashes + len(after) - len(after.lstrip())


def _paragraph_text(line: str) -> int:
    """Where a paragraph's text starts: after its indent, and a quote's ``>``."""
    indent = len(line) - len(line.lstrip())
    if line[indent : indent + 1] != ">":
        return indent
    after = line[indent + 1 :]
    return indent + 1 + len(after) - len(after.lstrip())


def _item_text(line: str) -> int | None:
    """Where a list item's text starts (``- a``, ``1. a``, ``2) a``), or None."""
    indent = len(line) - len(line.lstrip())
    rest = line[indent:]
    if rest[:1] in ("-", "*", "+"):
        marker = 1
    else:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if not 1 <= digits <= 9 or rest[digits : digits + 1] not in (".", ")"):
            return None
        marker = digits + 1
    after = rest[marker:]
    if not after[:1].isspace() or not after.strip():
        return None
    return indent + marker + len(after) - len(after.lstrip())
