"""``discord-bridge hooks install|uninstall``: the bridge's entries in Claude Code's settings.json.

Installing merges one entry per event the bridge needs, leaving every other hook and key as
it was; a backup of the previous file is written first and nothing is written when nothing
changes, so running it twice is harmless. Commands call this interpreter by absolute path
(a ``python3`` shim on PATH, e.g. pyenv's, costs ~90 ms per call) with ``-I`` so the user's
PYTHONPATH cannot change what a hook imports, and ``-S`` so start-up skips site (the hook
loads it only when it has work). Each command ends with a ``# discord-bridge``
shell comment: that is how uninstall recognises exactly its own entries.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys

from bridge.claude.hook_table import (
    HOOKS,
    MARK,
    PREVIOUS_FLAG,
    PROMPT_TIMEOUT_MARGIN,
    STATUS_LINE_SCRIPT,
)
from bridge.state import locations, private_files

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs milliseconds
if TYPE_CHECKING:
    from typing import TypeGuard

_ABSENT = object()  # "there was no statusLine key", as opposed to a saved ``null``
# The scripts Claude Code runs are programs, not modules of ours: found by path, never
# imported. Installed, they are the package bridge/hooks/; in the source tree (an editable
# install, a checkout) the folder hooks/ beside bridge/, as the scripts themselves assume.
_BRIDGE_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INSTALLED_HOOKS = os.path.join(_BRIDGE_PACKAGE, "hooks")
HOOKS_DIR = (
    _INSTALLED_HOOKS
    if os.path.isdir(_INSTALLED_HOOKS)
    else os.path.join(os.path.dirname(_BRIDGE_PACKAGE), "hooks")
)


def prompt_hook_timeout() -> int:
    """The timeout of the hooks that wait for the owner (PermissionRequest, Elicitation,
    PermissionDenied): above the configured prompt timeout and retry wait, so the hook's own
    timeout outcome (deny with a message, cancel, go on) happens rather than a silent kill."""
    from bridge import config

    try:
        cfg = config.load()
        seconds = max(cfg.prompt_timeout, cfg.retry_wait)
    except (config.ConfigError, OSError):
        seconds = max(config.DEFAULT_PROMPT_TIMEOUT, config.DEFAULT_RETRY_WAIT)
    return int(seconds) + PROMPT_TIMEOUT_MARGIN


def default_settings_path() -> str:
    return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")


def script_path(script: str) -> str:
    return os.path.join(HOOKS_DIR, script)


def hook_command(script: str, python: str | None = None) -> str:
    """This interpreter, ``-I -S``, the script, and the bridge home and runtime dir when they
    are not the defaults (:func:`locations.hook_args`: hooks do not take them from their env);
    behind ``nice -n N`` for a hook the table runs niced (when ``nice`` is there)."""
    argv = [python or sys.executable, "-I", "-S", script_path(script), *locations.hook_args()]
    niceness = max((hook.nice for hook in HOOKS.values() if hook.script == script), default=0)
    nice = shutil.which("nice") if niceness else None
    if nice:
        argv = [nice, "-n", str(niceness), *argv]
    return f"{shlex.join(argv)} {MARK}"


def python_argv(command: str) -> list[str]:
    """The interpreter's command line in an installed command: without its ``nice -n N``."""
    argv = shlex.split(command, comments=True)
    if len(argv) > 3 and os.path.basename(argv[0]) == "nice" and argv[1] == "-n":
        return argv[3:]
    return argv


def is_ours(entry: object) -> TypeGuard[dict]:
    return isinstance(entry, dict) and str(entry.get("command", "")).endswith(MARK)


def install(settings_path: str | None = None) -> bool:
    """Add or update the bridge's hook entries. Returns True if the file changed."""
    path = real_path(settings_path)
    settings = read_settings(path)
    merged = install_status_line(without_ours(settings))
    hooks = merged.setdefault("hooks", {})
    for event, hook in HOOKS.items():
        timeout = hook.timeout or prompt_hook_timeout()
        entry = {"type": "command", "command": hook_command(hook.script), "timeout": timeout}
        hooks.setdefault(event, []).append({"matcher": "", "hooks": [entry]})
    return write_if_changed(path, settings, merged)


