"""``discord-bridge try --demo``: the bridge in a browser with a scripted model, for nothing.

The real bot, tmux and the user's own Claude Code (found as ``selftest`` finds it), as
``try`` runs them, but the CLI talks to the fake Messages API (``fake_anthropic``) on
loopback, answered by :class:`bridge.demo_tour.Tour`: no Claude login, no usage, no network.
Set up as ``selftest`` sets up: everything in one throwaway directory (a HOME of its own with
Claude Code's first run done, an API key for the fake only, the bridge's home, runtime and
state dirs, a private tmux server) that Ctrl-C removes. The user's ``~/.claude``, bridge
config and sessions are never read or written.

With ``--agent codex`` the user's Codex CLI runs instead, on the fake Responses API
(``fake_openai``) answered by :class:`bridge.demo_codex.CodexTour`, with a ``CODEX_HOME`` of its
own in the throwaway HOME (:mod:`bridge.selftest_codex`): their ``~/.codex`` is never read or
written either.

The project is a fresh git repository of two files (:data:`bridge.demo_tour.PROJECT_FILES`),
so the edit, its diff and the review have something to show. A project directory of the
user's is refused: a scripted model has nothing to say about its files and must never edit
them, and a copy (of a repository of any size, its secrets with it) would only show the
demo's own files anyway.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from bridge import doctor_codex, selftest, selftest_codex, tryout_page, tryout_setup
from bridge.selftest_bench import Bench, CheckFailed

PROJECT_NAME = "demo"  # the project directory's name, so its channel is #demo
SESSION = "discord-bridge-demo"  # the tmux session, on a private socket
GIT = (
    "git",
    "-c",
    "user.name=demo",
    "-c",
    "user.email=demo@localhost",
    "-c",
    "init.defaultBranch=main",
)


@dataclass
class Options:
    host: str = tryout_setup.DEFAULT_HOST
    port: int = tryout_setup.DEFAULT_PORT
    open_browser: bool = True
    agent: str = "claude"  # "codex": the user's Codex CLI on the fake Responses API


def run(opts: Options) -> int:
    """Start the demo, serve until Ctrl-C (or SIGTERM); 0, or 1 when it could not start."""
    report = selftest.Report()
    if opts.agent == "codex":
        found = doctor_codex.find_codex(report, "codex", private=True)
    else:
        found = selftest.find_claude(report, selftest.Options())
    if found is None or not selftest.find_tmux(report):
        return 1
    try:
        from discord_emulator import Emulator

        api_class = model_api(opts.agent)
    except ImportError as err:
        print(
            f"discord-bridge try --demo: {err.name} is not installed: run ./install.sh again",
            file=sys.stderr,
        )
        return 1
    signal.signal(signal.SIGTERM, _interrupt)  # a stop that cleans up, as Ctrl-C does
    kind = CodexDemo if opts.agent == "codex" else Demo
    demo = kind(Path(tempfile.mkdtemp(prefix="discord-bridge-demo-")), *found, opts)
    try:
        demo.start(Emulator, api_class)
        code = demo.serve()
    except (CheckFailed, tryout_setup.TryError, OSError, subprocess.CalledProcessError) as err:
        print(f"discord-bridge try --demo: could not start: {err}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        code = 0
    finally:
        demo.close()
    print("discord-bridge try --demo: stopped; its throwaway files are removed", flush=True)
    return code


def model_api(agent: str) -> type:
    """The fake model API the demo's agent talks to (an ImportError when not installed)."""
    if agent == "codex":
        from fake_openai import FakeOpenAI

        return FakeOpenAI
    from fake_anthropic import FakeAnthropic

    return FakeAnthropic


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


