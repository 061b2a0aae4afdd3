"""OpenAI's Codex CLI behind the agent seam: the ``bridge/codex/`` modules.

Not mapped (Codex has no equivalent the bridge drives yet): the permission modes (Codex's
approval policy and sandbox come from its own config or ``codexArgs``) and the paths denied
to the agent's own tools (Claude Code's deny rules; Codex's sandbox is its own).
"""

from __future__ import annotations

from typing import ClassVar

from bridge.agents.base import Agent, Launch, Screen
from bridge.claude.history import Conversation
from bridge.claude.hook_table import CODEX_HOOKS
from bridge.codex import history, hooks_file, launch, limits, rollout, screen, versions
from bridge.config import Project


class Codex(Agent):
    name = "codex"
    label = "Codex"
    screen = Screen(
        screen.input_box,
        screen.read_dialog,
        screen.is_busy,
        screen.mode_on_screen,
        limits.usage_limit,
        limits.reset_at,
    )
    pane_env: ClassVar[dict[str, str]] = {}
    hooks = CODEX_HOOKS
    versions = (versions.OLDEST, versions.PINNED)
    start_wording = launch.START_WORDING
    # Measured on 0.171.0: under load the box showed, then 1–3 s later "Hooks need review"
    # (a prompt typed in between was lost: the dialog took the screen after its Enter).
    startup_settle = 4.0
    # Measured on 0.171.0 with the machine loaded: a `?` typed as a key among fast keys is
    # taken for its shortcuts key (the box still looks empty while it gathers a burst of keys
    # for a paste): "what is this?x" arrived as "what is thisx" 4 times in 8 fresh starts. The
    # same text as a bracketed paste arrived whole 8 in 8; a paste of up to 1,000 characters
    # is inserted as typed (a piece is 100), newlines as line breaks, not as Enter.
    pastes_text = True

    def command(self, project: Project) -> tuple[str, list[str]]:
        return project.codex_command, project.codex_args

    def argv(self, plan: Launch) -> list[str]:
        return launch.codex_argv(
            plan.command,
            plan.model,
            plan.resume,
            plan.uploads,
            plan.outputs,
            plan.upload_limit,
            plan.extra_args,
            plan.nice,
        )

    def last_assistant_text(self, transcript_path: object) -> str:
        return rollout.last_assistant_text(transcript_path)

    def hooks_path(self) -> str:
        return hooks_file.default_hooks_path()

    def install_hooks(self, path: str | None = None) -> bool:
        return hooks_file.install(path)

    def uninstall_hooks(self, path: str | None = None) -> bool:
        return hooks_file.uninstall(path)

    def installed_events(self, path: str | None = None) -> dict[str, str]:
        return hooks_file.installed_events(path)

    def conversations(self, cwd: str) -> list[Conversation]:
        return history.conversations(cwd)

    def conversation(self, cwd: str, session_id: str) -> Conversation | None:
        return history.find(cwd, session_id)
