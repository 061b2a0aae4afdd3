"""What a session is: a project's channel, or a thread under it, with its merged settings."""

from __future__ import annotations

from dataclasses import dataclass

from bridge import config
from bridge.config import Project, ThreadEntry

WINDOW_LABEL_MAX = 24  # characters of a thread's name in its tmux window name


@dataclass(frozen=True)
class SessionTarget:
    """One session: a project's channel or a thread under it, with its merged settings.

    ``key`` (the channel id, or the thread id) tags the tmux window and names the state,
    uploads and outputs entries of the session.
    """

    project: Project
    key: str
    thread_id: str | None
    thread_name: str
    model: str | None
    permission: str | None
    isolation: str
    path: str
    agent: str = config.DEFAULT_AGENT  # the CLI the session runs (``bridge.agents``)

    @classmethod
    def for_project(cls, project: Project) -> SessionTarget:
        return cls(
            project,
            project.channel_id,
            None,
            "",
            project.model,
            project.permission,
            "none",
            project.path,
            project.agent,
        )

    @classmethod
    def for_thread(
        cls, project: Project, thread_id: str, name: str, entry: ThreadEntry | None
    ) -> SessionTarget:
        merged = config.thread_settings(project, entry)
        return cls(
            project,
            thread_id,
            thread_id,
            clean_thread_name(name),
            merged["model"],
            merged["permission"],
            merged["isolation"],
            merged["projectPath"],
            merged["agent"] or project.agent,
        )

    @property
    def window_name(self) -> str:
        if self.thread_id is None:
            return self.project.name
        return f"{self.project.name}-{window_label(self.thread_name, self.thread_id)}"

    @property
    def label(self) -> str:
        """How Discord messages name the session."""
        if self.thread_id is None:
            return self.project.name
        return f"{self.project.name} › {self.thread_name or self.thread_id}"


def clean_thread_name(name: str) -> str:
    """A thread name as stored in the config and shown: no control characters, ≤ 100."""
    return "".join(c for c in name if c.isprintable()).strip()[:100]


def window_label(name: str, thread_id: str) -> str:
    """A thread name reduced to what is safe in a tmux window name (letters, digits, ``-``,
    ``_``): tmux reads ``:``, ``.`` and ``;`` in targets and ``#`` in formats."""
    label = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)
    label = "-".join(part for part in label.split("-") if part)[:WINDOW_LABEL_MAX].strip("-")
    return label or thread_id[-6:]
