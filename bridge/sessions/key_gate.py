"""May the bot press keys into this session now? The one place that decides, for every key.

Claude Code answers a dialog from the keyboard (digits and Enter pick, Shift+Tab is "Yes,
allow all edits", Escape is "No"), and it takes the keys before the dialog is on the screen:
the PermissionRequest hook runs alongside the dialog being drawn, so a command sent the moment
its prompt shows on Discord could read the input box and press its key into the dialog.
Measured (``bench/dialog_timing.py``, 2 cores) from PreToolUse, at load 4–5 with 2.1.330: the
request written after 60–430 ms, the prompt at Discord after 80–510 ms, the dialog drawn after
65–670 ms, often after the prompt; at load 11 with 2.1.332, up to 1.08, 1.18 and 1.15 s. The
screen alone cannot say "no dialog"; so the gate decides from what the bridge knows for
certain first:

1. a prompt of this session is open: its PermissionRequest hook still runs
   (``decisions.asking``; written before the Discord prompt is posted): refused, "answer the
   permission prompt first";
2. a screen prompt of this session waits for the owner (``bot/prompts/screens.py``; its dialog still
   on screen): refused, except for that prompt's own buttons;
3. a tool call that has not ended started less than :data:`TOOL_GRACE` ago
   (``state/tool_calls``, written by PreToolUse, removed by PostToolUse): its dialog may be on
   its way; wait until the grace is over or the call has ended (watching 1. and 2.), then the
   screen must show the input box;
4. the screen: keys meant for the input box need it on screen (the caller reads it through
   :meth:`SessionKeys.require_input_box`).

:class:`SessionKeys` is a session's pane as the bot presses keys into it: every ``press``,
``type_literal`` and ``paste`` runs 1–3 right before the key, whatever its caller checked
before. A refusal is :class:`KeysRefused`, a :class:`NoInputBox` whose text says what to do
(``pane_input`` re-exports these errors). Discord-free and blocking (run in a worker thread,
under the session's lock).
"""

from __future__ import annotations

import time

from bridge.agents import Agent, agent_for
from bridge.claude.hook_table import PROMPT_TIMEOUT_MARGIN
from bridge.state import decisions, held_messages, runtime, tool_calls
from bridge.tmux import TmuxError, TmuxSessions

# Seconds after a tool call's PreToolUse before a key may go in: over twice the latest request
# and dialog measured on a machine at load 11 (1.08 and 1.15 s). Delays a command sent right
# after a tool call starts by at most this long (less when the call ends sooner).
TOOL_GRACE = 2.5
GRACE_CAP = 6.0  # seconds a command waits for tools that keep starting before it gives up
GRACE_POLL = 0.02
ASKING = {
    "permission": ("asking for permission", "permission prompt"),
    "question": ("asking a question", "question prompt"),
    "plan": ("asking you to approve a plan", "plan prompt"),
}


class NoInputBox(TmuxError):
    """Claude Code shows a dialog (permission, question, plan) instead of its input box."""


class DialogOnScreen(NoInputBox):
    """Claude Code shows a dialog we can read (``bridge.claude.dialogs``): ``screen`` is the
    captured screen, so the bot can offer its options on Discord."""

    def __init__(self, message: str, screen: str) -> None:
        super().__init__(message)
        self.screen = screen


class KeysRefused(DialogOnScreen):
    """No key may go into the session now; the text says why and what to do. ``screen`` is
    the screen when a screen prompt's dialog is up (so a message meeting it is held)."""


class SessionKeys:
    """The pane of session ``key`` (its channel or thread id), as the bot presses keys into
    it. ``screen_answer``: the keys answer the screen prompt of that session (its buttons), so
    an open screen prompt does not refuse them."""

    def __init__(
        self,
        tmux: TmuxSessions,
        pane_id: str,
        rt: runtime.Runtime,
        key: str,
        screen_answer: bool = False,
        agent: Agent | None = None,
    ) -> None:
        self.tmux = tmux
        self.pane_id = pane_id
        self.runtime = rt
        self.key = key
        self.screen_answer = screen_answer
        self.agent = agent or agent_for(None)  # whose screen the gate reads
        self.screen = self.agent.screen

    # --- reading (no gate) -------------------------------------------------------------

    def capture(self) -> str:
        return self.tmux.capture(self.pane_id)

    # --- keys (each through the gate) --------------------------------------------------

    def press(self, *keys: str) -> None:
        self.check(" ".join(keys))
        self.tmux.press(self.pane_id, *keys)

    def type_literal(self, text: str) -> None:
        self.check("the text")
        self.tmux.type_literal(self.pane_id, text)

    def paste(self, text: str) -> None:
        self.check("the text")
        self.tmux.paste(self.pane_id, text)

    # --- the gate ----------------------------------------------------------------------

    def require_input_box(self, what: str) -> str:
        """The screen, if keys may go in and Claude Code shows its input box (idle or busy
        with a turn); else :class:`KeysRefused` or ``NoInputBox``, saying that ``what`` (the
        keys about to be pressed) was not sent."""
        self.check(what)
        screen = self.capture()
        if self.screen.input_box(screen) is None:
            raise _dialog(what, screen, self.agent.label)
        return screen

    def check(self, what: str) -> None:
        """Raise :class:`KeysRefused` unless keys may go into the session now (1–3 above)."""
        self._known(what)
        if not self._tool_starting():
            return
        # A tool call has just started: a permission dialog may open any moment now. Wait the
        # grace out, still refusing as soon as its request is written.
        give_up = time.monotonic() + GRACE_CAP
        while self._tool_starting():
            if time.monotonic() > give_up:
                raise KeysRefused(
                    f"{self.agent.label} keeps starting tool calls that have not ended, and any of "
                    f"them may ask for permission: {what} was not sent. Try again in a "
                    "moment.",
                    "",
                )
            time.sleep(GRACE_POLL)
            self._known(what)
        if self.screen_answer:
            return  # the caller checks that its own dialog is the one on screen
        screen = self.capture()
        if self.screen.input_box(screen) is None:  # that tool's dialog, its hook still starting
            raise _dialog(what, screen, self.agent.label)

    def _known(self, what: str) -> None:
        """Refuse while a prompt of this session is open (a hook's, or a screen prompt)."""
        for request in decisions.asking(self.runtime, self.key, PROMPT_TIMEOUT_MARGIN):
            doing, prompt = ASKING.get(request.kind, ASKING["permission"])
            raise KeysRefused(
                f"{self.agent.label} is {doing} in this session (see its prompt in this "
                f"channel): {what} was not sent, so it cannot answer that dialog. Answer the "
                f"{prompt} first.",
                "",
            )
        if self.screen_answer:
            return
        held = held_messages.load(self.runtime, self.key)
        if not held.get("prompt_message_id"):
            return
        screen = self.capture()
        dialog = self.screen.read_dialog(screen)
        if dialog is not None and dialog.fingerprint == held.get("fingerprint"):
            raise KeysRefused(
                f"{self.agent.label} shows a screen that waits for your answer (its prompt is in "
                f"this channel): {what} was not sent. Answer the screen prompt first.",
                screen,
            )

    def _tool_starting(self) -> bool:
        return tool_calls.latest_start(self.runtime, self.key, TOOL_GRACE) is not None


def _dialog(what: str, screen: str, label: str = "Claude Code") -> DialogOnScreen:
    return DialogOnScreen(
        f"{label} is showing a dialog (permission, question or plan), not its input box: "
        f"{what} was not sent, so it cannot answer the dialog. Answer the dialog first (its "
        "Discord prompt or the terminal).",
        screen,
    )
