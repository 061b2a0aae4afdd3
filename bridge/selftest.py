"""``discord-bridge selftest``: your own Claude Code, driven end to end through the bridge, offline.

What a user runs after upgrading Claude Code or the bridge. In a throwaway directory (a HOME,
a project, the bridge's home, runtime and state dirs) and a private tmux server it starts the
fake Messages API (``fake_anthropic``) and the Discord emulator (``discord_emulator``, as
``try`` does), writes a config for them (``tryout.write_config``), installs the bridge's hooks
into the throwaway HOME, runs the bot as ``discord-bridge run`` would, and then acts as the
owner would on Discord: a message typed, the reply posted, a permission prompt allowed, a
question answered, a turn interrupted with ⏹. One line per check, ✓ or ✗ with what failed and
what to do; exit 0 when all pass.

Nothing of the user's set-up is read or written but the ``claudeCommand`` of their config
(which ``claude`` to check): not their Claude Code HOME, sessions or settings, not their
bridge config or runtime, not Discord, not the network (the CLI talks to the fake API on
loopback, with telemetry and updates off). The throwaway directory is removed when every check
passed, kept (and named) otherwise.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge import doctor
from bridge.claude import start_failure, versions

SESSION = "discord-bridge-selftest"  # the tmux session, on a private socket
PROJECT_NAME = "selftest"  # the project directory's name, so its channel is #selftest
WAIT = 60.0  # seconds any one step may take before it fails
STARTUP_WAIT = 30.0  # seconds for the bot to connect to the emulator
FILE_MADE = "selftest-allowed.txt"  # what the allowed Bash command creates
COLOURS = ("Blue", "Green")  # the question's options; the owner picks the first
SLOW_TEXT = "selftest: this reply is never shown"  # the turn the interrupt stops


class CheckFailed(Exception):
    """A check failed: ``what`` happened, ``fix`` says what to do."""

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(what)
        self.what, self.fix = what, fix


@dataclass
class Options:
    claude: str | None = None  # the command to check (default: the config's claudeCommand)
    config_path: str | None = None  # the user's config, read for claudeCommand only
    keep: bool = False  # keep the throwaway directory even when everything passed


class Report(doctor.Report):
    """One line per check, as ``doctor`` prints them, each as it completes, with its time."""

    def __init__(self) -> None:
        super().__init__()
        self.started = time.monotonic()

    def ok(self, what: str, since: float | None = None) -> None:
        took = f" ({time.monotonic() - since:.1f} s)" if since is not None else ""
        super().ok(f"{what}{took}")
        sys.stdout.flush()

    def fail(self, what: str, fix: str) -> None:
        super().fail(what, fix)
        sys.stdout.flush()


def run(opts: Options) -> int:
    report = Report()
    found = find_claude(report, opts)
    if found is None or not find_tmux(report):
        return finish(report, None, opts)
    path, printed = found
    try:
        from discord_emulator import Emulator
        from fake_anthropic import FakeAnthropic
    except ImportError as err:
        report.fail(
            f"the selftest's parts are not installed ({err.name})",
            "run ./install.sh again (it installs packages/discord-emulator and "
            "packages/fake-anthropic next to the bridge)",
        )
        return finish(report, None, opts)
    bench = Bench(Path(tempfile.mkdtemp(prefix="discord-bridge-selftest-")), path, printed)
    try:
        bench.start(Emulator, FakeAnthropic)
        for check in CHECKS:
            since = time.monotonic()
            try:
                what = check(bench)
            except CheckFailed as err:
                report.fail(err.what, err.fix)
                break  # each check needs the ones before it
            report.ok(what, since)
    except CheckFailed as err:
        report.fail(err.what, err.fix)
    except KeyboardInterrupt:
        report.fail("interrupted", "run it again and let it finish (about 15 s)")
    except Exception as err:  # a fault of the selftest itself: said, and cleaned up after
        report.fail(f"the selftest itself failed: {err!r}", "report it, with this line")
    finally:
        bench.close()
    about_your_own_setup(report)
    return finish(report, bench, opts)


def about_your_own_setup(report: Report) -> None:
    """This ran Claude Code with a throwaway HOME and login; the user's own first run is read
    (never written) from ~/.claude.json, their login is doctor's to ask."""
    doctor.check_claude_first_run(report)
    report.info("your own Claude Code login is not used here: `discord-bridge doctor` checks it")


