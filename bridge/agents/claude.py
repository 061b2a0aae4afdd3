"""Claude Code behind the agent seam: the ``bridge/claude/`` modules, unchanged."""

from __future__ import annotations

from bridge.agents.base import Agent, Launch, Screen
from bridge.claude import (
    dialogs,
    history,
    hook_table,
    launch,
    screen,
    settings,
    start_failure,
    transcript,
    versions,
)
from bridge.claude.history import Conversation
from bridge.config import Project


class ClaudeCode(Agent):
    name = "claude"
    label = "Claude Code"
    screen = Screen(
        screen.input_box,
        dialogs.read_dialog,
        screen.is_busy,
        screen.mode_on_screen,
        holds_queued=screen.holds_queued,
    )
    pane_env = launch.PANE_ENV
    hooks = hook_table.HOOKS
    versions = (versions.OLDEST, versions.PINNED)
    start_wording = start_failure.CLAUDE

    def command(self, project: Project) -> tuple[str, list[str]]:
        return project.claude_command, project.claude_args

    def argv(self, plan: Launch) -> list[str]:
        return launch.claude_argv(
            plan.command,
            plan.model,
            plan.permission,
            plan.resume,
            plan.uploads,
            plan.outputs,
            plan.upload_limit,
            plan.extra_args,
            plan.private,
            plan.nice,
        )

    def last_assistant_text(self, transcript_path: object) -> str:
        return transcript.last_assistant_text(transcript_path)

    def hooks_path(self) -> str:
        return settings.default_settings_path()

    def install_hooks(self, path: str | None = None) -> bool:
        return settings.install(path)

    def uninstall_hooks(self, path: str | None = None) -> bool:
        return settings.uninstall(path)

    def installed_events(self, path: str | None = None) -> dict[str, str]:
        return settings.installed_events(path)

    def conversations(self, cwd: str) -> list[Conversation]:
        return history.conversations(cwd)

    def conversation(self, cwd: str, session_id: str) -> Conversation | None:
        return history.find(cwd, session_id)
