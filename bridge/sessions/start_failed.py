"""A session whose agent (Claude Code, Codex) exited before it was ready:
:class:`ClaudeDidNotStart`, the error a start raises, and :func:`did_not_start`, its
diagnosis in the CLI's own words.

Its own module because the bot's modules that start a session catch this error and tell the
channel why; they need it without the session manager's start-up, worktrees and launch.
"""

from __future__ import annotations

from bridge.claude import start_failure
from bridge.claude.start_failure import CLAUDE, Wording
from bridge.tmux import PaneExited, TmuxError


class ClaudeDidNotStart(TmuxError):
    """A session's Claude Code exited before it was ready: ``failure`` says why, in its own
    words (``bridge/claude/start_failure.py``)."""

    def __init__(self, failure: start_failure.StartFailure, command: str) -> None:
        words = " / ".join(failure.words) or "no output"
        super().__init__(f"{failure.headline()}: {words}")
        self.failure = failure
        self.command = command

    def discord_text(self, lead: str | None = None) -> str:
        """Why, and what to do, after ``lead`` (default: "⚠️ <the agent> did not start")."""
        lead = lead or f"⚠️ {self.failure.label} did not start"
        return start_failure.discord_text(self.failure, lead)


def did_not_start(err: PaneExited, command: str, wording: Wording = CLAUDE) -> ClaudeDidNotStart:
    """The diagnosis of a pane that died while its agent started (``wording``: the agent's
    terms, Claude Code's by default). When it left neither words nor a status (a command that
    dies within milliseconds), whether ``command`` is on the bot's PATH decides."""
    found = None
    if err.status is None and not start_failure.last_words(err.screen):
        import shutil

        found = shutil.which(command) is not None
    return ClaudeDidNotStart(
        start_failure.diagnose(err.screen, err.status, command, found, wording), command
    )
