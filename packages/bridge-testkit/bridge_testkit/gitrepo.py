"""A throwaway git repository for tests: real git, a fixed identity, nothing from the user."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ["-c", "user.name=T", "-c", "user.email=t@example.invalid"]


def git(path: Path, *args: str) -> str:
    """Run ``git -C path args`` (raises on failure); its stdout."""
    return subprocess.run(
        ["git", "-C", str(path), *IDENTITY, *args], capture_output=True, text=True, check=True
    ).stdout


def make_repo(path: Path, files: dict[str, str], message: str = "initial") -> Path:
    """A repository at ``path`` on branch ``main`` with ``files`` committed."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for name, content in files.items():
        (path / name).write_text(content)
    git(path, "add", ".")
    git(path, "commit", "-qm", message)
    return path
