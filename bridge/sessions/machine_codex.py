"""OpenAI Codex TUIs in this user's tmux panes, for ``/sessions`` (``machine.py`` scans the
panes and asks here when a pane runs no Claude Code).

A Codex is the pane's process or a descendant whose program is ``codex``: the npm package's
``node …/bin/codex`` (``codex.js``) or the native binary it starts (measured, 0.171.0). Its
conversation is known only when one of those processes holds its rollout open (a TUI that
writes it itself: daemon off, as the bridge starts Codex, or 0.150.1); a hand-started 0.171.0
TUI has the app-server daemon write it and holds nothing (docs/codex.md), so its id is None.
Its hooks are the bridge's when its ``$CODEX_HOME/hooks.json`` has them.
"""

from __future__ import annotations

import os

from bridge.codex import hooks_file, launch
from bridge.codex.history import ROLLOUT
from bridge.codex.screen import input_box, is_busy, read_dialog
from bridge.sessions import proc_tree

MAX_DEPTH = 4  # process levels below a pane's process searched
MAX_FDS = 4096  # open files of one process looked at


def codex_in(pid: int) -> int | None:
    """``pid`` if it is Codex, else the first Codex among its descendants."""
    return proc_tree.first_in(pid, is_codex, MAX_DEPTH)


def is_codex(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read(4096).split(b"\0")
    except OSError:
        return False
    first = os.path.basename(argv[0].decode(errors="replace")) if argv else ""
    if first == "codex":
        return len(argv) < 2 or argv[1] not in (b"app-server", b"daemon")
    script = os.path.basename(argv[1].decode(errors="replace")) if len(argv) > 1 else ""
    return first.startswith("node") and script in ("codex", "codex.js")


def session_id_of(pid: int) -> str | None:
    """The id of the rollout ``pid`` or a descendant holds open, in Codex's shape; None when
    none does (a hand-started 0.171.0's daemon holds it)."""
    rollout = rollout_open(pid)
    match = ROLLOUT.fullmatch(os.path.basename(rollout)) if rollout else None
    return match["id"].lower() if match is not None else None


def rollout_open(pid: int) -> str | None:
    """The rollout ``pid`` or a descendant holds open (a regular file of Codex's name)."""
    for process in [pid, *proc_tree.descendants(pid, MAX_DEPTH)]:
        for target in _open_files(process):
            match = ROLLOUT.fullmatch(os.path.basename(target))
            if match is not None and launch.is_session_id(match["id"]) and os.path.isfile(target):
                return target
    return None


def hooks_installed(env: dict[str, str]) -> bool:
    """The bridge's hooks are in that Codex's ``$CODEX_HOME/hooks.json`` (its environment's)."""
    home = env.get("CODEX_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".codex"
    )
    try:
        events = hooks_file.installed_events(os.path.join(home, "hooks.json"))
    except Exception:  # unreadable or not JSON: whatever it holds, not our hooks
        return False
    return "Stop" in events and "PermissionRequest" in events


def screen_state(screen: str) -> str:
    if read_dialog(screen) is not None:
        return "dialog open"
    if is_busy(screen):
        return "working"
    return "idle" if input_box(screen) is not None else "starting"


def _open_files(pid: int) -> list[str]:
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)[:MAX_FDS]
    except OSError:
        return []
    targets = []
    for name in names:
        try:
            targets.append(os.readlink(os.path.join(folder, name)))
        except OSError:
            continue
    return targets


def running_conversation(rollout: str) -> int | None:
    """The pid of a process of this user that holds the rollout ``rollout`` open (a Codex TUI
    on it, or the daemon that runs it), or None: two Codex writing one rollout would
    interleave it. Reads ``/proc``; meant for a command, not a loop."""
    wanted = os.path.realpath(rollout)
    me = os.geteuid()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != me:
                continue
        except OSError:
            continue
        if wanted in _open_files(int(name)):
            return int(name)
    return None