def uninstall(settings_path: str | None = None) -> bool:
    """Remove exactly the bridge's entries. Returns True if the file changed."""
    path = real_path(settings_path)
    settings = read_settings(path)
    return write_if_changed(path, settings, uninstall_status_line(without_ours(settings)))


def installed_events(settings_path: str | None = None) -> dict[str, str]:
    """Event -> command of the bridge's entries currently in the file."""
    return {event: entry["command"] for event, entry in installed_entries(settings_path).items()}


def installed_entries(settings_path: str | None = None) -> dict[str, dict]:
    """Event -> the bridge's hook entry (command, timeout) currently in the file."""
    settings = read_settings(settings_path or default_settings_path())
    found = {}
    for event, groups in (settings.get("hooks") or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_ours(entry):
                    found[event] = entry
    return found


def without_ours(settings: dict) -> dict:
    """A deep copy of ``settings`` with the bridge's entries (and groups they empty) removed."""
    result = json.loads(json.dumps(settings))
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = hooks[event] if isinstance(hooks[event], list) else []
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                had_ours = any(is_ours(e) for e in group["hooks"])
                group["hooks"] = [e for e in group["hooks"] if not is_ours(e)]
                if had_ours and not group["hooks"]:
                    continue
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del result["hooks"]
    return result


def real_path(settings_path: str | None) -> str:
    """A symlinked settings.json (dotfile managers) is edited where it really lives."""
    return os.path.realpath(settings_path or default_settings_path())


def read_settings(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    try:
        settings = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON ({err}); fix it, then run this again") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{path} must hold a JSON object")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise ValueError(f'{path}: "hooks" must map event names to arrays; fix it by hand first')
    return settings


def write_if_changed(path: str, before: dict, after: dict) -> bool:
    if before == after and os.path.exists(path):
        return False
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if os.path.exists(path):
        shutil.copy2(path, path + ".discord-bridge.bak")
    data = json.dumps(after, indent=2, ensure_ascii=False) + "\n"
    private_files.write_atomic(path, data.encode(), 0o600)
    return True


# --- statusLine ------------------------------------------------------------------------------


def install_status_line(settings: dict, python: str | None = None) -> dict:
    """Point ``statusLine`` at the bridge's command, saving the user's own inside it.
    Reinstalling keeps the saved one (never saves the bridge's own command as "previous")."""
    current = settings.get("statusLine", _ABSENT)
    previous = saved_previous(current) if is_ours(current) else current
    # The user's other keys (padding, …) stay, so the terminal looks the same.
    entry = dict(previous) if isinstance(previous, dict) else {}
    entry.update(type="command", command=status_line_command(previous, python))
    settings["statusLine"] = entry
    return settings


def uninstall_status_line(settings: dict) -> dict:
    """Put back exactly the statusLine the bridge replaced (or remove the key if there was
    none). A statusLine that is not the bridge's is left alone."""
    current = settings.get("statusLine")
    if not is_ours(current):
        return settings
    previous = saved_previous(current)
    if previous is _ABSENT:
        del settings["statusLine"]
    else:
        settings["statusLine"] = previous
    return settings


def status_line_command(previous: object = _ABSENT, python: str | None = None) -> str:
    """The statusLine command line: this interpreter, ``-I -S``, the script, the saved
    previous statusLine as JSON (when there was one), and the bridge's marker comment."""
    argv = [python or sys.executable, "-I", "-S", script_path(STATUS_LINE_SCRIPT)]
    argv += locations.hook_args()
    if previous is not _ABSENT:
        argv += [PREVIOUS_FLAG, json.dumps(previous, ensure_ascii=False, separators=(",", ":"))]
    return f"{shlex.join(argv)} {MARK}"


def saved_previous(entry: dict) -> object:
    """The statusLine object saved in the bridge's command (``_ABSENT`` if none was)."""
    try:
        argv = shlex.split(entry["command"], comments=True)
        return json.loads(argv[argv.index(PREVIOUS_FLAG) + 1])
    except (ValueError, IndexError, KeyError, TypeError):
        return _ABSENT
