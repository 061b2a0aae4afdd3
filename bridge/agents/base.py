"""What the bridge needs of a coding agent CLI: the interface both implementations fill in.

Everything agent-independent (relay, queue, schedules, diffs and reviews, worktrees, outbox,
panel) asks a session's :class:`Agent` where it must differ, instead of importing one CLI's
modules: how to start it in a pane (:meth:`Agent.argv`, :attr:`Agent.pane_env`), how to read
its screen before a key goes in (:class:`Screen`), which hook file registers the bridge's
hooks with it, and which versions are tested.
"""

from __future__ import annotations

from dataclasses import dataclass

from bridge.claude.dialogs import Dialog

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import ClassVar

    from bridge.claude.history import Conversation
    from bridge.claude.hook_table import Hook
    from bridge.claude.start_failure import Wording
    from bridge.config import Project


@dataclass(frozen=True)
class Screen:
    """An agent's screen as the key gate reads it (a captured pane, plain text).

    ``input_box``: the text in its input box, "" when empty, None when a dialog (or nothing)
    holds the screen: no key is typed then. ``read_dialog``: that dialog, its options and the
    highlighted one, to offer on Discord and answer with keys. ``is_busy``: a turn runs.
    ``mode_on_screen``: the permission mode its footer shows (None: unknown).
    ``usage_limit``: the agent's own notice of a usage limit that ended the latest turn, for
    an agent that reports it on its screen only (Codex; None for Claude Code, whose
    StopFailure hook says it), and ``limit_reset``: when that notice says the limit resets.
    ``holds_queued``: the agent holds messages typed during a turn that it has not sent to the
    model yet (None: it shows no such thing, or the bridge does not read it)."""

    input_box: Callable[[str], str | None]
    read_dialog: Callable[[str], Dialog | None]
    is_busy: Callable[[str], bool]
    mode_on_screen: Callable[[str], str | None]
    usage_limit: Callable[[str], str | None] | None = None
    limit_reset: Callable[[str, float], float | None] | None = None
    holds_queued: Callable[[str], bool] | None = None

    def is_prompt_ready(self, screen: str) -> bool:
        """The input box shows, empty."""
        return self.input_box(screen) == ""

    def box_holds(self, screen: str, text: str) -> bool:
        """Whether the input box holds ``text``, compared on ASCII letters and digits (a box
        wraps and indents lines)."""
        from bridge.claude.screen import signature

        box = self.input_box(screen)
        if not box:
            return False
        wanted = signature(text)[:40]
        return signature(box).startswith(wanted) if wanted else True


@dataclass(frozen=True)
class Launch:
    """What a session's start needs, agent-independent: the command and args from the
    project's config, the session's model, permission mode and conversation to resume, its
    uploads and outputs folders, and what its own tools must not touch."""

    command: str
    model: str | None
    permission: str | None
    resume: str | None
    uploads: str
    outputs: str
    upload_limit: int
    extra_args: list[str]
    private: list[str]
    nice: int = 0


class Agent:
    """One coding agent CLI. ``name``: its config value (``"agent"``); ``label``: how
    messages name it; ``pane_env``: env vars on every pane that runs it (the bridge's own
    markers are added by the session manager); ``hooks``: its events and the bridge's
    script and handler for each (``bridge/claude/hook_table.py``: both CLIs send the same
    stdin, so one set of scripts and handlers serves both); ``versions``: (oldest, pinned)
    tested."""

    name: str
    label: str
    screen: Screen
    pane_env: ClassVar[dict[str, str]]
    hooks: ClassVar[dict[str, Hook]]
    versions: tuple[str, str]
    start_wording: Wording  # a start that failed, named in its terms
    # Seconds its empty box must stay before a fresh start counts as ready: a dialog may
    # still take the screen after the box first shows (Codex's "Hooks need review").
    startup_settle: float = 0.0
    # Whether typed text goes in as bracketed pastes (each piece of a prompt) instead of keys:
    # for a CLI that takes a small paste as plain text and may drop a typed key.
    pastes_text: bool = False

    def command(self, project: Project) -> tuple[str, list[str]]:
        """The program and the user's extra args for ``project``, from the config."""
        raise NotImplementedError

    def argv(self, launch: Launch) -> list[str]:
        """The command line that starts (or resumes) a session in a pane."""
        raise NotImplementedError

    def last_assistant_text(self, transcript_path: object) -> str:
        """The newest assistant text in its transcript (the hooks' ``transcript_path``): what
        a turn's status message shows above a tool call."""
        raise NotImplementedError

    def hooks_path(self) -> str:
        """The file that registers the bridge's hooks with this CLI, by default."""
        raise NotImplementedError

    def install_hooks(self, path: str | None = None) -> bool:
        """Write the bridge's hook entries into that file; True if it changed."""
        raise NotImplementedError

    def uninstall_hooks(self, path: str | None = None) -> bool:
        raise NotImplementedError

    def installed_events(self, path: str | None = None) -> dict[str, str]:
        """Event -> command of the bridge's entries in that file."""
        raise NotImplementedError

    def conversations(self, cwd: str) -> list[Conversation]:
        """Its past conversations in ``cwd``, newest first, from its own transcripts."""
        raise NotImplementedError

    def conversation(self, cwd: str, session_id: str) -> Conversation | None:
        """One of them by id (an id from Discord: checked by the reader), or None."""
        raise NotImplementedError
