"""The macOS side of ``discord-bridge service``: a launchd agent in ~/Library/LaunchAgents.

launchd starts it at login (``RunAtLoad``), starts it again when it exits with a failure
(``KeepAlive.SuccessfulExit = false``, at most every ``ThrottleInterval`` seconds; exit 2, a
config error, is a failure to launchd too, throttled the same way), and writes its output to
``~/Library/Logs/discord-bridge.log``. ``AbandonProcessGroup`` keeps tmux and the Claude
sessions running when the agent stops.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess

from bridge.service.common import (
    Outcome,
    Status,
    UnsafeValue,
    checked_command,
    command,
    environment,
    left_out,
)
from bridge.state import private_files

LABEL = "io.github.discord-bridge"
THROTTLE = 30  # seconds between launchd's restarts


def plist_path(home: str | None = None) -> str:
    home = home or os.path.expanduser("~")
    return os.path.join(home, "Library", "LaunchAgents", f"{LABEL}.plist")


def log_path(home: str | None = None) -> str:
    home = home or os.path.expanduser("~")
    return os.path.join(home, "Library", "Logs", "discord-bridge.log")


def plist_bytes(
    config_file: str, env: dict[str, str] | None = None, home: str | None = None
) -> bytes:
    agent = {
        "Label": LABEL,
        "ProgramArguments": checked_command(config_file),
        "EnvironmentVariables": environment(env),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": THROTTLE,
        "AbandonProcessGroup": True,
        "ProcessType": "Background",
        "StandardOutPath": log_path(home),
        "StandardErrorPath": log_path(home),
    }
    return plistlib.dumps(agent)


def _launchctl(*args: str) -> subprocess.CompletedProcess | None:
    tool = shutil.which("launchctl")
    if tool is None:
        return None
    try:
        return subprocess.run([tool, *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None


def install(config_file: str, start: bool = True) -> Outcome:
    result = Outcome(left_out())
    path = plist_path()
    try:
        agent = plist_bytes(config_file)
    except UnsafeValue as err:
        return Outcome([f"{err} (nothing written)"], code=1)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.makedirs(os.path.dirname(log_path()), exist_ok=True)
    private_files.write_atomic(path, agent, 0o644)
    result.say(f"wrote {path} (log: {log_path()})")
    domain = f"gui/{os.getuid()}"
    _launchctl("bootout", f"{domain}/{LABEL}")  # an older copy, if loaded
    if not start:
        result.say(
            f"not loaded now; it starts at your next login (or: launchctl bootstrap "
            f"{domain} {path})"
        )
        return result
    done = _launchctl("bootstrap", domain, path)
    if done is None or done.returncode != 0:
        result.say(
            f"could not load it now ({(done.stderr.strip() if done else 'no launchctl')});"
            " it starts at your next login"
        )
    else:
        result.say("loaded: the bot runs now and at every login")
    return result


def uninstall() -> Outcome:
    result = Outcome([])
    path = plist_path()
    if not os.path.exists(path):
        result.say(f"not installed ({path} does not exist)")
        return result
    _launchctl("bootout", f"gui/{os.getuid()}/{LABEL}")
    os.unlink(path)
    result.say(f"unloaded and removed {path} (tmux and Claude sessions keep running)")
    return result


def status(config_file: str) -> Status:
    path = plist_path()
    if not os.path.exists(path):
        return Status(False, path)
    with open(path, "rb") as handle:
        try:
            agent = plistlib.load(handle)
        except Exception:
            agent = {}
    found = Status(True, path, current=agent.get("ProgramArguments") == command(config_file))
    done = _launchctl("print", f"gui/{os.getuid()}/{LABEL}")
    if done is not None:
        found.enabled = "loaded" if done.returncode == 0 else "not loaded"
        running = done.returncode == 0 and "state = running" in done.stdout
        found.active = "running" if running else "not running"
    return found