class Demo(Bench):
    """Selftest's set-up (:class:`~bridge.selftest_bench.Bench`) with the demo's project, its
    scripted model and the web page."""

    def __init__(self, root: Path, claude: str, printed: str, opts: Options) -> None:
        super().__init__(root, claude, printed)
        self.opts = opts
        self.project = root / PROJECT_NAME
        self.socket = f"discord-bridge-demo-{os.getpid()}-{secrets.token_hex(3)}"
        self.url = ""

    def start(self, emulator_class: type, api_class: type) -> None:
        for path in (self.home, self.runtime_dir, self.state_dir, self.bridge_home):
            path.mkdir(mode=0o700)
        make_project(self.project, self.home)
        self.start_model(api_class)
        me = os.environ.get("USER") or "you"
        ids = self.start_emulator(emulator_class, "discord-bridge demo", me, PROJECT_NAME)
        self.url = self.serve_page()
        config = self.install(ids, "demo", SESSION)
        self.welcome()
        self.start_bot(config)

    def serve_page(self) -> str:
        """The web client on ``--listen``/``--port``, behind a token, as ``try`` serves it."""
        host, port, token = self.opts.host, self.opts.port, secrets.token_urlsafe(24)
        try:
            port = self.emu.serve_web(host, port, token, tryout_setup.OWNER, self.channel)
        except OSError as err:
            raise tryout_setup.TryError(tryout_page.bind_error(host, port, err)) from None
        return tryout_page.page_url(host, port, token)

    def start_model(self, api_class: type) -> None:
        """Claude Code's first run done in the throwaway HOME; the fake API, as the tour."""
        from bridge.demo_tour import Tour
        from fake_anthropic.claude_cli import prepare_home

        prepare_home(self.home, [self.project], version=self.printed.split(" ", 1)[0])
        self.api = api_class(responder=Tour(self.project, self.home)).start()

    def welcome_text(self) -> str:
        from bridge.demo_tour import WELCOME

        return WELCOME

    def welcome(self) -> None:
        """The channel's first message, from the bot: what to type for each step."""
        text = self.welcome_text()
        self.emu.client.post_message(self.channel, text, user="bot_id", bot=True)

    def agent_lines(self) -> str:
        """The banner's lines on the agent: where it runs, what it costs."""
        attach = f"tmux -L {self.socket} attach -t {SESSION}"
        return (
            f"  claude    your Claude Code, on a fake API: {attach}\n"
            "  costs     nothing: no Claude login, no usage, no network"
        )

    def serve(self) -> int:
        """Announce the page, open the browser; wait for Ctrl-C, or the bot's end (1)."""
        print(banner(self.url, self.opts.host, self.root, self.agent_lines()), flush=True)
        if self.opts.open_browser and tryout_page.can_open_browser():
            import webbrowser

            handover = str(self.root / tryout_page.HANDOVER_NAME)
            webbrowser.open(tryout_page.write_handover(handover, self.url))
        assert self.bot is not None
        code = self.bot.wait()
        print(
            f"discord-bridge try --demo: the bot stopped ({code}): {self.bot_log_tail()}",
            file=sys.stderr,
        )
        return 1

    def close(self) -> None:
        super().close()
        shutil.rmtree(self.root, ignore_errors=True)


class CodexDemo(Demo):
    """The demo with the user's Codex CLI: a private ``CODEX_HOME`` in the throwaway HOME, on
    the fake Responses API answered by :class:`bridge.demo_codex.CodexTour`
    (:mod:`bridge.selftest_codex` sets it up; ``self.claude`` is the codex found)."""

    def start_model(self, api_class: type) -> None:
        from bridge.demo_codex import CodexTour

        self.api = api_class(responder=CodexTour()).start()
        selftest_codex.prepare(self)

    def install(self, ids: dict[str, str], name: str, session: str) -> Path:
        return selftest_codex.install(self, ids, name, session)

    def welcome_text(self) -> str:
        from bridge.demo_codex import WELCOME

        return WELCOME

    def agent_lines(self) -> str:
        return (
            f"  codex     your Codex ({self.printed}), on a fake Responses API: "
            f"tmux -L {self.socket} attach -t {SESSION}\n"
            f"  home      a private CODEX_HOME, {selftest_codex.codex_home(self)}: "
            "your ~/.codex (login, config, sessions) is not read or written\n"
            "  costs     nothing: no OpenAI login, no usage (the model is the demo's, on "
            "loopback)"
        )


def make_project(project: Path, home: Path) -> None:
    """The demo's project: its files, committed in a new git repository (git run with the
    throwaway HOME: none of the user's git config applies)."""
    project.mkdir(mode=0o700)
    from bridge.demo_tour import PROJECT_FILES

    for name, text in PROJECT_FILES.items():
        (project / name).write_text(text)
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", os.defpath),
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C.UTF-8",
    }
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "The demo's project")):
        subprocess.run([*GIT, *args], cwd=project, env=env, check=True, capture_output=True)


def banner(url: str, host: str, root: Path, agent_lines: str) -> str:
    lines = [
        "",
        "discord-bridge try --demo: the bridge in your browser, a scripted model answering",
        f"  open      {url}",
        f"  project   a throwaway one (channel #{PROJECT_NAME}): {root / PROJECT_NAME}",
        agent_lines,
        "  stop      Ctrl-C (everything the demo made is removed)",
    ]
    if not tryout_setup.is_loopback(host):
        lines.insert(
            3,
            "  note      anyone with this address (and its token) can use the page: "
            "keep it private",
        )
    return "\n".join(lines) + "\n"
