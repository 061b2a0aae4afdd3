"""``discord-bridge service install | uninstall | status``: start the bot at login or boot.

Linux: a systemd *user* unit, ``$XDG_CONFIG_HOME/systemd/user/discord-bridge.service``. It runs
this installation's interpreter by absolute path with the config file's absolute path, restarts
the bot when it fails (with a delay, growing where systemd supports it; not after exit 2, a
config error that a restart cannot fix), and logs to the journal. ``KillMode=process``: stopping
or restarting the service stops the bot only, never the tmux server it may have started and the
Claude Code sessions in it. A user unit starts at login; with lingering
(``loginctl enable-linger $USER``) it starts at boot.

macOS: a launchd agent, ``~/Library/LaunchAgents/<LABEL>.plist`` (see ``service_launchd``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from bridge.service.common import (
    Outcome,
    Status,
    UnsafeValue,
    checked_command,
    command,
    environment,
    left_out,
)
from bridge.state import private_files, runtime

UNIT_NAME = "discord-bridge.service"
MARK = "# Written by `discord-bridge service install`; `… service uninstall` removes it."
RESTART_SEC = 5  # first restart delay
MAX_RESTART_DELAY = 300  # systemd ≥ 254 grows the delay up to this (RestartSteps)


def is_macos() -> bool:
    return sys.platform == "darwin"


def unit_dir(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or "~", ".config")
    return os.path.join(os.path.expanduser(base), "systemd", "user")


def unit_path(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    return os.path.join(unit_dir(env), UNIT_NAME)


def quote(arg: str) -> str:
    """One systemd command-line or Environment= word: quoted, specifiers and variables off."""
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return '"' + escaped.replace("$", "$$") + '"'


def systemd_version() -> int | None:
    try:
        out = subprocess.run(["systemctl", "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"systemd (\d+)", out.stdout)
    return int(match[1]) if match else None


def unit_text(
    config_file: str, env: dict[str, str] | None = None, version: int | None = None
) -> str:
    """The unit file for this installation (``version``: systemd's, for its newer keys)."""
    lines = [
        MARK,
        "[Unit]",
        "Description=discord-bridge: Claude Code sessions in tmux, driven from Discord",
        # No After=network-online.target: a user manager has no such unit. The bot waits for
        # Discord itself (capped backoff), so starting before the network is fine.
        # At most 10 starts in 10 minutes, then systemd stops trying (status says why).
        "StartLimitIntervalSec=600",
        "StartLimitBurst=10",
        "",
        "[Service]",
        "Type=exec",
        "ExecStart=" + " ".join(quote(arg) for arg in checked_command(config_file)),
    ]
    lines += [f"Environment={quote(f'{k}={v}')}" for k, v in environment(env).items()]
    lines += [
        "Restart=on-failure",
        f"RestartSec={RESTART_SEC}",
    ]
    if version is not None and version >= 254:
        lines += ["RestartSteps=6", f"RestartMaxDelaySec={MAX_RESTART_DELAY}"]
    lines += [
        "# Exit 2 is a config error (bad config, placeholders, a rejected token): fix, then start.",
        "RestartPreventExitStatus=2",
        "# Stop the bot only: the tmux server it started and the Claude sessions keep running.",
        "KillMode=process",
        "TimeoutStopSec=30",
        "SyslogIdentifier=discord-bridge",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def systemctl(*args: str) -> subprocess.CompletedProcess | None:
    """``systemctl --user …`` (None: no systemctl). ``enable``, ``disable`` and ``is-enabled``
    work on the files alone; starting, stopping and ``is-active`` need the user's service
    manager (see :func:`manager_reachable`)."""
    tool = shutil.which("systemctl")
    if tool is None:
        return None
    try:
        return subprocess.run([tool, "--user", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None


def manager_reachable() -> bool:
    """False in a container, a ``su`` shell or an ssh session without a systemd login."""
    done = systemctl("show", "--property=Version")  # read-only; needs the manager
    return done is not None and done.returncode == 0


def lingering(user: str | None = None) -> bool | None:
    """Whether the user's services start at boot (None: cannot tell)."""
    tool = shutil.which("loginctl")
    user = user or _user()
    if tool is None or not user:
        return None
    try:
        out = subprocess.run(
            [tool, "show-user", user, "--property=Linger"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return os.path.exists(f"/var/lib/systemd/linger/{user}") or None
    return out.stdout.strip() == "Linger=yes"


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return os.environ.get("USER", "")


LINGER_HINT = (
    "a user service starts when you log in; to start it at boot without logging in, "
    "run once: loginctl enable-linger {user}"
)


def install(config_file: str, start: bool = True) -> Outcome:
    if is_macos():
        from bridge.service import launchd as service_launchd

        return service_launchd.install(config_file, start)
    result = Outcome(left_out())
    path = unit_path()
    try:
        text = unit_text(config_file, version=systemd_version())
    except UnsafeValue as err:
        return Outcome([f"{err} (nothing written)"], code=1)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    private_files.write_atomic(path, text.encode(), 0o644)
    result.say(f"wrote {path}")
    result.say(f"  runs: {' '.join(command(config_file))}")
    if not os.path.exists(config_file):
        result.say(f"note: {config_file} does not exist yet; the bot needs it to start")
    reachable = manager_reachable()
    if reachable:
        systemctl("daemon-reload")  # read the new file
    enable = systemctl("enable", UNIT_NAME)  # works without the manager too (a symlink)
    if enable is None or enable.returncode != 0:
        result.say(
            f"could not enable it ({_first_line(enable)}); in a systemd login session "
            f"run: systemctl --user daemon-reload && systemctl --user enable --now "
            f"{UNIT_NAME}"
        )
        result.code = 1
        return result
    result.say(f"enabled {UNIT_NAME}: the bot starts at login and restarts when it fails")
    blocked = _placeholders(config_file)
    if not reachable:
        result.say(
            "not started now: no user service manager is reachable from this shell "
            "(it starts at your next login)"
        )
    elif not start or blocked:
        why = "the config still holds example values; after fixing them" if blocked else "to"
        result.say(f"not started now ({why} start it: systemctl --user start {UNIT_NAME})")
    else:
        restart = systemctl("restart", UNIT_NAME)  # restart: a new unit file replaces the old
        ok = restart is not None and restart.returncode == 0
        result.say(
            "started; its log: journalctl --user -u discord-bridge -f"
            if ok
            else f"could not start it: {_first_line(restart)}"
        )
        result.code = 0 if ok else 1
    if lingering() is not True:
        result.say(LINGER_HINT.format(user=_user() or "$USER"))
    return result


def uninstall() -> Outcome:
    if is_macos():
        from bridge.service import launchd as service_launchd

        return service_launchd.uninstall()
    result = Outcome([])
    path = unit_path()
    if not os.path.exists(path):
        result.say(f"not installed ({path} does not exist)")
        return result
    if manager_reachable():
        systemctl("stop", UNIT_NAME)
        result.say(f"stopped {UNIT_NAME} (tmux and its Claude sessions keep running)")
    disable = systemctl("disable", UNIT_NAME)
    if disable is not None and disable.returncode == 0:
        result.say(f"disabled {UNIT_NAME}")
    os.unlink(path)
    systemctl("daemon-reload")
    result.say(f"removed {path}")
    return result


def status(config_file: str) -> Status:
    if is_macos():
        from bridge.service import launchd as service_launchd

        return service_launchd.status(config_file)
    path = unit_path()
    if not os.path.exists(path):
        return Status(False, path)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    wanted = "ExecStart=" + " ".join(quote(arg) for arg in command(config_file))
    found = Status(True, path, current=wanted in text.splitlines(), linger=lingering())
    enabled = systemctl("is-enabled", UNIT_NAME)
    if enabled is not None:
        found.enabled = enabled.stdout.strip() or "unknown"
        if manager_reachable():
            active = systemctl("is-active", UNIT_NAME)
            found.active = (active.stdout.strip() if active else "") or "unknown"
    return found


def describe(st: Status) -> tuple[bool, list[str]]:
    """(healthy, lines) for ``service status`` and the doctor."""
    if not st.installed:
        return True, [
            f"service: not installed ({st.path}); optional: `discord-bridge service "
            "install` starts the bot at login or boot and restarts it"
        ]
    lines = [f"service: installed ({st.path})"]
    healthy = st.current
    if not st.current:
        lines.append(
            "  it runs another interpreter or config file: run `discord-bridge service "
            "install` again"
        )
    mac = is_macos()
    if st.enabled is None:
        lines.append("  enabled/active: unknown here (no systemctl/launchctl)")
    else:
        active = st.active or "unknown (no user service manager reachable from this shell)"
        lines.append(f"  enabled: {st.enabled}; active: {active}")
        if st.enabled not in ("enabled", "enabled-runtime", "linked", "loaded"):
            healthy = False
            fix = (
                f"launchctl bootstrap gui/{os.getuid()} {st.path}"
                if mac
                else (f"systemctl --user enable --now {UNIT_NAME}")
            )
            lines.append(f"  enable it: {fix}")
        elif st.active is not None and st.active not in ("active", "activating", "running"):
            healthy = False
            lines.append(
                "  see why in ~/Library/Logs/discord-bridge.log"
                if mac
                else "  see why: journalctl --user -u discord-bridge -e; then: systemctl "
                f"--user restart {UNIT_NAME}"
            )
    if st.linger is False:
        lines.append("  " + LINGER_HINT.format(user=_user() or "$USER"))
    return healthy, lines


def _placeholders(config_file: str) -> bool:
    from bridge import placeholders

    return bool(placeholders.find_in_file(config_file))


def _first_line(done: subprocess.CompletedProcess | None) -> str:
    if done is None:
        return "systemctl --user is not available"
    text = (done.stderr or done.stdout).strip().splitlines()
    return text[0] if text else f"exit {done.returncode}"


def config_file(path: str | None) -> str:
    return os.path.abspath(path or runtime.config_path())
