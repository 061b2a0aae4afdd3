"""Reading Claude Code's screen: the input box, the footer's mode and busy markers, dialogs.

The bridge types into a pane only when Claude Code shows its input box: every dialog
(permission, question, plan, folder trust: ``bridge.claude.dialogs`` reads them) replaces the
box, and digits or Enter typed there would answer it. These functions read a captured screen
(plain text); nothing here talks to tmux. Markers are measured on Claude Code 2.1.330 and
2.1.197 (the tested range, ``bridge.claude.versions``); where they differ both are read.
"""

from __future__ import annotations

# Dim hint text Claude Code shows in an empty box (measured in 2.1.330 and 2.1.332) while it
# holds messages typed during a turn that the model has not been sent yet (its own queue).
QUEUED_HINT = "Press up to edit queued messages"
PLACEHOLDERS = (QUEUED_HINT,)
RULE = "────"


def input_box(screen: str) -> str | None:
    """The text in Claude Code's input box, or None when no input box is on screen.

    The box is the last region between two ``────`` rules whose first line starts with
    ``❯``. Dialogs (permission, question, plan) replace the box: their ``❯ 1. Yes`` line does
    not sit right below a rule, so a dialog reads as "no box" and nothing gets typed into it.
    """
    text = _box_text(screen)
    return "" if text in PLACEHOLDERS else text


def holds_queued(screen: str) -> bool:
    """Claude Code holds messages of its own queue (typed while a turn ran) that the model
    has not been sent yet: its empty box shows :data:`QUEUED_HINT`.

    Text typed then must wait: between a turn's end and Claude Code sending its queue, an
    Enter sends the box at once, ahead of the queue (a fresh-clone run, at load: the message
    typed second reached the model before the one queued first, in a turn of its own). Once
    the queue is sent (the hint gone), a message typed while that turn runs queues behind it.
    """
    return _box_text(screen) == QUEUED_HINT


def _box_text(screen: str) -> str | None:
    lines = [line.strip() for line in screen.splitlines()]
    rules = [i for i, line in enumerate(lines) if line.startswith(RULE)]
    if len(rules) < 2:
        return None
    top, bottom = rules[-2], rules[-1]
    body = lines[top + 1 : bottom]
    if not body or not body[0].startswith("❯"):
        return None
    body[0] = body[0][1:]
    return "\n".join(line.strip() for line in body).strip()


BUSY_MARKER = "esc to interrupt"  # Claude Code's footer while a turn runs (not always, below)
# The spinner line above the input box while a turn runs: a glyph, a verb, an ellipsis, then
# maybe "(3s · ↓ 14 tokens)" ("✻ Crunched for 0s" after the turn has no ellipsis). 2.1.197
# with a statusLine shows only this: its footer then drops "esc to interrupt".
SPINNER_GLYPHS = "·✢✳✶✻✽*"
# Footer text of each permission mode (2.1.330, 2.1.332; "manual" is what hooks call "default").
MODE_MARKERS = (
    ("manual mode on", "default"),
    ("accept edits on", "acceptEdits"),
    ("plan mode on", "plan"),
    ("auto mode on", "auto"),
    ("bypass permissions on", "bypassPermissions"),
    ("don't ask on", "dontAsk"),  # not "don't ask mode on" (2.1.330 and 2.1.332)
)


def mode_name(mode: str) -> str:
    """A mode as the owner reads it: the one that asks before edits is "manual" on 2.1.332's
    screen and "default" in hooks, settings and 2.1.197, so it is shown with both names."""
    return "manual (default)" if mode == "default" else mode


# 2.1.197 shows no marker in default (manual) mode; its footer then holds hints such as these,
# or (with the agent view off, launch.PANE_ENV) only the statusLine's line. A notice such as
# "Press Ctrl-C again to exit" takes the mode's line for a moment: it says nothing.
TRANSIENT_FOOTER = " again to "


def is_busy(screen: str) -> bool:
    """A turn is running: the footer offers to interrupt it, or the spinner line sits right
    above the input box."""
    return BUSY_MARKER in screen or _spinner_above_box(screen)


def _spinner_above_box(screen: str) -> bool:
    lines = screen.splitlines()
    rules = [i for i, line in enumerate(lines) if line.strip().startswith(RULE)]
    if len(rules) < 2:
        return False
    above = [line.strip() for line in lines[: rules[-2]] if line.strip()][-3:]
    return any(_is_spinner(line) for line in above)


def _is_spinner(line: str) -> bool:
    if len(line) < 4 or line[0] not in SPINNER_GLYPHS or line[1] != " ":
        return False
    head = line[2:].split(" (", 1)[0]  # "Honking… (1s · ↓ 14 tokens)" -> "Honking…"
    return head.endswith("…") and len(head) <= 60


def mode_on_screen(screen: str) -> str | None:
    """The permission mode Claude Code's footer shows, as hooks name it, or None (no input
    box, or a footer that says nothing about the mode)."""
    lines = screen.splitlines()
    tail = "\n".join(lines[-4:]).lower()
    for marker, mode in MODE_MARKERS:
        if marker in tail:
            return mode
    if input_box(screen) is None:
        return None
    rules = [i for i, line in enumerate(lines) if line.strip().startswith(RULE)]
    footer = "\n".join(lines[rules[-1] + 1 :])
    if TRANSIENT_FOOTER in footer:
        return None
    return "default"  # 2.1.197: no "manual mode on"; a footer with no mode is the default


def is_prompt_ready(screen: str) -> bool:
    """Claude Code shows its input box, empty."""
    return input_box(screen) == ""


def box_holds(screen: str, text: str) -> bool:
    """Whether the input box holds ``text``. Compared on ASCII letters and digits only: the
    box wraps and indents lines, expands tabs, and drops characters it deems invisible."""
    box = input_box(screen)
    if not box:
        return False
    wanted = signature(text)[:40]
    return signature(box).startswith(wanted) if wanted else True


# Every ASCII byte but letters and digits (what signature() drops of what is left).
_NOT_SIGNATURE = bytes(b for b in range(128) if not chr(b).isalnum())


def signature(text: str) -> str:
    """ASCII letters and digits only: what survives the box's wrapping and indenting.

    In C (encode, then translate): the typing thread of every busy session reads a whole
    screen this way every 50 ms while it waits for its text to show, and the character
    loop it replaced took 0.7 ms of the interpreter for a 9 KB screen (now 0.04 ms)."""
    return text.encode("ascii", "ignore").translate(None, _NOT_SIGNATURE).decode("ascii")
