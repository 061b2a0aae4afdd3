"""``discord-bridge selftest``: your own Claude Code, driven end to end through the bridge, offline.

What a user runs after upgrading Claude Code or the bridge. In a throwaway directory (a HOME,
a project, the bridge's home, runtime and state dirs) and a private tmux server it starts the
fake Messages API (``fake_anthropic``) and the Discord emulator (``discord_emulator``, as
``try`` does), writes a config for them (``tryout.write_config``), installs the bridge's hooks
into the throwaway HOME, runs the bot as ``discord-bridge run`` would, and then acts as the
owner would on Discord: a message typed, the reply posted, a permission prompt allowed, a
question answered, a turn interrupted with ⏹. When a project of the config runs Codex (or
``--codex`` names one), a Codex round follows on a set-up of its own
(:mod:`bridge.selftest_codex`: a private CODEX_HOME on the fake Responses API): its hooks
review trusted from Discord, a reply posted by its Stop hook, a command allowed. One line per
check, ✓ or ✗ with what failed and what to do; exit 0 when all pass.

Nothing of the user's set-up is read or written but the ``claudeCommand`` and ``codexCommand``
of their config (which ``claude`` and ``codex`` to check): not their Claude Code HOME or
``~/.codex``, sessions or settings, not their bridge config or runtime, not Discord, not the
network (Claude Code talks to the fake API on loopback, with telemetry and updates off; Codex
to the fake Responses API, its only model provider, with its update check off). The
throwaway directory is removed when every check
passed, kept (and named) otherwise.

Here: the run and its report, and finding the Claude Code and tmux to check; the set-up is
:mod:`bridge.selftest_bench`'s, the checks :mod:`bridge.selftest_checks`'.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bridge import doctor, doctor_codex
from bridge.claude import start_failure, versions
from bridge.selftest_bench import Bench, CheckFailed
from bridge.selftest_checks import CHECKS
from bridge.selftest_codex import CODEX_CHECKS, CodexBench


@dataclass
class Options:
    claude: str | None = None  # the command to check (default: the config's claudeCommand)
    config_path: str | None = None  # the user's config, read for claudeCommand only
    keep: bool = False  # keep the throwaway directory even when everything passed
    codex: str | None = None  # the Codex to check (default: the config's codexCommand, if any)


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
    if not find_tmux(report):
        return finish(report, [], opts)
    benches: list[Bench] = []
    if only_codex(opts):
        report.info(
            "Claude Code: every project of your config runs Codex, so no Claude Code round "
            "(`--claude COMMAND` runs one)"
        )
    elif (found := find_claude(report, opts)) is not None:
        run_round(report, Bench, found, CHECKS, benches)
    codex = codex_command(opts)
    if codex is None:
        report.info(
            "Codex: no project of your config uses it, so no Codex round "
            "(`--codex COMMAND` runs one)"
        )
    elif (found_codex := doctor_codex.find_codex(report, *codex, private=True)) is not None:
        run_round(report, CodexBench, found_codex, CODEX_CHECKS, benches)
        report.info(
            "Codex ran with a private CODEX_HOME: your own login, config and hooks.json "
            "are `discord-bridge doctor`'s to check"
        )
    about_your_own_setup(report, claude=not only_codex(opts))
    return finish(report, benches, opts)


def run_round(
    report: Report,
    kind: type[Bench],
    found: tuple[str, str],
    checks: tuple[Callable[[Bench], str], ...],
    benches: list[Bench],
) -> None:
    """One agent's round: its bench started (the emulator, its fake model API, the bot, the
    agent in a private tmux server), its checks in order until one fails, all stopped."""
    try:
        from discord_emulator import Emulator

        api_class = model_api(kind)
    except ImportError as err:
        report.fail(
            f"the selftest's parts are not installed ({err.name})",
            "run ./install.sh again (it installs packages/discord-emulator, "
            "packages/fake-anthropic and packages/fake-openai next to the bridge)",
        )
        return
    bench = kind(Path(tempfile.mkdtemp(prefix="discord-bridge-selftest-")), *found)
    benches.append(bench)
    try:
        bench.start(Emulator, api_class)
        for check in checks:
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


def model_api(kind: type[Bench]) -> type:
    """The fake model API an agent's bench runs on (an ImportError when not installed)."""
    if issubclass(kind, CodexBench):
        from fake_openai import FakeOpenAI

        return FakeOpenAI
    from fake_anthropic import FakeAnthropic

    return FakeAnthropic


def about_your_own_setup(report: Report, claude: bool = True) -> None:
    """This ran Claude Code with a throwaway HOME and login; the user's own first run is read
    (never written) from ~/.claude.json, their login is doctor's to ask."""
    if not claude:
        return
    doctor.check_claude_first_run(report)
    report.info("your own Claude Code login is not used here: `discord-bridge doctor` checks it")


def remove_tree(root: Path, patience: float = 5.0) -> bool:
    """Remove the throwaway set-up, again while something still writes there: an agent the
    closed tmux server just hung up on can still be writing its session files (a fresh-clone
    CI run once found the set-up left behind after a Codex round). Whether it is gone."""
    deadline = time.monotonic() + patience
    while True:
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists() or time.monotonic() >= deadline:
            return not root.exists()
        time.sleep(0.2)


def finish(report: Report, benches: list[Bench], opts: Options) -> int:
    took = time.monotonic() - report.started
    for bench in benches:
        if report.failures or opts.keep:
            report.info(f"kept for a look: {bench.root} (bot.log, state/logs/hooks.log)")
        else:
            remove_tree(bench.root)
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


def only_codex(opts: Options) -> bool:
    """Every project of the user's config runs Codex (and no ``--claude`` asks for Claude
    Code): a Codex-only set-up needs no Claude Code installed."""
    if opts.claude:
        return False
    from bridge import config
    from bridge.state import runtime

    try:
        projects = config.load(opts.config_path or runtime.config_path()).projects()
    except (config.ConfigError, OSError):
        return False
    return bool(projects) and all(p.agent == "codex" for p in projects)


def codex_command(opts: Options) -> tuple[str, str] | None:
    """The Codex to run a round with, and where it came from: ``--codex``, else the
    ``codexCommand`` of the config's projects on Codex; None when none uses it."""
    if opts.codex:
        return opts.codex, "--codex"
    from bridge import config
    from bridge.state import runtime

    path = opts.config_path or runtime.config_path()
    try:
        projects = config.load(path).projects()
    except (config.ConfigError, OSError):
        return None
    commands = sorted({p.codex_command for p in projects if p.agent == "codex"})
    return (commands[0], f"codexCommand in {path}") if commands else None


def find_tmux(report: Report) -> bool:
    if shutil.which("tmux") is None:
        report.fail("tmux not found", "install tmux 3.0 or newer (apt-get install tmux)")
        return False
    return True
