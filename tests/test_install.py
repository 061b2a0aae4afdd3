"""``./install.sh`` for real, in a throwaway HOME: virtualenv, package from PyPI, hooks, config,
doctor; then once more to show that a second run changes nothing the user owns.

The checkout is copied to a temporary directory first so that pip's in-tree build
(``build/``, ``*.egg-info``) never touches the working tree. The doctor's Discord check goes to
the emulator (``DISCORD_BRIDGE_API_BASE``), never to discord.com.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridge.claude import settings as claude_settings
from bridge_testkit import hook_input
from discord_emulator import Emulator

REPO = Path(__file__).resolve().parents[1]
COPY_IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".cache",
    ".hypothesis",
    ".pytest_cache",
    ".ruff_cache",
    "__pycache__",
    "*.egg-info",
    "build",
    "dist",
)


def base_python() -> str:
    """The interpreter .venv was made from (a real one, not a pyenv shim or the venv)."""
    candidate = getattr(sys, "_base_executable", None)
    if candidate and os.access(candidate, os.X_OK) and candidate != sys.executable:
        return candidate
    found = shutil.which("python3")
    assert found, "python3 is required"
    return found


def install_env(tmp: Path, emu: Emulator) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DISCORD_BRIDGE_", "CLAUDE_", "XDG_"))
        and k not in {"VIRTUAL_ENV", "PYTHONPATH", "DBUS_SESSION_BUS_ADDRESS"}
    }
    xdg_runtime = tmp / "xdg-runtime"  # empty: no user service manager, as in a container
    xdg_runtime.mkdir(mode=0o700, exist_ok=True)
    tmux = shutil.which("tmux")
    assert tmux, "tmux is required (./scripts/test.sh installs it)"
    env.update(
        HOME=str(tmp),
        DISCORD_BRIDGE_HOME=str(tmp / ".discord-bridge"),
        DISCORD_BRIDGE_BIN_DIR=str(tmp / "bin"),
        DISCORD_BRIDGE_RUNTIME_DIR=str(tmp / "runtime"),
        DISCORD_BRIDGE_STATE_DIR=str(tmp / "state"),
        DISCORD_BRIDGE_API_BASE=emu.api_base,
        PYTHON=base_python(),
        PATH=os.pathsep.join(dict.fromkeys([os.path.dirname(tmux), "/usr/bin", "/bin"])),
        LANG="C.UTF-8",
        XDG_RUNTIME_DIR=str(xdg_runtime),
    )
    return env


def run_install(checkout: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["./install.sh", *args],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=400,
    )


@pytest.mark.timeout(900)
def test_install_sh_sets_everything_up_and_is_idempotent(
    tmp_path: Path, emulator: Emulator
) -> None:
    emulator.client.reset()
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO, checkout, ignore=COPY_IGNORE, symlinks=True)
    home = tmp_path / "home"
    home.mkdir()
    env = install_env(home, emulator)
    bridge_home = home / ".discord-bridge"
    config_file = bridge_home / "config.json"
    settings_file = home / ".claude" / "settings.json"
    venv_python = bridge_home / "venv" / "bin" / "python"

    started = time.monotonic()
    first = run_install(checkout, env)
    first_seconds = time.monotonic() - started
    output = first.stdout + first.stderr
    assert first.returncode == 0, output
    assert "project.license" not in output and "BuildBackendWarning" not in output, output

    # virtualenv with the package, and the command linked into the bin dir
    assert os.access(venv_python, os.X_OK), output
    link = home / "bin" / "discord-bridge"
    assert link.is_symlink() and os.readlink(link) == str(bridge_home / "venv/bin/discord-bridge")
    version = subprocess.run([str(link), "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.startswith("discord-bridge ")
    assert stat.S_IMODE(os.stat(bridge_home).st_mode) == 0o700
    # `try` works from the install: the emulator and its web client's files came along
    web = subprocess.run(
        [
            str(venv_python),
            "-c",
            "import discord_emulator.webclient as w; "
            "print(sorted(p.name for p in w.WEB_DIR.iterdir()))",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    page = ["client.css", "client.js", "composer.js", "index.html", "markdown.js", "threads.js"]
    assert web.stdout.strip() == str([*page, "welcome.js"]), web.stderr
    # ... and Discord's OpenAPI spec, which it holds request bodies to (with jsonschema)
    spec = subprocess.run(
        [
            str(venv_python),
            "-c",
            "from discord_emulator import contract; print(sorted(contract."
            "check('POST /channels/{channel_id}/messages', {'content': 1}).tree))",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert spec.stdout.strip() == "['content']", spec.stderr
    # ... and the fake Responses API Codex's demo and selftest round run on
    fake = subprocess.run(
        [str(venv_python), "-c", "from fake_openai import FakeOpenAI; print(FakeOpenAI.__name__)"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert fake.stdout.strip() == "FakeOpenAI", fake.stderr
    missing = subprocess.run(
        [str(link), "try", "--no-browser", str(home / "nowhere")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert missing.returncode == 2 and "does not exist" in missing.stderr, missing.stderr
    assert "discord-bridge try [PROJECT_DIR]" in first.stdout

    # the config, private and exactly the example
    assert config_file.read_bytes() == (REPO / "config.example.json").read_bytes()
    assert stat.S_IMODE(os.stat(config_file).st_mode) == 0o600

    # the hooks, calling the new virtualenv's interpreter
    installed = claude_settings.installed_events(str(settings_file))
    assert set(installed) == set(claude_settings.HOOKS)
    for command in installed.values():  # MessageDisplay's behind `nice -n 10`
        assert shlex.join(claude_settings.python_argv(command)[:2]) == f"{venv_python} -I", command

    # an installed hook runs: an event for no bridge session is a silent exit 0
    event = json.dumps(hook_input("Stop", cwd=home))
    hook = subprocess.run(
        installed["Stop"], shell=True, input=event, env=env, capture_output=True, text=True
    )
    assert (hook.returncode, hook.stdout) == (0, ""), hook.stderr

    # the doctor ran: what is done, then what is left as to-do lists (the example's
    # placeholders for `run`, never sent to Discord), and the last lines read as success
    assert "==> checking the set-up (discord-bridge doctor)" in first.stdout
    assert "✓ Python" in first.stdout and f"✓ hooks installed in {settings_file}" in first.stdout
    assert "before `discord-bridge run`" in first.stdout
    assert "  servers[0].discord.botToken: put your bot's token" in first.stdout
    assert "  servers[0].projects[0].projectPath: put the absolute path" in first.stdout
    assert "✗" not in first.stdout and "failed" not in first.stdout, first.stdout
    last = first.stdout.rstrip().splitlines()[-5:]
    assert "==> discord-bridge is installed." in last, last
    assert (
        "    next: discord-bridge try [PROJECT_DIR]   (a local Discord in your browser, "
        "before any bot)" in last
    )
    assert emulator.client.counters().get("401 GET /users/@me") is None
    # no terminal, no --service: the service is only mentioned
    assert "note: to start the bot at login/boot" in first.stdout
    assert not (home / ".config" / "systemd").exists()
    if shutil.which("claude", path=env["PATH"]) is None:  # said how to get it, not failed
        assert "note: Claude Code is not installed yet" in first.stdout
        assert (
            "before `discord-bridge try`:\n  □ install Claude Code: npm install -g "
            "@anthropic-ai/claude-code" in first.stdout
        )
        assert "    first: the to-do list above, before discord-bridge try" in last

    # `discord-bridge selftest`, as a user runs it from the installed command, with their own
    # claude on PATH (here: the pinned one), passes and leaves their set-up as it was
    assert "discord-bridge selftest (offline" in first.stdout
    before = snapshot(home)
    selftest, selftest_seconds = run_selftest(link, env)
    assert selftest.returncode == 0, selftest.stdout + selftest.stderr
    checks = [line for line in selftest.stdout.splitlines() if line[:1] in "✓✗"]
    assert len(checks) == 6 and all(line.startswith("✓") for line in checks), selftest.stdout
    assert "selftest: all checks passed" in selftest.stdout
    assert snapshot(home) == before  # config, hooks, Claude Code's HOME: untouched

    # --- a second run: the user's config and settings stay as they are ----------------------
    edited = config_file.read_text()
    for placeholder, value in {
        "PASTE-YOUR-BOT-TOKEN-HERE": "MY-REAL-TOKEN",
        "100000000000000001": emulator.ids["guild_id"],
        "100000000000000002": emulator.ids["alice"],
        "100000000000000003": emulator.ids["project-a"],
        "/home/you/code/my-project": str(home),
    }.items():
        assert placeholder in edited
        edited = edited.replace(placeholder, value)
    config_file.write_text(edited)
    settings_before = settings_file.read_bytes()
    with open(checkout / "hooks" / "stop.py", "a") as source:  # an update of the checkout
        source.write("# updated checkout\n")
    settings_mtime = os.stat(settings_file).st_mtime_ns

    started = time.monotonic()
    second = run_install(checkout, env, "--service")
    second_seconds = time.monotonic() - started
    assert second.returncode == 0, second.stdout + second.stderr
    assert "creating virtualenv" not in second.stdout
    assert "creating " + str(config_file) not in second.stdout
    assert "hooks already up to date" in second.stdout
    assert config_file.read_text() == edited
    assert stat.S_IMODE(os.stat(config_file).st_mode) == 0o600
    assert settings_file.read_bytes() == settings_before
    assert os.stat(settings_file).st_mtime_ns == settings_mtime
    assert not Path(str(settings_file) + ".discord-bridge.bak").exists()
    assert "==> checking the set-up (discord-bridge doctor)" in second.stdout
    assert "✗ main: bot token rejected" in second.stdout and "401" in second.stdout
    assert emulator.client.counters().get("401 GET /users/@me") == 1
    # --service: the unit runs the new virtualenv's interpreter with the config file
    unit = home / ".config" / "systemd" / "user" / "discord-bridge.service"
    assert "==> installing the login/boot service" in second.stdout, second.stdout
    assert f'"{venv_python}" "-m" "bridge.cli" "--config" "{config_file}" "run"' in (
        unit.read_text()
    )
    assert f"✓ service: installed ({unit})" in second.stdout
    argv = shlex.split(installed["Stop"], comments=True)
    stop_script = next(arg for arg in argv if arg.endswith("stop.py"))  # locations follow it
    assert Path(stop_script).read_text().endswith("# updated checkout\n")  # reinstalled

    print(
        f"install.sh: first run {first_seconds:.1f} s, second run {second_seconds:.1f} s; "
        f"selftest {selftest_seconds:.1f} s"
    )


def run_selftest(link: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    """The installed ``discord-bridge selftest`` with the pinned Claude Code first on PATH."""
    from fake_anthropic.claude_cli import claude_available, claude_binary

    if not claude_available():
        pytest.fail("Claude Code is missing (./scripts/test.sh installs it)")
    path = os.pathsep.join([os.path.dirname(claude_binary()), env["PATH"]])
    started = time.monotonic()
    done = subprocess.run(
        [str(link), "selftest"],
        env={**env, "PATH": path},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    return done, time.monotonic() - started


def snapshot(home: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``home`` but the virtualenv (Python caches its bytecode there):
    size and modification time."""
    venv = home / ".discord-bridge" / "venv"
    return {
        str(path.relative_to(home)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in home.rglob("*")
        if path.is_file() and venv not in path.parents
    }
