"""``discord-bridge doctor``: one line per check, ✓ or ✗ with the fix (! for a warning that
does not fail the run, · for a note). It checks the set-up; ``discord-bridge selftest`` runs
Claude Code with the bridge (``bridge/selftest.py``), which doctor points at."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable

from bridge import config, placeholders
from bridge.claude import settings as claude_settings
from bridge.claude import versions
from bridge.doctor_codex import hook_locations
from bridge.state import locations, runtime

SELFTEST = "discord-bridge selftest"
# What a HOME where Claude Code never ran shows offline (2.1.332)
FIRST_RUN_OFFLINE = "Unable to connect to Anthropic services"


class Report:
    """The checks' lines, as they run; then what is left to do, as a to-do list.

    A to-do is not a failure: a fresh install still holds the example config's placeholders
    and may not have Claude Code yet, and nothing is broken about that. What each command
    still needs is listed under it (``try`` needs Claude Code; ``run`` the config's values
    too), so the last lines say what to do next rather than how many checks "failed"."""

    def __init__(self) -> None:
        self.failures = 0
        self.todos: dict[str, list[str]] = {TRY: [], RUN: []}

    def ok(self, what: str) -> None:
        print(f"✓ {what}")

    def fail(self, what: str, fix: str) -> None:
        self.failures += 1
        print(f"✗ {what}\n    fix: {fix}")

    def warn(self, what: str, hint: str) -> None:
        """Worth knowing, but it does not fail the run."""
        print(f"! {what}\n    note: {hint}")

    def info(self, what: str) -> None:
        print(f"· {what}")

    def todo(self, what: str, before: str) -> None:
        """Something to do before ``before`` (:data:`TRY` or :data:`RUN`) works; what ``try``
        needs, ``run`` needs too."""
        self.todos[before].append(what)

    def summary(self) -> int:
        """The to-do lists and the closing line; the exit status: 0 all done, 1 a check
        failed, 3 ready for ``try`` with to-dos left for ``run`` (a fresh install with Claude
        Code set up), 4 to-dos left before ``try``."""
        needs_try, needs_run = self.todos[TRY], self.todos[RUN]
        if needs_try:
            print("\nbefore `discord-bridge try`:")
            print("".join(f"  □ {what}\n" for what in needs_try), end="")
        if needs_run:
            print(f"\nbefore `discord-bridge run`{' (and the above)' if needs_try else ''}:")
            print("".join(f"  □ {what}\n" for what in needs_run), end="")
        if self.failures:
            print(f"\n{self.failures} check(s) failed: fix them as shown above")
            return 1
        if needs_try or needs_run:
            ready = "" if needs_try else "ready for `discord-bridge try`; "
            left = len(needs_try) + len(needs_run)
            print(f"\nset-up done; {ready}{left} thing(s) to do (above)")
            return 4 if needs_try else 3
        print("all checks passed")
        return 0


TRY = "try"
RUN = "run"


def run_checks(config_path: str | None = None) -> int:
    """Every check, one line each, then the to-do lists; the exit status of
    :meth:`Report.summary`."""
    report = Report()
    check_python(report)
    check_tmux(report)
    cfg, has_placeholders = check_config(report, config_path or runtime.config_path())
    check_claude(report, cfg)
    if cfg is not None:
        check_voice(report, cfg)
    if cfg is not None and not has_placeholders:  # no network call with an example token
        check_discord(report, cfg)
    check_hooks(report)
    if cfg is not None:
        check_codex(report, cfg)
    check_runtime(report)
    check_service(report, config_path or runtime.config_path())
    report.info(f"{SELFTEST}: Claude Code with this bridge, end to end, offline (about 15 s)")
    return report.summary()


def check_python(report: Report) -> None:
    # The package cannot even be installed on an older Python (requires-python), so this
    # check only reports which interpreter the hooks will run with.
    version = ".".join(map(str, sys.version_info[:3]))
    report.ok(f"Python {version} ({sys.executable})")


def check_tmux(report: Report) -> None:
    tmux = shutil.which("tmux")
    if not tmux:
        report.fail("tmux not found", "install tmux 3.0 or newer (apt-get install tmux)")
        return
    out = subprocess.run([tmux, "-V"], capture_output=True, text=True).stdout.strip()
    match = re.search(r"(\d+)\.(\d+)", out)
    if match and (int(match[1]), int(match[2])) >= (3, 0):
        report.ok(out)
    else:
        report.fail(f"{out or 'tmux'} is too old", "install tmux 3.0 or newer")


def check_config(report: Report, path: str) -> tuple[config.BridgeConfig | None, bool]:
    """The loaded config (None if unusable), and whether it holds example placeholders."""
    found = placeholders.find_in_file(path)
    if found:  # the example config: no network check until its values are replaced
        values = "".join(f"\n      {where}: put {what}" for where, what in found)
        report.todo(f"replace the example's values in {path}:{values}", RUN)
    try:
        cfg = config.load(path)
    except config.ConfigError as err:
        report.fail(f"config {path}", "\n    ".join(err.problems))
        return None, bool(found)
    report.ok(f"config {path}: {len(cfg.servers)} server(s), {len(cfg.projects())} project(s)")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        report.fail(f"config mode is {oct(mode)}: it holds bot tokens", f"chmod 600 {path}")
    else:
        report.ok("config mode 0600")
    for i, project in enumerate(cfg.projects()):
        if not os.path.isdir(project.path) and not placeholders.is_placeholder_path(project.path):
            where = _project_where(cfg, project) or f"projects[{i}]"
            report.fail(
                f"project {project.name}: {project.path} does not exist",
                f"create the directory (mkdir -p {project.path}), or set {where}.projectPath "
                f"in {path} to the project's existing directory",
            )
    return cfg, bool(found)


def _project_where(cfg: config.BridgeConfig, project: config.Project) -> str:
    for i, server in enumerate(cfg.servers):
        for j, candidate in enumerate(server.projects):
            if candidate is project:
                return f"servers[{i}].projects[{j}]"
    return ""


def check_claude(report: Report, cfg: config.BridgeConfig | None) -> None:
    commands = {p.claude_command for p in cfg.projects()} if cfg else {"claude"}
    found = False
    for command in sorted(commands):
        path = shutil.which(command)
        if not path:
            report.info(f"Claude Code: `{command}` is not installed (not on PATH)")
            report.todo(
                f"install Claude Code: npm install -g @anthropic-ai/claude-code, then "
                f"run `{command}` once in a terminal to log in",
                TRY,
            )
            continue
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as err:
            report.fail(f"{command} --version failed: {err}", "reinstall Claude Code")
            continue
        check_claude_version(report, command, out.stdout.strip() or out.stderr.strip())
        check_claude_login(report, command, path)
        found = True
    if found:  # else installing it is the to-do, its first run included
        check_claude_first_run(report)


def check_claude_version(report: Report, command: str, printed: str) -> None:
    """``claude --version``'s output against the tested range: outside it is a warning."""
    tested = f"{versions.OLDEST} to {versions.PINNED}"
    version = versions.parse(printed)
    if version is None:
        what = f"{command}: cannot read a version from {printed[:80]!r}"
        report.warn(what, f"the bridge is tested with Claude Code {tested}")
    elif versions.in_tested_range(version):
        report.ok(f"{command}: {printed} (tested range {tested})")
    elif version > (versions.parse(versions.PINNED) or ()):
        # Claude Code ships every few days: a newer one is the usual case, not a fault.
        report.info(
            f"{command}: {printed}, newer than the tested {tested}: run `{SELFTEST}` "
            "to check this version with the bridge"
        )
    else:
        what = f"{command}: {printed} is older than the tested range"
        hint = (
            f"the bridge is tested with Claude Code {tested}; if prompts, /mode or /status "
            f"misbehave, install one of those (npm install -g @anthropic-ai/claude-code@"
            f"{versions.PINNED})"
        )
        report.warn(what, hint)


