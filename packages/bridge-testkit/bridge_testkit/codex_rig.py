"""The real Codex CLI in a private tmux server, against ``fake_openai``: the test ground for
Codex as the bridge's second agent (docs/codex.md holds what was measured with it).

:class:`CodexRig` makes a private ``HOME`` and ``CODEX_HOME`` (``config.toml``: a model provider
pointing at the fake, the project trusted), can write ``hooks.json`` there, starts the ``codex``
TUI in ``tmux -L <unique>``, types prompts, answers the "Hooks need review" dialog, and on
:meth:`CodexRig.close` ends what Codex leaves running: from 0.160 the TUI starts an app-server
daemon and its ``pid-update-loop``, re-parented to init, which outlive the tmux server. They
are found by their command line naming this rig's ``CODEX_HOME`` and ended by PID.

    with FakeOpenAI() as fake, CodexRig(tmp_path, fake, version) as codex:
        fake.script(text("Hello"))
        codex.start_recording(["Stop"])  # hooks.json, codex started, its hooks trusted
        codex.submit("hello")
        codex.wait_hook("Stop")  # the Stop hook's stdin, as JSON
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import bridge
from bridge.codex import versions
from fake_anthropic.claude_cli import TmuxServer
from fake_openai import MODEL, FakeOpenAI

REPO = Path(bridge.__file__).resolve().parents[1]
TARGET = "codex"
INPUT_PROMPT = "›"  # the input box's prompt mark (the placeholder: "Ask Codex to do anything")
HOOKS_REVIEW = "Hooks need review"
# Codex drains the terminal's input before a trust dialog takes a key and exits with this when
# the drain overruns its one second (a process starved of CPU): docs/codex.md.
DRAIN_DEATH = "timed out discarding buffered terminal input"
STARTS = 3  # how often a dialog is tried with Codex started again after that exit
# The folder-trust dialog's first option (0.171.0, 0.150.1): Enter takes it.
TRUST_FOLDER = ("1. Trust and continue", "1. Yes, continue")
DEAD_LINE = "Pane is dead ("  # tmux's remain-on-exit line, below a pane whose program ended
NO_DEAD_LINE = f"\n{DEAD_LINE}tmux wrote no line)"  # added where tmux wrote none
BUSY_MARK = "esc to interrupt"  # the status line while a turn runs ("• Working (3s • esc …")


def codex_binary(version: str = versions.PINNED) -> Path:
    """The ``codex`` of ``version`` where scripts/test.sh installs it (.cache/codex-<v>)."""
    binary = REPO / ".cache" / f"codex-{version}" / "node_modules" / ".bin" / "codex"
    if not binary.exists():
        raise FileNotFoundError(
            f"{binary} missing: run scripts/test.sh, or npm install --prefix"
            f" .cache/codex-{version} {versions.NPM_PACKAGE}@{version}"
        )
    return binary


def config_toml(base_url: str, project: Path, extra: str = "") -> str:
    """Codex's config: the fake as its model provider (no retries: an error ends the turn at
    once), ``project`` trusted (no trust dialog), no update check or announcements."""
    return f"""\
