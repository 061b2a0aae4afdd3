"""What the service back-ends share: the bot's command line and environment, the outcomes."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

CARRIED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
# The bridge's own variables the bot and its panes' hooks must agree on (the dirs, the tmux
# server) or that the user tunes; nothing else of the installing shell's DISCORD_BRIDGE_* is
# saved: the endpoint overrides above all (one left from testing against an emulator would send
# the real token to whatever listens there later), nor a bridge pane's markers.
CARRIED_BRIDGE_ENV = (
    "DISCORD_BRIDGE_HOME",
    "DISCORD_BRIDGE_RUNTIME_DIR",
    "DISCORD_BRIDGE_STATE_DIR",
    "DISCORD_BRIDGE_TMUX_SOCKET",
    "DISCORD_BRIDGE_RETRY_SECONDS",
)
ENDPOINT_ENV = ("DISCORD_BRIDGE_API_BASE", "DISCORD_BRIDGE_GATEWAY_URL")


class UnsafeValue(ValueError):
    """A value the service file would carry holds a control character: a line break there
    starts a directive of its own (``ExecStartPre=…``) that systemd accepts and runs."""


@dataclass
class Outcome:
    """What a service action did: lines for the user, and the exit code."""

    lines: list[str]
    code: int = 0

    def say(self, line: str) -> None:
        self.lines.append(line)


@dataclass
class Status:
    installed: bool
    path: str
    current: bool = True  # the file runs this interpreter and config
    enabled: str | None = None  # systemctl is-enabled (None: systemctl unusable)
    active: str | None = None  # systemctl is-active
    linger: bool | None = None


def command(config_file: str) -> list[str]:
    """The bot's command line: this interpreter (not resolved: a venv's python is a symlink
    that must stay one) and the config file, both absolute."""
    return [
        os.path.abspath(sys.executable),
        "-m",
        "bridge.cli",
        "--config",
        os.path.abspath(config_file),
        "run",
    ]


def environment(env: dict[str, str] | os._Environ[str] | None = None) -> dict[str, str]:
    """What the bot needs from the installing shell: PATH (tmux and claude are found through
    it; a service gets a bare one), a UTF-8 locale (tmux draws Claude Code's screen with
    ``_`` for every non-ASCII character without one) and the bridge's own variables
    (:data:`CARRIED_BRIDGE_ENV`). :class:`UnsafeValue` for one with a control character."""
    env = os.environ if env is None else env
    out = {key: env[key] for key in CARRIED_ENV if env.get(key)}
    out.setdefault("PATH", os.defpath)
    if not any(
        ("UTF-8" in out.get(k, "").upper() or "UTF8" in out.get(k, "").upper())
        for k in ("LANG", "LC_ALL", "LC_CTYPE")
    ):
        out["LANG"] = "C.UTF-8"
    out.update({key: env[key] for key in CARRIED_BRIDGE_ENV if env.get(key)})
    for key, value in out.items():
        check(key, value)
    return out


def left_out(env: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """Lines for the user about endpoint overrides set in this shell that the service does
    not get (see :data:`CARRIED_BRIDGE_ENV`)."""
    env = os.environ if env is None else env
    return [
        f"note: {key} is set in this shell but not carried into the service (the bot there "
        f"talks to Discord, or to the config's discord.apiBaseUrl / gatewayUrl if you mean "
        f"another endpoint)"
        for key in ENDPOINT_ENV
        if env.get(key)
    ]


def check(name: str, value: str) -> str:
    """``value``, or :class:`UnsafeValue` when it holds a control character (a line break
    would add a line of its own to the service file)."""
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        raise UnsafeValue(
            f"{name} holds a control character ({value[:80]!r}); a service file cannot carry "
            f"it: fix or unset it, then run `discord-bridge service install` again"
        )
    return value


def checked_command(config_file: str) -> list[str]:
    """:func:`command`, or :class:`UnsafeValue` for a path with a control character."""
    args = command(config_file)
    check("the interpreter's path", args[0])
    check("the config file's path", args[-2])
    return args


# --- systemd ---------------------------------------------------------------------------
