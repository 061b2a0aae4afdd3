"""The selftest's throwaway set-up: the fake API, the emulator, the bot and Claude Code.

:class:`Bench` starts them all under one throwaway directory and a private tmux server, and is
what a check acts through: a message posted as the owner, the bot's answer waited for, what the
model was sent, Claude Code's screen. Its own module because ``try --demo`` runs on the same
set-up (its ``Demo`` is a ``Bench``), while the checks and their report are ``selftest``'s alone.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bridge.claude import start_failure

SESSION = "discord-bridge-selftest"  # the tmux session, on a private socket
PROJECT_NAME = "selftest"  # the project directory's name, so its channel is #selftest
WAIT = 60.0  # seconds any one step may take before it fails
STARTUP_WAIT = 30.0  # seconds for the bot to connect to the emulator


class CheckFailed(Exception):
    """A check failed: ``what`` happened, ``fix`` says what to do."""

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(what)
        self.what, self.fix = what, fix


class Bench:
    """The fake API, the emulator, the bot and the user's Claude Code in a private tmux
    server, all under ``root``."""

    agent_label = "Claude Code"  # how a failure names the agent (Codex's bench: "Codex")

    def __init__(self, root: Path, claude: str, printed: str) -> None:
        self.root, self.claude, self.printed = root, claude, printed
        self.home = root / "home"  # Claude Code's HOME
        self.project = root / PROJECT_NAME
        self.bridge_home = root / "bridge-home"
        self.runtime_dir, self.state_dir = root / "runtime", root / "state"
        self.socket = f"discord-bridge-selftest-{os.getpid()}-{secrets.token_hex(3)}"
        self.bot: subprocess.Popen | None = None
        self.emu: Any = None
        self.api: Any = None
        self.env: dict[str, str] = {}
        self.channel = self.bot_id = ""
        self.since = 0  # the emulator's mark before the last message posted

    def start(self, emulator_class: type, api_class: type) -> None:
        from fake_anthropic.claude_cli import prepare_home

        for path in (self.home, self.project, self.runtime_dir, self.state_dir):
            path.mkdir(mode=0o700)
        self.bridge_home.mkdir(mode=0o700)
        version = self.printed.split(" ", 1)[0]
        prepare_home(self.home, [self.project], version=version)  # no first-run screens
        self.api = api_class().start()
        ids = self.start_emulator(emulator_class, "discord-bridge selftest", "you", PROJECT_NAME)
        self.start_bot(self.install(ids, "selftest", SESSION))

    def start_emulator(
        self, emulator_class: type, guild: str, owner: str, project_name: str
    ) -> dict[str, str]:
        """The emulator started with a server ``guild``: its panel channel and the project's
        (this bench's channel), the owner named ``owner``; the ids of its world."""
        from bridge import tryout_setup

        self.emu = emulator_class(
            bot_token=secrets.token_urlsafe(32),
            control_token=secrets.token_urlsafe(32),
            second_bot=False,
        )
        self.emu.start()
        names = {tryout_setup.OWNER: owner, "bot_id": "discord-bridge"}
        ids = self.emu.configure_world(guild, [tryout_setup.PANEL_CHANNEL, project_name], names)
        self.channel, self.bot_id = ids[project_name], self.emu.state.ids["bot_id"]
        return ids

    def install(self, ids: dict[str, str], name: str, session: str) -> Path:
        """Claude Code's environment (the fake API, the throwaway dirs), the bridge's hooks in
        its settings, and the bot's config for the emulator's world: that config's path."""
        from bridge import tryout
        from fake_anthropic.claude_cli import claude_env

        bridge_dirs = {
            "DISCORD_BRIDGE_HOME": str(self.bridge_home),
            "DISCORD_BRIDGE_RUNTIME_DIR": str(self.runtime_dir),
            "DISCORD_BRIDGE_STATE_DIR": str(self.state_dir),
            "DISCORD_BRIDGE_TMUX_SOCKET": self.socket,
        }
        self.env = claude_env(
            self.home,
            self.api.base_url,
            self.root,
            bridge_dirs,
            claude_dir=os.path.dirname(self.claude),
        )
        settings = self.home / ".claude" / "settings.json"
        self.cli("hooks", "install", "--settings", str(settings))
        config = self.root / "config.json"
        tryout.write_config(
            str(config),
            str(self.project),
            self.emu,
            ids,
            name=name,
            session=session,
            claude_command=self.claude,
        )
        return config

    def cli(self, *args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "bridge.cli", *args],
            env=self.env,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            raise CheckFailed(
                f"discord-bridge {' '.join(args[:2])} failed: "
                f"{(done.stderr or done.stdout).strip()[-300:]}",
                "reinstall the bridge (./install.sh)",
            )

    def start_bot(self, config: Path) -> None:
        since = self.emu.client.mark()
        with open(self.root / "bot.log", "ab") as log:
            self.bot = subprocess.Popen(
                [sys.executable, "-m", "bridge.cli", "--config", str(config), "run"],
                env=self.env,
                cwd=self.root,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        try:
            self.emu.client.wait(
                since=since, kind="gateway_ready", timeout=STARTUP_WAIT, user_id=self.bot_id
            )
        except TimeoutError:
            raise CheckFailed(
                f"the bot did not connect to the emulator within {STARTUP_WAIT:.0f}"
                f" s: {self.bot_log_tail()}",
                f"see {self.root / 'bot.log'}; reinstall the bridge (./install.sh)",
            ) from None

    def close(self) -> None:
        if self.bot is not None and self.bot.poll() is None:
            self.bot.send_signal(signal.SIGTERM)
            try:
                self.bot.wait(15)
            except subprocess.TimeoutExpired:
                self.bot.kill()
                self.bot.wait()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink(missing_ok=True)
        for part in (self.emu, self.api):
            if part is not None:
                part.stop()

    # --- what the owner does and sees ------------------------------------------------------

    def post(self, text: str) -> tuple[dict, int, int]:
        """Post as the owner: the message, the emulator's mark before it, and how many
        requests the model had had."""
        since = self.since = self.emu.client.mark()
        before = len(self.api.requests)
        return self.emu.client.post_message(self.channel, text), since, before

    def bot_message(self, since: int, contains: str, what: str, fix: str) -> dict:
        """The bot's first message after ``since`` holding ``contains``; else a failure
        saying what the screen and the channel show."""
        try:
            record = self.emu.client.wait(
                since=since,
                kind="message_create",
                channel_id=self.channel,
                author_id=self.bot_id,
                content_contains=contains,
                timeout=WAIT,
            )
        except TimeoutError:
            raise CheckFailed(f"{what} within {WAIT:.0f} s; {self.seen(since)}", fix) from None
        return record["message"]

    def wait_for(self, check: Callable[[], Any], what: str, fix: str, since: int) -> Any:
        deadline = time.monotonic() + WAIT
        while not (found := check()):
            if time.monotonic() > deadline:
                raise CheckFailed(f"{what} within {WAIT:.0f} s; {self.seen(since)}", fix)
            time.sleep(0.1)
        return found

    def model_saw(self, number: int, since: int, what: str, fix: str) -> str:
        """What the model got in its ``number``-th request (1-based): the last user text."""
        from fake_anthropic import last_user_text

        try:
            requests = self.api.wait_requests(number, timeout=WAIT)
        except (TimeoutError, AssertionError):
            raise CheckFailed(f"{what} within {WAIT:.0f} s; {self.seen(since)}", fix) from None
        return last_user_text(requests[number - 1])

    def screen(self) -> str:
        from bridge.tmux import TmuxError, TmuxSessions

        tmux = TmuxSessions(SESSION, self.socket)
        try:
            pane = tmux.find(self.channel)
            return tmux.capture(pane.pane_id) if pane else ""
        except TmuxError:
            return ""

    def seen(self, since: int) -> str:
        """What there is to see instead: the bot's last message, Claude Code's screen."""
        said = [
            m for m in self.emu.client.messages(self.channel) if m["author"]["id"] == self.bot_id
        ]
        words = start_failure.last_words(self.screen(), 3)
        parts = []
        if said:
            parts.append(f"the channel's last bot message: {one_line(said[-1]['content'])!r}")
        parts.append(f"{self.agent_label}'s screen ends: " + (" / ".join(words) or "(nothing)"))
        return "; ".join(parts)

    def bot_log_tail(self) -> str:
        try:
            text = (self.root / "bot.log").read_text(errors="replace")
        except OSError:
            return "no log"
        lines = [line for line in text.splitlines() if line.strip()]
        return " / ".join(lines[-3:])[-400:] or "an empty log"


def one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