def finish(report: Report, bench: Bench | None, opts: Options) -> int:
    took = time.monotonic() - report.started
    if bench is not None and (report.failures or opts.keep):
        report.info(f"kept for a look: {bench.root} (bot.log, state/logs/hooks.log)")
    elif bench is not None:
        shutil.rmtree(bench.root, ignore_errors=True)
    if report.failures:
        print(f"selftest: {report.failures} check failed after {took:.0f} s", flush=True)
        return 1
    print(f"selftest: all checks passed in {took:.0f} s", flush=True)
    return 0


# ----- before anything starts --------------------------------------------------------------


def find_claude(report: Report, opts: Options) -> tuple[str, str] | None:
    """The Claude Code the bridge would start (``--claude``, else the config's
    ``claudeCommand``, else ``claude``), its path and ``--version`` line."""
    command, where = claude_command(opts)
    path = shutil.which(command)
    if path is None:
        failure = start_failure.diagnose("", 127, command)
        report.fail(f"Claude Code: `{command}` ({where}) not found", failure.advice)
        return None
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        report.fail(f"Claude Code: `{path} --version` failed: {err}", "reinstall Claude Code")
        return None
    printed = (done.stdout.strip() or done.stderr.strip()).splitlines()[:1]
    version = versions.parse(printed[0]) if printed else None
    if version is None:
        shown = printed[0][:80] if printed else "nothing"
        report.fail(
            f"Claude Code: `{path} --version` printed {shown!r}, not a version",
            f"check that {path} is Claude Code (npm install -g @anthropic-ai/claude-code)",
        )
        return None
    tested = f"{versions.OLDEST} to {versions.PINNED}"
    if versions.in_tested_range(version):
        report.ok(f"Claude Code {printed[0]} at {path} (tested range {tested})")
    elif version > (versions.parse(versions.PINNED) or ()):
        report.ok(
            f"Claude Code {printed[0]} at {path}: newer than the tested {tested}, "
            "which is what the checks below are for"
        )
    else:
        report.ok(f"Claude Code {printed[0]} at {path}: older than the tested {tested}")
    return path, printed[0]


def claude_command(opts: Options) -> tuple[str, str]:
    """The command and where it came from. The user's config is read, never written; one
    that does not load (the example, a typo) leaves ``claude``."""
    if opts.claude:
        return opts.claude, "--claude"
    from bridge import config
    from bridge.state import runtime

    path = opts.config_path or runtime.config_path()
    try:
        projects = config.load(path).projects()
    except (config.ConfigError, OSError):
        return "claude", "on PATH"
    commands = sorted({p.claude_command for p in projects if p.claude_command})
    if commands and commands != ["claude"]:
        return commands[0], f"claudeCommand in {path}"
    return "claude", "on PATH"


def find_tmux(report: Report) -> bool:
    if shutil.which("tmux") is None:
        report.fail("tmux not found", "install tmux 3.0 or newer (apt-get install tmux)")
        return False
    return True


# ----- the throwaway set-up ----------------------------------------------------------------


class Bench:
    """The fake API, the emulator, the bot and the user's Claude Code in a private tmux
    server, all under ``root``."""

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
        from bridge import tryout
        from fake_anthropic.claude_cli import claude_env, prepare_home

        for path in (self.home, self.project, self.runtime_dir, self.state_dir):
            path.mkdir(mode=0o700)
        self.bridge_home.mkdir(mode=0o700)
        version = self.printed.split(" ", 1)[0]
        prepare_home(self.home, [self.project], version=version)  # no first-run screens
        self.api = api_class().start()
        self.emu = emulator_class(
            bot_token=secrets.token_urlsafe(32),
            control_token=secrets.token_urlsafe(32),
            second_bot=False,
        )
        self.emu.start()
        names = {tryout.OWNER: "you", "bot_id": "discord-bridge"}
        ids = self.emu.configure_world(
            "discord-bridge selftest", [tryout.PANEL_CHANNEL, PROJECT_NAME], names
        )
        self.channel, self.bot_id = ids[PROJECT_NAME], self.emu.state.ids["bot_id"]
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
            name="selftest",
            session=SESSION,
            claude_command=self.claude,
        )
        self.start_bot(config)

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
            parts.append(f"the channel's last bot message: {_one_line(said[-1]['content'])!r}")
        parts.append("Claude Code's screen ends: " + (" / ".join(words) or "(nothing)"))
        return "; ".join(parts)

    def bot_log_tail(self) -> str:
        try:
            text = (self.root / "bot.log").read_text(errors="replace")
        except OSError:
            return "no log"
        lines = [line for line in text.splitlines() if line.strip()]
        return " / ".join(lines[-3:])[-400:] or "an empty log"


