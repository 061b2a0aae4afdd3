"""An end-to-end rig: the Discord emulator, the fake Anthropic API, the real Claude Code CLI in a
private tmux server, the bot run as ``python -m bridge.cli run`` and the hooks installed by
``discord-bridge hooks install`` into a throwaway HOME.

Everything a test asserts goes through what a user would see: messages and files at the
emulator, keys in the pane, requests at the model.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import bridge
from bridge.bot.app import CONNECTED
from bridge.tmux import TmuxSessions
from discord_emulator import Emulator
from fake_anthropic import FakeAnthropic
from fake_anthropic.claude_cli import claude_env, prepare_home

REPO = Path(bridge.__file__).resolve().parents[1]  # the checkout whose bridge/ and hooks/ run
TMUX_SESSION = "bridge-e2e"


STATUS_MARKS = (
    "⏳",
    "⏸",
    "✅ Done",
    "⏹ Interrupted",
    "⏹ The session ended",
    "⏹ The bridge restarted",
    "⚠️ Stopped by",
)  # a turn's live status message


LAG_LIMIT_MS = 2000  # an event loop late by more than this fails the test (bot/loop_watch.py)
LAG_LINE = re.compile(
    r"event loop lag (\d+) ms \(over \d+ ms, (\d+) ms of CPU\); it was running"
    r"(?: at (\d+) ms)?: (.*)"
)


def long_loop_lags(log: str, limit_ms: int = LAG_LIMIT_MS) -> list[str]:
    """The bot log's loop-lag warnings over ``limit_ms`` where the bot held its loop: code
    computing (CPU for half the lag or more), or a blocking call on the stack read early in
    the lag (the process ran, its loop did not). A lag in which the process did not run (a
    test froze the bot with SIGSTOP; two cores shared by three test workers and their Claude
    Codes) used little CPU, and its stack was read only as the process ran again, or never."""
    held = []
    for line in log.splitlines():
        found = LAG_LINE.search(line)
        if found is None or int(found.group(1)) <= limit_ms:
            continue
        lag, cpu, seen = int(found.group(1)), int(found.group(2)), found.group(3)
        if cpu * 2 >= lag or (seen is not None and int(seen) * 2 < lag):
            held.append(line)
    return held


def kill_leftovers(root: Path, within: float = 3.0) -> list[int]:
    """Kill every process still working in ``root`` (its working directory there), until
    none is left or ``within`` seconds have passed; returns their pids.

    A hook's detached job (``bridge.handlers.context.detach``: its own session, so tmux's
    kill-server does not reach it) outlives the test. The emulator is shared by the tests of a
    worker and reset between them, with the same channel ids, so a Stop hook's reply
    delivered late landed in the next test's channel (a fresh-clone run: test_roles' "Model
    saw: …" in test_screens' channel)."""
    killed: list[int] = []
    deadline = time.monotonic() + within
    while True:
        found = _pids_working_in(root)
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            killed.append(pid)
        if not found or time.monotonic() > deadline:
            return killed
        time.sleep(0.05)


def _pids_working_in(root: Path) -> list[int]:
    mine, inside = os.getpid(), f"{root}{os.sep}"
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == mine:
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if f"{cwd}{os.sep}".startswith(inside):
            pids.append(int(entry))
    return pids


def paths_under(root: Path) -> list[Path]:
    """Every file and folder under ``root``, passing over a folder removed while it is read:
    Claude Code clones its plugin marketplace into the HOME's ``.claude/plugins`` and, offline,
    removes the half-made ``…clone`` again (``Path.rglob`` raised FileNotFoundError on its
    ``.git/refs`` once in a fresh-clone run); ``os.walk`` skips what is gone."""
    return [Path(top, name) for top, dirs, files in os.walk(root) for name in (*dirs, *files)]


