"""``discord-bridge hooks install|uninstall`` for Codex: the bridge's entries in its hooks.json.

Codex reads hooks from ``~/.codex/hooks.json`` (``$CODEX_HOME/hooks.json``) and a project's
``.codex/hooks.json``, in Claude Code's shape and with Claude-shaped JSON on stdin, so the same
scripts serve both: this writes the bridge's commands (``bridge.claude.settings``: this
interpreter, ``-I -S``, the script, the bridge's locations, the ``# discord-bridge`` mark) for
the events Codex has, merged as in Claude Code's settings (every other entry kept, a backup
first, nothing written when nothing changes).

Codex runs no hook until the owner trusts it in the TUI's "Hooks need review" dialog, and a
changed command needs that again: the bridge offers that dialog on Discord like the screens
no hook reports, and never passes ``--dangerously-bypass-hook-trust`` (a repository's own
``.codex/hooks.json`` would then run unreviewed too).
"""

from __future__ import annotations

import os

from bridge.claude import settings
from bridge.claude.hook_table import CODEX_HOOKS

# Codex has no Notification, MessageDisplay, Elicitation, PermissionDenied or StopFailure;
# its SessionEnd is not registered yet.
EVENTS = tuple(CODEX_HOOKS)


def codex_home(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    env = os.environ if env is None else env
    return env.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def default_hooks_path(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    return os.path.join(codex_home(env), "hooks.json")


def install(path: str | None = None) -> bool:
    """Add or update the bridge's entries in Codex's hooks.json. True if the file changed."""
    real = settings.real_path(path or default_hooks_path())
    before = settings.read_settings(real)
    merged = settings.without_ours(before)
    hooks = merged.setdefault("hooks", {})
    for event in EVENTS:
        hook = CODEX_HOOKS[event]
        timeout = hook.timeout or settings.prompt_hook_timeout()
        command = settings.hook_command(hook.script)
        entry = {"type": "command", "command": command, "timeout": timeout}
        hooks.setdefault(event, []).append({"matcher": "", "hooks": [entry]})
    return settings.write_if_changed(real, before, merged)


def uninstall(path: str | None = None) -> bool:
    """Remove exactly the bridge's entries. True if the file changed."""
    real = settings.real_path(path or default_hooks_path())
    before = settings.read_settings(real)
    return settings.write_if_changed(real, before, settings.without_ours(before))


def installed_events(path: str | None = None) -> dict[str, str]:
    """Event -> command of the bridge's entries in Codex's hooks.json."""
    return settings.installed_events(path or default_hooks_path())