# ----- the checks, in order (each returns its ✓ line) -------------------------------------


def check_message_reaches_claude(bench: Bench) -> str:
    from fake_anthropic import text

    bench.api.script(text("selftest: the reply came back"))
    typed = "selftest: is this reaching Claude Code?"
    sent, since, before = bench.post(typed)
    delivered = lambda: _reacted(bench, sent) or _start_failure_reply(bench, since)  # noqa: E731
    bench.wait_for(
        delivered,
        "the message was not typed into Claude Code",
        f"see {bench.root / 'bot.log'}",
        since,
    )
    failure = _start_failure_reply(bench, since)
    if failure:
        raise CheckFailed(*failure)
    saw = bench.model_saw(
        before + 1,
        since,
        "the typed message did not reach the model",
        "Claude Code started but sent nothing to its API: see its screen",
    )
    if saw != typed:
        raise CheckFailed(
            f"the model got {saw!r} instead of {typed!r}",
            "the bridge typed it wrongly: report it, with this line",
        )
    return "Claude Code started in tmux; a message typed on Discord reached the model as sent"


def check_reply_posted(bench: Bench) -> str:
    bench.bot_message(
        bench.since,
        "selftest: the reply came back",
        "no reply was posted",
        "the Stop hook did not post: see state/logs/hooks.log; "
        "`discord-bridge hooks install` after reinstalling",
    )
    return "the reply was posted in the channel (the Stop hook)"


def check_permission(bench: Bench) -> str:
    from fake_anthropic import echo, tool_use

    command = {"command": f"touch {FILE_MADE}", "description": "selftest: make a file"}
    bench.api.script(tool_use("Bash", command), echo())
    _sent, since, before = bench.post("selftest: make a file")
    prompt = bench.bot_message(
        since,
        "Claude wants to use",
        "no permission prompt was posted",
        "the PermissionRequest hook did not post: see state/logs/hooks.log",
    )
    bench.emu.client.click(prompt["id"], _button(prompt, "Allow"))
    made = bench.project / FILE_MADE
    bench.wait_for(
        made.exists,
        "Allow did not run the command",
        "the decision did not reach Claude Code: see state/logs/hooks.log",
        since,
    )
    saw = bench.model_saw(
        before + 2,
        since,
        "the command's result did not reach the model",
        "see Claude Code's screen",
    )
    if "[tool_result]" not in saw:
        raise CheckFailed(
            f"the model got {saw[:120]!r} instead of the command's result",
            "see Claude Code's screen",
        )
    return "a permission prompt was posted; Allow ran the command"


def check_question(bench: Bench) -> str:
    from fake_anthropic import echo, tool_use

    options = [{"label": label, "description": f"the colour {label.lower()}"} for label in COLOURS]
    question = {
        "question": "Which colour?",
        "header": "Colour",
        "options": options,
        "multiSelect": False,
    }
    bench.api.script(tool_use("AskUserQuestion", {"questions": [question]}), echo())
    _sent, since, before = bench.post("selftest: ask me something")
    prompt = bench.bot_message(
        since,
        "Claude has a question",
        "no question was posted",
        "the PermissionRequest hook did not post the question: see state/logs/hooks.log",
    )
    bench.emu.client.click(prompt["id"], _button(prompt, COLOURS[0]))
    saw = bench.model_saw(
        before + 2,
        since,
        "the answer did not reach the model",
        "see Claude Code's screen and state/logs/hooks.log",
    )
    if COLOURS[0] not in saw:
        raise CheckFailed(
            f"the model got {saw[:160]!r}, not the answer {COLOURS[0]!r}",
            "the answer was lost on its way: report it, with this line",
        )
    return "a question was posted; the answer clicked reached the model"