model = "{MODEL}"
model_provider = "fake"
check_for_update_on_startup = false
{extra}
[model_providers.fake]
name = "Fake OpenAI"
base_url = "{base_url}"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects."{project}"]
trust_level = "trusted"
"""


class CodexRig:
    """One Codex TUI in its own tmux server, HOME and project (see the module's docstring)."""

    def __init__(
        self,
        root: Path,
        fake: FakeOpenAI,
        version: str = versions.PINNED,
        *,
        trusted: bool = True,
        config_extra: str = "",
        binary: Path | None = None,
    ) -> None:
        self.root = root
        self.fake = fake
        self.version = version
        self.binary = binary or codex_binary(version)  # another program: the rig's own tests
        self.home = root / "home"
        self.codex_home = self.home / ".codex"
        self.project = root / "project"
        self.hook_log = root / "hook-log"  # what the recorder hooks wrote: one file per call
        for folder in (self.codex_home, self.project, self.hook_log):
            folder.mkdir(parents=True, exist_ok=True)
        config = config_toml(fake.base_url, self.project, config_extra)
        if not trusted:  # the project's trust dialog shows on start
            config = config.split("\n[projects.")[0]
        self.config_toml = self.codex_home / "config.toml"
        self.config_toml.write_text(config)
        self.tmux = TmuxServer(f"codex-test-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        self._started = False
        self._args: tuple[str, ...] = ()

    # -- hooks -----------------------------------------------------------------------------

    def recorder(self, event: str, output: dict[str, Any] | None = None) -> dict[str, Any]:
        """A hook entry whose command writes its stdin to ``hook_log/<event>-<n>.json`` and
        prints ``output`` (JSON) if given: the tiny probe every test here uses."""
        script = self.root / f"hook-{event}-{uuid.uuid4().hex[:6]}.sh"
        printed = f"printf '%s' {shlex.quote(json.dumps(output))}\n" if output else ""
        log = shlex.quote(str(self.hook_log))
        # written aside, then renamed: a call is never read half written
        script.write_text(
            "#!/bin/sh\n"
            f'part="$(mktemp {log}/.part-XXXXXX)"\n'
            f'cat > "$part" && mv "$part" {log}/{event}-"${{part##*-}}"\n' + printed
        )
        script.chmod(0o755)
        return {"hooks": [{"type": "command", "command": str(script), "timeout": 30}]}

    def write_hooks(self, table: dict[str, list[dict[str, Any]]], project: bool = False) -> Path:
        """``hooks.json`` ({"hooks": {event: [matcher groups]}}) in CODEX_HOME, or in the
        project's ``.codex/`` with ``project=True``."""
        folder = self.project / ".codex" if project else self.codex_home
        folder.mkdir(exist_ok=True)
        path = folder / "hooks.json"
        path.write_text(json.dumps({"hooks": table}, indent=2))
        return path

    def hook_calls(self, event: str) -> list[dict[str, Any]]:
        """The stdin of each call of ``event``'s recorder, oldest first."""
        files = sorted(self.hook_log.glob(f"{event}-*"), key=lambda path: path.stat().st_mtime_ns)
        return [json.loads(path.read_text()) for path in files]

    def wait_hook(self, event: str, count: int = 1, timeout: float = 30.0) -> dict[str, Any]:
        """Wait until ``event`` fired ``count`` times; its last stdin."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            calls = self.hook_calls(event)
            if len(calls) >= count:
                return calls[count - 1]
            time.sleep(0.1)
        raise TimeoutError(
            f"{event} fired {len(self.hook_calls(event))} time(s), not {count}, in {timeout}s;"
            f" fired: {sorted(p.name for p in self.hook_log.iterdir())}; screen:\n{self.screen()}"
        )

    # -- the TUI ---------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "FAKE_OPENAI_KEY": "sk-fake",
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PATH": os.environ.get("PATH", os.defpath),
        }

    def start(self, *args: str, width: int = 160, height: int = 45) -> None:
        """Start ``codex [args]`` in the project; wait for its first screen."""
        self._args = args
        command = [str(self.binary), *args]
        self.tmux.new_session(TARGET, self.project, command, self.env(), width, height)
        self._started = True
        first = lambda s: INPUT_PROMPT in s or HOOKS_REVIEW in s or died(s)  # noqa: E731
        try:
            self.wait_for(first, timeout=60)
        except TimeoutError as late:  # say what runs: a daemon starting, its copy being made
            running = [self._command_line(pid) for pid in self.leftover_pids()]
            raise TimeoutError(f"{late}\nprocesses of this CODEX_HOME: {running}") from None

    @staticmethod
    def _command_line(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            return f"{pid} (gone)"

    def start_recording(
        self, events: Iterable[str], outputs: dict[str, dict[str, Any]] | None = None
    ) -> None:
        """The usual start: a recorder hook for each of ``events`` (printing ``outputs[event]``
        where given), Codex started, its hooks trusted, the input box ready."""
        answers = outputs or {}
        self.write_hooks({event: [self.recorder(event, answers.get(event))] for event in events})
        self.start()
        self.trust_hooks()
        self.wait_ready()

    def restart(self, *args: str) -> None:
        """End this TUI (its tmux server) and start ``codex [args]`` again, same HOME."""
        self.tmux.kill()
        self._started = False
        self.start(*args)

    def trust_folder(self) -> str:
        """Answer the folder-trust dialog of an untrusted project with its first option;
        the dialog as it was shown. Codex started again if it exits at the dialog."""
        for _ in range(STARTS):
            dialog = self.wait_for(lambda s: folder_trust_shown(s) or died(s), timeout=30)
            if not died(dialog) and self._press_until_gone("Enter", folder_trust_shown):
                return dialog
            self.restart(*self._args)
        raise TimeoutError(f"Codex exited at the folder trust {STARTS} times:\n{self.screen()}")

    def _press_until_gone(self, key: str, shown: Callable[[str], bool]) -> bool:
        """Press ``key`` until the dialog ``shown`` recognises is gone (True) or Codex exited
        (False). A key the input drain dropped changes nothing on screen, so pressing again
        after 3 s of the same dialog cannot answer the next one."""
        for _ in range(10):
            self.keys(key)
            try:
                after = self.wait_for(lambda s: not shown(s) or died(s), timeout=3)
            except TimeoutError:
                continue
            return not died(after)
        raise TimeoutError(f"the dialog took no {key}; screen:\n{self.screen()}")

    def screen(self) -> str:
        return self.tmux.capture(TARGET) if self._started else ""

    def wait_for(self, condition: str | Callable[[str], bool], timeout: float = 30.0) -> str:
        """Poll the screen until ``condition`` holds; the screen then. Once Codex's pane is
        dead (asked once a second), the screen ends with tmux's :data:`DEAD_LINE` even where
        tmux wrote none (see :func:`died`), so a condition watching for a death sees it."""
        check = condition if callable(condition) else (lambda screen: condition in screen)
        next_ask = time.monotonic() + 1.0

        def seen(screen: str) -> bool:
            nonlocal next_ask
            if check(screen) or DEAD_LINE in screen or time.monotonic() < next_ask:
                return check(screen)
            next_ask = time.monotonic() + 1.0
            return self._pane_dead() and check(screen + NO_DEAD_LINE)

        screen = self.tmux.wait_for(TARGET, seen, timeout)
        return screen if check(screen) else screen + NO_DEAD_LINE

    def _pane_dead(self) -> bool:
        asked = self.tmux.tmux("display-message", "-p", "-t", TARGET, "#{pane_dead}", check=False)
        return asked.strip() == "1"

    def keys(self, *keys: str) -> None:
        self.tmux.send_keys(TARGET, *keys)

    def trust_hooks(self) -> None:
        """Answer "Hooks need review" with "Trust all and continue" (its option 2). On 0.150
        the digit confirms it; on 0.171 the digit selects it and Enter confirms. Codex
        started again if it exits at the dialog (:data:`DRAIN_DEATH`)."""
        for _ in range(STARTS):
            if self._pick_trust_all():
                return
            self.restart(*self._args)
        raise TimeoutError(f"Codex exited at the hooks review {STARTS} times:\n{self.screen()}")

    def _pick_trust_all(self) -> bool:
        shown = self.wait_for(lambda s: (HOOKS_REVIEW in s and "confirm" in s) or died(s), 30)
        # Keys that arrive while Codex drains its input are dropped, footer shown or not: "2"
        # (which only ever picks option 2) goes again until the selection moved.
        moved = lambda s: HOOKS_REVIEW not in s or "› 2. Trust all" in s or died(s)  # noqa: E731
        for _ in range(10):
            if died(shown):
                return False
            self.keys("2")
            try:
                shown = self.wait_for(moved, timeout=2)
                break
            except TimeoutError:
                continue
        else:
            raise TimeoutError(f"the hooks review took no key; screen:\n{self.screen()}")
        if HOOKS_REVIEW in shown and not died(shown):
            self.keys("Enter")
        shown = self.wait_for(lambda s: HOOKS_REVIEW not in s or died(s), timeout=15)
        return not died(shown)

    def wait_ready(self, timeout: float = 30.0) -> str:
        """Wait until the input box is empty and no turn runs."""
        return self.wait_for(lambda s: input_box_empty(s) and BUSY_MARK not in s, timeout)

    def submit(self, text: str, timeout: float = 15.0) -> None:
        """Type ``text`` into the input box, wait for its echo, press Enter."""
        self.tmux.send_text(TARGET, text)
        self.wait_for(lambda s: input_box(s).endswith(text[-40:]), timeout)
        self.keys("Enter")

    # -- the end ---------------------------------------------------------------------------

    def leftover_pids(self) -> list[int]:
        """Processes that name this rig's CODEX_HOME on their command line (the app-server
        daemon, its pid-update-loop), whoever their parent."""
        marker = str(self.codex_home).encode()
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if marker in cmdline or b"CODEX_HOME=" + marker + b"\0" in environ:
                pids.append(int(entry.name))
        return pids

    def close(self, timeout: float = 10.0) -> None:
        """Kill the tmux server, then every process left with this CODEX_HOME (by PID), again
        until none is left: the pid-update-loop can start a daemon while the first are ended."""
        self.tmux.kill()
        deadline = time.monotonic() + timeout
        while (pids := self.leftover_pids()) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        # 0.171 copies itself there for its daemon: 424 MB per CODEX_HOME, a test's litter
        shutil.rmtree(self.codex_home / "packages", ignore_errors=True)

    def __enter__(self) -> CodexRig:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def input_box_empty(screen: str) -> bool:
    """Whether the input box shows its placeholder (nothing typed)."""
    return any(
        line.strip().startswith(INPUT_PROMPT) and "Ask Codex" in line
        for line in screen.splitlines()
    )


def died(screen: str) -> bool:
    """Whether Codex exited: at a trust dialog while draining its input (:data:`DRAIN_DEATH`),
    or its pane is dead (:data:`DEAD_LINE`), whatever it printed. tmux 3.3a can keep not a word
    of a program that exits within milliseconds: a stand-in printing the drain error and
    exiting left a blank dead pane 17 times in 400 under load (0 in 400 when it lived 0.2 s
    longer), and that blank screen once held a start for its whole minute."""
    return DRAIN_DEATH in screen or DEAD_LINE in screen


def input_box(screen: str) -> str:
    """What the input box holds: the last line that starts with its prompt mark (the turns
    above show earlier prompts the same way), without the mark."""
    boxes = [line.strip() for line in screen.splitlines() if line.strip().startswith(INPUT_PROMPT)]
    return boxes[-1][len(INPUT_PROMPT) :].strip() if boxes else ""


def folder_trust_shown(screen: str) -> bool:
    return any(option in screen for option in TRUST_FOLDER)