def check_claude_login(report: Report, command: str, path: str) -> None:
    """``claude auth status`` (JSON, offline, ~0.4 s; 2.1.197 and 2.1.332): not logged in,
    Claude Code starts, and each prompt from Discord fails with "Not logged in · Please run
    /login". Only a warning: the bot's environment may hold a key this
    shell does not, or the other way round."""
    try:
        out = subprocess.run(
            [path, "auth", "status"],
            capture_output=True,
            text=True,
            timeout=20,
            stdin=subprocess.DEVNULL,
        )
        status = json.loads(out.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return  # a CLI without the command: nothing to say
    if not isinstance(status, dict) or "loggedIn" not in status:
        return
    if status["loggedIn"]:
        how = status.get("apiKeySource") or status.get("authMethod") or "logged in"
        report.ok(f"{command}: logged in ({how})")
        return
    report.warn(
        f"{command} is not logged in: each prompt from Discord would stop at "
        '"Not logged in · Please run /login"',
        "run `claude` in a terminal as this user and /login, or give the bot "
        "ANTHROPIC_API_KEY (the service takes only PATH and the locale from your shell)",
    )
    report.todo(f"log Claude Code in: run `{command}` in a terminal and /login", TRY)


def check_claude_first_run(report: Report) -> None:
    """A HOME where Claude Code never finished its first run (no ``hasCompletedOnboarding``
    in ``~/.claude.json``): a session the bot starts opens on the first-run screens, and on a
    machine that cannot reach Anthropic it exits at once with "Unable to connect to Anthropic
    services … ENOTFOUND" (2.1.332, measured)."""
    path = os.path.join(os.path.expanduser("~"), ".claude.json")
    try:
        with open(path, encoding="utf-8") as handle:
            done = json.load(handle).get("hasCompletedOnboarding") is True
    except (OSError, ValueError, AttributeError):
        done = False
    if done:
        report.ok("Claude Code: its first run is done for this user")
        return
    report.todo("finish Claude Code's first run: run `claude` once in a terminal", TRY)
    report.warn(
        f"Claude Code has not finished its first run for this user ({path}): a session "
        f"started from Discord opens on its first-run screens, or, offline, stops at "
        f'"{FIRST_RUN_OFFLINE}"',
        "run `claude` once in a terminal as this user (pick a theme, log in)",
    )


def check_voice(report: Report, cfg: config.BridgeConfig) -> None:
    """The voice-message engine: installed? its model downloaded? Never a failure: the
    bridge works without it (a voice message then gets a reply saying how to enable it)."""
    from bridge.voice import status

    level, what, hint = status.check(cfg.voice)
    if level == status.OK:
        report.ok(what)
    elif level == status.WARN:
        report.warn(what, hint)
    else:
        report.info(f"{what}; {hint}")


def check_discord(report: Report, cfg: config.BridgeConfig) -> None:
    from bridge.discord.post import DeliveryError
    from bridge.discord.rest import DiscordREST

    for server in cfg.servers:
        with DiscordREST(server.api_base, server.token, budget=5.0) as rest:
            try:
                me = rest.get("/users/@me")
            except DeliveryError as err:
                what = f"{server.name}: bot token rejected or Discord unreachable ({err})"
                report.fail(what, "copy the token from the Developer Portal (Bot → Reset Token)")
                continue
            report.ok(f"{server.name}: logged in as {me.get('username')} ({me.get('id')})")
            for project in server.projects:
                try:
                    rest.get(f"/channels/{project.channel_id}")
                    report.ok(f"{server.name}: channel of {project.name} is visible")
                except DeliveryError:
                    what = f"{server.name}: cannot see #{project.channel_id} ({project.name})"
                    report.fail(what, "invite the bot and give it View Channel there")


def check_hooks(report: Report) -> None:
    path = claude_settings.default_settings_path()
    try:
        found = claude_settings.installed_events(path)
    except ValueError as err:
        report.fail(str(err), f"fix {path}")
        return
    missing = [event for event in claude_settings.HOOKS if event not in found]
    if missing:
        what = f"hooks missing in {path}: {', '.join(missing)}"
        report.fail(what, "discord-bridge hooks install")
    elif gone := _scripts_gone(found.values()):
        what = (
            f"the hooks in {path} run {gone[0]}, which is gone"
            " (an upgrade moved the bridge's hook scripts)"
        )
        report.fail(what, "discord-bridge hooks install (or ./install.sh again)")
    elif hook_locations(found["Stop"]) != locations.hook_args():
        what = (
            f"the hooks in {path} were installed for another bridge home or runtime dir "
            f"({' '.join(hook_locations(found['Stop'])) or 'the defaults'})"
        )
        report.fail(what, "discord-bridge hooks install (with the same DISCORD_BRIDGE_* variables)")
    elif _prompt_timeout_too_short(path):
        what = "the PermissionRequest hook's timeout is not above prompts.timeoutSeconds"
        report.fail(what, "discord-bridge hooks install (again, after changing the timeout)")
    else:
        report.ok(f"hooks installed in {path}")


def check_codex(report: Report, cfg: config.BridgeConfig) -> None:
    """Codex's checks (``bridge.doctor_codex``), for the projects whose agent it is."""
    from bridge import doctor_codex

    commands = {p.codex_command for p in cfg.projects() if p.agent == "codex"}
    doctor_codex.check_codex(report, commands)


def _scripts_gone(commands: Iterable[str]) -> list[str]:
    """The hook scripts that installed commands run but that are no longer there: an install
    of an older bridge kept its scripts in a top-level ``hooks`` package, now ``bridge.hooks``."""
    gone = []
    for command in commands:
        try:
            argv = claude_settings.python_argv(command)
        except ValueError:  # not a command line shlex can read: not one the bridge wrote
            continue
        script = next((arg for arg in argv if arg.endswith(".py")), "")
        if script and not os.path.exists(script):
            gone.append(script)
    return gone


def _prompt_timeout_too_short(path: str) -> bool:
    """Claude Code would kill the waiting hook before its own timeout outcome."""
    entry = claude_settings.installed_entries(path).get("PermissionRequest") or {}
    timeout = entry.get("timeout")
    return not isinstance(timeout, int | float) or timeout < claude_settings.prompt_hook_timeout()


def check_runtime(report: Report) -> None:
    try:
        rt = runtime.Runtime().ensure()
    except (runtime.UnsafeRuntimeDir, OSError) as err:
        report.fail(
            f"runtime/state dir: {err}",
            "remove it, or set DISCORD_BRIDGE_RUNTIME_DIR / DISCORD_BRIDGE_STATE_DIR",
        )
        return
    report.ok(f"runtime dir {rt.root} (volatile) and state dir {rt.state_root} are private")


def check_service(report: Report, config_file: str) -> None:
    from bridge import service

    try:
        healthy, lines = service.describe(service.status(service.config_file(config_file)))
    except OSError as err:
        report.fail(f"service: {err}", "discord-bridge service install")
        return
    what = "\n    ".join(lines)
    if not healthy:
        report.fail(what, "as shown above, or run: discord-bridge service install")
    elif lines[0].startswith("service: not installed"):
        report.info(what)
    else:
        report.ok(what)