def check_interrupt(bench: Bench) -> str:
    from fake_anthropic import text, tool_use

    start = {"command": "echo selftest-working", "description": "selftest: start working"}
    bench.api.script(tool_use("Bash", start), text(SLOW_TEXT, delay=WAIT))
    _sent, since, before = bench.post("selftest: take your time")
    # ⏹ once the model is "thinking" (the slow answer's request is in), as a person would,
    # seconds into the turn, on this turn's status (the one naming its tool: the last turn's
    # may still be closing). A first version clicked the first ⏳ it saw: the last turn's.
    bench.model_saw(
        before + 2, since, "the tool's result did not reach the model", "see Claude Code's screen"
    )
    status = bench.wait_for(
        lambda: _working_status(bench, since, "selftest-working"),
        "no ⏳ status with ⏹ was shown for the turn",
        "progress messages are missing: see bot.log",
        since,
    )
    bench.emu.client.click(status["id"], status["components"][0]["components"][0]["custom_id"])
    bench.wait_for(
        lambda: "Interrupted" in bench.screen(),
        "⏹ did not interrupt Claude Code",
        "the bridge's Escape did not reach the CLI: report it, with this line",
        since,
    )
    bench.wait_for(
        lambda: _status_says(bench, status["id"], "⏹ Interrupted"),
        "the status message did not say ⏹ Interrupted",
        "see bot.log",
        since,
    )
    return "⏹ interrupted a running turn"


CHECKS: tuple[Callable[[Bench], str], ...] = (
    check_message_reaches_claude,
    check_reply_posted,
    check_permission,
    check_question,
    check_interrupt,
)


# ----- reading the channel -----------------------------------------------------------------


def _reacted(bench: Bench, sent: dict) -> bool:
    return "✅" in bench.emu.client.reactions(bench.channel, sent["id"])


def _start_failure_reply(bench: Bench, since: int) -> tuple[str, str] | None:
    """The bot's "Not delivered" reply, as (what, fix): Claude Code could not start."""
    for record in bench.emu.client.records(since=since, kind="message_create"):
        content = str((record.get("message") or {}).get("content") or "")
        if record.get("channel_id") == bench.channel and content.startswith("⚠️ Not delivered"):
            head, _, advice = content.partition("**What to do:**")
            lines = [line for line in head.splitlines() if line and not line.startswith("```")]
            what = lines[0].removeprefix("⚠️ Not delivered to Claude Code: ").rstrip(".")
            words = [line for line in lines[1:] if line != "Its last words:"]
            said = f": {' / '.join(words)}" if words else ""
            return f"Claude Code did not start: {what}{said}", advice.strip() or "see bot.log"
    return None


def _working_status(bench: Bench, since: int, showing: str) -> dict | None:
    """This turn's status message (it names ``showing``) while it shows ⏳ and its ⏹."""
    records = bench.emu.client.records(since=since, kind="message_create")
    new = {r.get("message_id") for r in records if r.get("channel_id") == bench.channel}
    for message in bench.emu.client.messages(bench.channel):
        ours = message["id"] in new and message["author"]["id"] == bench.bot_id
        working = message["content"].startswith("⏳") and showing in message["content"]
        if ours and working and message.get("components"):
            return message
    return None


def _current(bench: Bench, message_id: str) -> dict | None:
    for message in bench.emu.client.messages(bench.channel):
        if message["id"] == message_id:
            return message
    return None


def _status_says(bench: Bench, message_id: str, start: str) -> bool:
    message = _current(bench, message_id)
    return message is not None and message["content"].startswith(start)


def _button(message: dict, label: str) -> str:
    for row in message.get("components") or []:
        for component in row["components"]:
            if str(component.get("label", "")).startswith(label):
                return component["custom_id"]
    raise CheckFailed(
        f"the prompt has no {label!r} button: {_one_line(message['content'])!r}",
        "report it, with this line",
    )


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
