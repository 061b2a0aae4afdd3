"""What ``doctor`` checks of Codex, for a config with a project on ``"agent": "codex"``.

Its command found and its version against the tested range (outside it: a warning, not a
failure: Codex ships often), hooks switched on in its config (``codex features list``: a
``hooks`` row, ``codex_hooks`` before 0.130; measured in docs/codex.md), and the bridge's
entries in its hooks.json. :func:`find_codex` is what ``try --agent codex`` and ``selftest``
start from too: the command found and its ``--version`` line, or a failure saying what to do.
Every command here is the user's own ``codexCommand`` run with fixed arguments, offline.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Protocol

from bridge.codex import hooks_file, versions
from bridge.state import locations

TIMEOUT = 20  # seconds for `codex --version` / `codex features list`
HOOK_FEATURES = ("hooks", "codex_hooks")  # the feature's name from 0.130, and before


class Report(Protocol):
    def ok(self, what: str) -> None: ...
    def fail(self, what: str, fix: str) -> None: ...
    def warn(self, what: str, hint: str) -> None: ...
    def info(self, what: str) -> None: ...


def install_hint() -> str:
    return f"npm install -g {versions.NPM_PACKAGE}@{versions.PINNED}"


def find_codex(
    report: Report, command: str, where: str = "on PATH", private: bool = False
) -> tuple[str, str] | None:
    """``command``'s path and ``--version`` line, its version's verdict reported; None (and
    a failure) when it is not installed or prints no version. ``private``: run it with a
    throwaway CODEX_HOME (any run of Codex, ``--version`` too, writes helper links into its
    CODEX_HOME's ``tmp/``): the demo and the selftest leave the user's untouched."""
    path = shutil.which(command)
    if path is None:
        report.fail(
            f"Codex: `{command}` ({where}) is not installed (not on PATH)",
            f"{install_hint()}, or set codexCommand to the codex to run",
        )
        return None
    printed = _run_private(path, "--version") if private else _run(path, "--version")
    if printed is None:
        report.fail(f"Codex: `{path} --version` failed", f"reinstall Codex ({install_hint()})")
        return None
    line = (printed.strip().splitlines() or [""])[0]
    version = versions.parse(line)
    if version is None:
        report.fail(
            f"Codex: `{path} --version` printed {line[:80]!r}, not a version",
            f"check that {path} is OpenAI's Codex CLI ({install_hint()})",
        )
        return None
    report_version(report, path, line, version)
    return path, line


def report_version(report: Report, path: str, line: str, version: tuple[int, ...]) -> None:
    tested = f"{versions.OLDEST} to {versions.PINNED}"
    if versions.in_tested_range(version):
        report.ok(f"Codex: {line} at {path} (tested range {tested})")
    elif version > (versions.parse(f"codex-cli {versions.PINNED}") or ()):
        report.warn(
            f"Codex: {line} at {path} is newer than the tested {tested}",
            "`discord-bridge selftest` runs it through the bridge: see that it passes",
        )
    else:
        report.warn(
            f"Codex: {line} at {path} is older than the tested {tested}",
            f"if hooks or prompts misbehave, install a tested one ({install_hint()})",
        )


def hooks_enabled(path: str) -> bool | None:
    """Whether ``codex features list`` shows hooks on (None: it does not say)."""
    listed = _run(path, "features", "list")
    for row in (listed or "").splitlines():
        words = row.split()
        if len(words) >= 3 and words[0] in HOOK_FEATURES:
            return {"true": True, "false": False}.get(words[-1])
    return None


def check_hooks_enabled(report: Report, path: str) -> None:
    enabled = hooks_enabled(path)
    if enabled:
        report.ok(f"Codex: hooks are on ({path} features list)")
    elif enabled is False:
        report.fail(
            "Codex: hooks are off in its config: no reply or prompt would reach Discord",
            f"{path} features enable hooks",
        )
    else:
        report.warn(
            f"Codex: `{path} features list` does not say whether hooks are on",
            f"the bridge needs them (Codex {versions.OLDEST} or newer has them on by default)",
        )


def check_codex(report: Report, commands: set[str]) -> None:
    """For the projects' ``codexCommand``s: each found, its version, hooks on; then the
    bridge's entries in Codex's hooks.json. Nothing when no project uses Codex."""
    if not commands:
        return
    for command in sorted(commands):
        found = find_codex(report, command, "codexCommand")
        if found is not None:
            check_hooks_enabled(report, found[0])
    hooks = hooks_file.default_hooks_path()
    try:
        installed = hooks_file.installed_events(hooks)
    except ValueError as err:
        report.fail(str(err), f"fix {hooks}")
        return
    missing = [event for event in hooks_file.EVENTS if event not in installed]
    if missing:
        report.fail(
            f"Codex hooks missing in {hooks}: {', '.join(missing)}",
            "discord-bridge hooks install (then trust them in Codex's "
            '"Hooks need review" screen, offered in the channel)',
        )
    elif hook_locations(installed["Stop"]) != locations.hook_args():
        report.fail(
            f"the Codex hooks in {hooks} were installed for another bridge home or runtime dir "
            f"({' '.join(hook_locations(installed['Stop'])) or 'the defaults'})",
            "discord-bridge hooks install (with the same DISCORD_BRIDGE_* variables; Codex "
            "then asks to review the changed hooks once)",
        )
    else:
        report.ok(f"Codex hooks installed in {hooks}")


def hook_locations(command: str) -> list[str]:
    """The ``--home`` / ``--runtime-dir`` arguments on an installed hook command (Claude
    Code's or Codex's: the same commands)."""
    import shlex

    try:
        argv = shlex.split(command, comments=True)
    except ValueError:
        return []
    found: list[str] = []
    for flag, _ in locations.HOOK_FLAGS:
        if flag in argv[:-1]:
            found += [flag, argv[argv.index(flag) + 1]]
    return found


def _run_private(path: str, *args: str) -> str | None:
    import os
    import tempfile

    with tempfile.TemporaryDirectory(prefix="discord-bridge-codex-") as home:
        return _run(path, *args, env={**os.environ, "CODEX_HOME": home})


def _run(path: str, *args: str, env: dict[str, str] | None = None) -> str | None:
    try:
        done = subprocess.run(
            [path, *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.stdout.strip() else done.stderr