def wait_until(check, timeout: float = 60.0, what: str = "condition"):
    """Poll ``check`` until it returns something truthy (returned); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return result


def is_status(message: dict) -> bool:
    return message["content"].startswith(STATUS_MARKS)


def project_names(count: int) -> list[str]:
    """``project-a``, ``project-b``… (at most 26)."""
    if not 1 <= count <= 26:
        raise ValueError(f"1 to 26 projects, not {count}")
    return [f"project-{chr(ord('a') + i)}" for i in range(count)]


class BridgeRig:
    def __init__(
        self,
        tmp: Path,
        emu: Emulator,
        api: FakeAnthropic,
        claude_version: str | None = None,
        trust: bool = True,
        accept_bypass: bool = True,
        approve_key: bool = True,
        projects: int = 2,
    ) -> None:
        """``claude_version``: which installed Claude Code CLI the panes run (default: the
        pinned one); ``claude`` on the bot's and the panes' PATH is that version.
        ``trust=False``: Claude Code asks whether to trust the projects' folders;
        ``accept_bypass=False``: it warns on the first use of bypass-permissions mode;
        ``approve_key=False``: it asks whether to use the API key in its environment.
        ``projects`` mapped channels (project-a, project-b…); channels the emulator does not
        seed are created in it."""
        self.tmp = tmp
        self.claude_version = claude_version
        self.emu = emu
        self.discord = emu.client
        self.api = api
        self.ids = emu.ids
        names = project_names(projects)
        if any(name not in self.ids for name in names):
            self.ids = dict(emu.ids)  # the emulator's own map stays as seeded
            for name in names:
                if name not in self.ids:
                    self.ids[name] = self.discord.create_channel(name)["id"]
        self.claude_home = tmp / "home"
        self.bridge_home = tmp / "bridge-home"
        self.runtime_dir = tmp / "runtime"  # volatile: prompts, progress, waits, status
        self.state_dir = tmp / "state"  # durable: outbox, sessions, state, uploads, outputs, logs
        self.socket = f"dbe2e-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.projects = {name: tmp / name for name in names}
        self.bot: subprocess.Popen | None = None
        self.last_post_mark: int | None = None
        self.bot_log = tmp / "bot.log"
        for path in self.projects.values():
            path.mkdir()
        self.bridge_home.mkdir(mode=0o700)
        prepare_home(
            self.claude_home,
            list(self.projects.values()),
            version=claude_version,
            trust=trust,
            accept_bypass=accept_bypass,
            approve_key=approve_key,
        )
        # Through the test's generation (the e2e rig fixture names it: every rig of one test
        # shares it, two machines too): a Claude Code an earlier test left with a request in
        # flight gets a 401, not this test's scripted turn (seen: a tool call answered as text).
        generation = api.admitted
        self.env = claude_env(
            self.claude_home,
            api.url_for(generation) if generation else api.base_url,
            tmp,
            {
                "DISCORD_BRIDGE_HOME": str(self.bridge_home),
                "DISCORD_BRIDGE_RUNTIME_DIR": str(self.runtime_dir),
                "DISCORD_BRIDGE_STATE_DIR": str(self.state_dir),
                "DISCORD_BRIDGE_TMUX_SOCKET": self.socket,
                "DISCORD_BRIDGE_RETRY_SECONDS": "3",
            },
            version=claude_version,
        )
        self.install_hooks()
        self.write_config()

    # --- set-up ----------------------------------------------------------------------

    def install_hooks(self, checkout: Path | None = None) -> None:
        """``checkout``: install the hooks and statusLine command of another checkout of the
        bridge (a benchmark's "before"); its ``hooks install`` points them at its own files."""
        settings = self.claude_home / ".claude" / "settings.json"
        self.cli("hooks", "install", "--settings", str(settings), cwd=checkout)

    def config(self) -> dict:
        projects = [
            {"name": name, "channelId": self.ids[name], "projectPath": str(path)}
            for name, path in self.projects.items()
        ]
        return {
            "schemaVersion": 2,
            # Replies end with a footer and "🔔 <@owner>" when these are on; tests that check a
            # reply's exact text keep them off (test_output / test_notifications turn them on).
            "notifications": {"mentionOwner": False},
            "replies": {"footer": False},
            "servers": [
                {
                    "name": "e2e",
                    "discord": {
                        "botToken": self.emu.bot_token,
                        "ownerUserId": self.ids["alice"],
                        "apiBaseUrl": self.emu.api_base,
                        "gatewayUrl": self.emu.gateway_url,
                        "guildReadyTimeout": 0.1,
                    },
                    "tmux": {"session": TMUX_SESSION},
                    "projects": projects,
                }
            ],
        }

    def write_config(self, raw: dict | None = None) -> None:
        path = self.bridge_home / "config.json"
        path.write_text(json.dumps(raw or self.config(), indent=2))
        path.chmod(0o600)

    def cli(
        self, *args: str, check: bool = True, cwd: Path | None = None
    ) -> subprocess.CompletedProcess:
        """``discord-bridge`` of this checkout, or of the one in ``cwd`` (``-m`` puts the
        current directory first on the path)."""
        return subprocess.run(
            [sys.executable, "-m", "bridge.cli", *args],
            env=self.env,
            cwd=cwd or REPO,
            capture_output=True,
            text=True,
            check=check,
            timeout=60,
        )

    # --- the bot ---------------------------------------------------------------------

    def start_bot(
        self,
        timeout: float = 20.0,
        config: Path | None = None,
        checkout: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """``checkout``: run the bot of another checkout of the bridge (a benchmark's "today"),
        ``env``: extra environment for the bot."""
        since = self.discord.mark()
        log_start = self.bot_log.stat().st_size if self.bot_log.exists() else 0
        log = open(self.bot_log, "ab")  # noqa: SIM115 - owned by the process
        options = ["--config", str(config)] if config else []
        self.bot = subprocess.Popen(
            [sys.executable, "-m", "bridge.cli", *options, "run"],
            env={**self.env, **(env or {})},
            cwd=checkout or REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        try:
            self.discord.wait(since=since, kind="gateway_ready", timeout=timeout)
            # The emulator sent READY; the bot's session starts when it has read it. A message
            # posted in between is, to the bot, one sent while it was offline (noted as such).
            if checkout is None:  # (another checkout's bot may not say it)
                wait_until(
                    lambda: self._bot_logged(CONNECTED, log_start), timeout, "the bot to read READY"
                )
        except (TimeoutError, AssertionError) as err:
            raise AssertionError(f"bot did not connect ({err}):\n{self.bot_output()}") from err

    def _bot_logged(self, words: str, since: int) -> bool:
        with open(self.bot_log, "rb") as log:
            log.seek(since)
            return words.encode() in log.read()

    def stop_bot(self) -> int:
        if self.bot is None:
            return 0
        self.bot.send_signal(signal.SIGTERM)
        try:
            code = self.bot.wait(15)
        except subprocess.TimeoutExpired:
            self.bot.kill()
            code = self.bot.wait()
        self.bot = None
        return code

    def bot_output(self) -> str:
        return self.bot_log.read_text(errors="replace") if self.bot_log.exists() else ""

    # --- Discord side ----------------------------------------------------------------

    def post(self, content: str, project: str = "project-a", **kwargs: object) -> dict:
        """Post as a user (alice unless ``user=``); later waits look from here on."""
        self.last_post_mark = self.discord.mark()
        return self.discord.post_message(self.ids[project], content, **kwargs)

    def wait_bot_message(
        self,
        project: str = "project-a",
        timeout: float = 30.0,
        since: int | None = None,
        status: bool = False,
        **f,
    ) -> dict:
        """The bot's first message in ``project``'s channel after ``since`` (default: since
        the last :meth:`post`, so a reply that beat us to the wait is still found). Live
        status messages are skipped unless ``status`` is set."""
        since = self.last_post_mark if since is None else since
        deadline = time.monotonic() + timeout
        while True:
            try:
                record = self.discord.wait(
                    since=since,
                    kind="message_create",
                    channel_id=self.ids.get(project, project),
                    author_id=self.ids["bot_id"],
                    timeout=max(0.1, deadline - time.monotonic()),
                    **f,
                )
            except TimeoutError as err:
                raise AssertionError(f"{err}\n{self.diagnostics(project)}") from None
            if status or not is_status(record["message"]):
                return record["message"]
            since = record["seq"]

    def diagnostics(self, project: str = "project-a") -> str:
        hook_log = self.state_dir / "logs" / "hooks.log"
        hooks = hook_log.read_text() if hook_log.exists() else "(no hook log)"
        return (
            f"--- screen of {project} ---\n{self.screen(project)}\n"
            f"--- hooks.log ---\n{hooks[-3000:]}\n"
            f"--- bot log ---\n{self.bot_output()[-3000:]}"
        )

    def bot_messages(self, project: str = "project-a", status: bool = False) -> list[dict]:
        """The bot's messages in ``project``'s channel (live status messages only if asked)."""
        bot = self.ids["bot_id"]
        msgs = self.discord.messages(self.ids.get(project, project))
        return [m for m in msgs if m["author"]["id"] == bot and (status or not is_status(m))]

    def wait_reaction(self, message: dict, emoji: str = "✅", timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while emoji not in self.discord.reactions(message["channel_id"], message["id"]):
            if time.monotonic() > deadline:
                raise AssertionError(f"no {emoji} on the message:\n{self.bot_output()[-3000:]}")
            time.sleep(0.05)

    # --- tmux side -------------------------------------------------------------------

    @property
    def tmux(self) -> TmuxSessions:
        return TmuxSessions(TMUX_SESSION, self.socket)

    def tmux_clients(self) -> list[str]:
        """The ttys of the tmux clients attached to the rig's tmux server."""
        listed = subprocess.run(
            ["tmux", "-L", self.socket, "list-clients", "-F", "#{client_tty}"],
            capture_output=True,
            text=True,
        )
        return listed.stdout.split()

    def pane(self, project: str = "project-a"):
        return self.tmux.find(self.ids[project])

    def screen(self, project: str = "project-a") -> str:
        pane = self.pane(project)
        return self.tmux.capture(pane.pane_id) if pane else ""

    def stop_claude_daemon(self) -> None:
        """Claude Code's agent view (2.1.332: ← on an empty prompt, in a session without
        ``CLAUDE_CODE_DISABLE_AGENT_VIEW``) starts a daemon that outlives tmux, with sessions
        of its own, under ``/tmp/cc-daemon-<uid>``: stop this HOME's, if one was started."""
        if not (self.claude_home / ".claude" / "daemon.log").exists():
            return
        subprocess.run(
            ["claude", "daemon", "stop", "--any"], env=self.env, capture_output=True, timeout=60
        )

    def outputs_dir(self, project: str = "project-a") -> Path:
        return self.state_dir / "outputs" / self.ids[project]

    def assert_loop_kept_up(self) -> None:
        """Fail the test if its bot's event loop was held more than 2 s at once (every
        message and click waits on it): a race that a rerun would hide."""
        lags = long_loop_lags(self.bot_output())
        assert not lags, "the bot's event loop stalled:\n" + "\n".join(lags)

    def close(self) -> None:
        self.stop_bot()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        self.stop_claude_daemon()
        kill_leftovers(self.tmp)
        socket_path = Path(f"/tmp/tmux-{os.getuid()}") / self.socket
        socket_path.unlink(missing_ok=True)
