"""What the service back-ends share: the bot's command line and environment, the outcomes."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

CARRIED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")


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
    return [os.path.abspath(sys.executable), "-m", "bridge.cli", "--config",
            os.path.abspath(config_file), "run"]  # fmt: skip


def environment(env: dict[str, str] | os._Environ[str] | None = None) -> dict[str, str]:
    """What the bot needs from the installing shell: PATH (tmux and claude are found through
    it; a service gets a bare one), a UTF-8 locale (tmux draws Claude Code's screen with
    ``_`` for every non-ASCII character without one) and the ``DISCORD_BRIDGE_*`` overrides."""
    env = os.environ if env is None else env
    out = {key: env[key] for key in CARRIED_ENV if env.get(key)}
    out.setdefault("PATH", os.defpath)
    if not any(("UTF-8" in out.get(k, "").upper() or "UTF8" in out.get(k, "").upper())
               for k in ("LANG", "LC_ALL", "LC_CTYPE")):  # fmt: skip
        out["LANG"] = "C.UTF-8"
    for key in sorted(env):
        if key.startswith("DISCORD_BRIDGE_") and key != "DISCORD_BRIDGE_CONFIG":
            out[key] = env[key]
    return out


# --- systemd ---------------------------------------------------------------------------
