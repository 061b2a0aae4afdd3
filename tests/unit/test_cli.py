"""The command line and the hook entry points, run as real subprocesses.

``discord-bridge run`` refuses a bad config with exit 2 and the JSON path; hook scripts never
fail (exit 0, nothing on stdout) and log what went wrong; ``doctor`` checks a set-up against
the Discord emulator and says how to fix each failure.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.claude import settings as claude_settings
from bridge.claude import versions
from bridge.state import locations
from bridge_testkit import hook_input
from discord_emulator import Emulator
from fake_anthropic.claude_cli import ClaudeNotInstalled, claude_available, claude_binary

REPO = Path(__file__).resolve().parents[2]
STOP_HOOK = REPO / "hooks" / "stop.py"
SESSION_START_HOOK = REPO / "hooks" / "session_start.py"


class Setup:
    """A throwaway HOME, bridge home and runtime dir, and the env a user's shell would have."""

    def __init__(self, tmp: Path, emu: Emulator) -> None:
        self.tmp = tmp
        self.emu = emu
        self.home = tmp / "home"
        self.bridge_home = self.home / ".discord-bridge"
        self.runtime = tmp / "runtime"
        self.project = tmp / "project-a"
        self.config_file = self.bridge_home / "config.json"
        self.settings = self.home / ".claude" / "settings.json"
        self.home.mkdir()
        # Claude Code has run here before (doctor says when it has not)
        (self.home / ".claude.json").write_text('{"hasCompletedOnboarding": true}')
        self.bridge_home.mkdir(mode=0o700)
        self.project.mkdir()
        tmux = shutil.which("tmux")
        assert tmux, "tmux is required (./scripts/test.sh installs it)"
        path = [self._claude_dir(), os.path.dirname(tmux), "/usr/bin", "/bin"]
        self.env = {
            "PATH": os.pathsep.join(dict.fromkeys(path)),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "DISCORD_BRIDGE_HOME": str(self.bridge_home),
            "DISCORD_BRIDGE_RUNTIME_DIR": str(self.runtime),
            "DISCORD_BRIDGE_STATE_DIR": str(self.runtime),  # one folder for both, as before
            "DISCORD_BRIDGE_RETRY_SECONDS": "2",
            "ANTHROPIC_API_KEY": "sk-test",  # logged in, as far as `claude auth status` can tell
        }

    def _claude_dir(self) -> str:
        try:
            return os.path.dirname(claude_binary())
        except ClaudeNotInstalled:
            fake = self.tmp / "fake-bin"
            fake.mkdir()
            script = fake / "claude"
            script.write_text("#!/bin/sh\necho '2.1.330 (Claude Code)'\n")
            script.chmod(0o755)
            return str(fake)

    def config(self, token: str | None = None, channel: str | None = None) -> dict:
        return {
            "schemaVersion": 2,
            "servers": [
                {
                    "name": "main",
                    "discord": {
                        "botToken": token or self.emu.bot_token,
                        "ownerUserId": self.emu.ids["alice"],
                        "apiBaseUrl": self.emu.api_base,
                    },
                    "projects": [
                        {
                            "name": "project-a",
                            "channelId": channel or self.emu.ids["project-a"],
                            "projectPath": str(self.project),
                        }
                    ],
                }
            ],
        }

    def write_config(self, raw: dict | str, mode: int = 0o600) -> None:
        text = raw if isinstance(raw, str) else json.dumps(raw, indent=2)
        self.config_file.write_text(text)
        self.config_file.chmod(mode)

    def cli(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bridge.cli", *args],
            env=self.env,
            cwd=self.tmp,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def hook(
        self, script: Path, stdin: str | bytes, **env: str
    ) -> subprocess.CompletedProcess[bytes]:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        env = {**self.env, **env}
        # As `hooks install` writes them: a hook takes its locations from its command line.
        return subprocess.run(
            [sys.executable, "-I", str(script), *locations.hook_args(env)],
            input=data,
            env=env,
            cwd=self.project,
            capture_output=True,
            timeout=30,
        )

    def hook_log(self) -> str:
        path = self.runtime / "logs" / "hooks.log"
        return path.read_text() if path.exists() else ""

    def install_hooks(self) -> None:
        done = self.cli("hooks", "install", "--settings", str(self.settings))
        assert done.returncode == 0, done.stderr


@pytest.fixture
def setup(tmp_path: Path, emu: Emulator) -> Setup:
    return Setup(tmp_path, emu)


def stop_event(setup: Setup, text: str = "Done.") -> str:
    event = hook_input(
        "Stop",
        session_id="3f0c1c9e-0000-4000-8000-000000000001",
        transcript_path=setup.tmp / "transcript.jsonl",
        cwd=setup.project,
        last_assistant_message=text,
    )
    return json.dumps(event)


# --- discord-bridge run -----------------------------------------------------------------


def test_run_with_a_bad_config_exits_2_naming_the_json_path(setup: Setup) -> None:
    raw = setup.config()
    raw["servers"][0]["projects"][0]["channelId"] = "project-a"  # not a snowflake
    setup.write_config(raw)
    done = setup.cli("run")
    assert done.returncode == 2, done.stderr
    assert "servers[0].projects[0].channelId" in done.stderr
    assert "snowflake" in done.stderr
    assert str(setup.config_file) in done.stderr
    assert "Traceback" not in done.stderr


def test_run_with_an_explicit_config_that_is_not_json(setup: Setup) -> None:
    other = setup.tmp / "other.json"
    other.write_text('{"schemaVersion": 2, "servers": [')  # cut off where a value is due
    done = setup.cli("--config", str(other), "run")
    assert done.returncode == 2, done.stderr
    assert "not valid JSON" in done.stderr and str(other) in done.stderr


# Regression: CPython 3.11's _json scanner used to surface these as SystemError in fastjson.
@pytest.mark.parametrize(
    "text",
    ['{"schemaVersion": 2, "servers": []', '{"schemaVersion": 2 "servers": []}'],
    ids=["missing-brace", "missing-comma"],
)
def test_run_with_a_config_with_a_json_syntax_error_exits_2(setup: Setup, text: str) -> None:
    setup.write_config(text)
    done = setup.cli("run")
    assert "SystemError" not in done.stderr
    assert done.returncode == 2, done.stderr
    assert "not valid JSON" in done.stderr and str(setup.config_file) in done.stderr


def test_run_without_a_config_exits_2_with_a_hint(setup: Setup) -> None:
    done = setup.cli("run")
    assert done.returncode == 2
    assert "file not found" in done.stderr
    assert "config.example.json" in done.stderr and "install.sh" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_refuses_a_runtime_dir_others_can_read(setup: Setup) -> None:
    setup.write_config(setup.config())
    setup.runtime.mkdir(mode=0o755)
    setup.runtime.chmod(0o755)
    done = setup.cli("run")
    assert done.returncode == 2, done.stderr
    assert "runtime directory refused" in done.stderr
    assert f"chmod 700 {setup.runtime}" in done.stderr
    assert setup.emu.client.counters() == {}  # refused before contacting Discord


def test_run_without_the_message_content_intent_says_which_switch(setup: Setup) -> None:
    raw = setup.config()
    raw["servers"][0]["discord"]["gatewayUrl"] = setup.emu.gateway_url
    setup.write_config(raw)
    setup.emu.client.settings(privileged_intents=0)  # the Developer Portal's switches all off
    setup.env["DISCORD_BRIDGE_TMUX_SOCKET"] = f"intents-{os.getpid()}"
    try:
        done = setup.cli("run", timeout=60)
    finally:
        subprocess.run(
            ["tmux", "-L", setup.env["DISCORD_BRIDGE_TMUX_SOCKET"], "kill-server"],
            capture_output=True,
        )
    assert done.returncode == 1, done.stderr
    assert "enable the Message Content Intent for the bot in the Developer Portal" in done.stderr
    assert "Traceback" not in done.stderr


def test_version_and_usage(setup: Setup) -> None:
    done = setup.cli("--version")
    assert done.returncode == 0 and done.stdout.startswith("discord-bridge ")
    assert setup.cli().returncode == 2  # a command is required


# --- hook entry points ------------------------------------------------------------------


def test_stop_hook_with_an_invalid_config_exits_0_and_logs(setup: Setup) -> None:
    raw = setup.config()
    raw["servers"][0]["discord"]["ownerUserId"] = 42  # not a snowflake string
    setup.write_config(raw)
    done = setup.hook(
        STOP_HOOK, stop_event(setup), DISCORD_BRIDGE_CHANNEL_ID=setup.emu.ids["project-a"]
    )
    assert done.returncode == 0
    assert done.stdout == b""
    log = setup.hook_log()
    assert "ConfigError" in log and "servers[0].discord.ownerUserId" in log
    assert stat.S_IMODE(os.stat(setup.runtime / "logs" / "hooks.log").st_mode) == 0o600
    assert setup.emu.client.messages(setup.emu.ids["project-a"]) == []


def test_stop_hook_with_malformed_stdin_exits_0_and_logs(setup: Setup) -> None:
    setup.write_config(setup.config())
    channel = setup.emu.ids["project-a"]
    done = setup.hook(STOP_HOOK, b'{"hook_event_name": "Stop", ', DISCORD_BRIDGE_CHANNEL_ID=channel)
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    log = setup.hook_log()
    assert "stop.py" in log and "Traceback" in log
    assert setup.emu.client.messages(channel) == []


def test_stop_hook_logs_what_is_wrong_with_malformed_stdin(setup: Setup) -> None:
    setup.write_config(setup.config())
    done = setup.hook(STOP_HOOK, b'{"hook_event_name": "Stop", "cwd": "/"')
    assert done.returncode == 0
    log = setup.hook_log()
    assert "SystemError" not in log
    assert "JSONDecodeError" in log and "delimiter" in log


def test_stop_hook_logs_what_is_wrong_with_a_config_that_is_not_json(setup: Setup) -> None:
    setup.write_config('{"schemaVersion": 2, "servers": []')
    channel = setup.emu.ids["project-a"]
    done = setup.hook(STOP_HOOK, stop_event(setup), DISCORD_BRIDGE_CHANNEL_ID=channel)
    assert done.returncode == 0
    log = setup.hook_log()
    assert "SystemError" not in log
    assert "not valid JSON" in log and str(setup.config_file) in log


def test_hook_with_a_non_object_event_exits_0_and_logs(setup: Setup) -> None:
    setup.write_config(setup.config())
    done = setup.hook(STOP_HOOK, b"[1, 2]", DISCORD_BRIDGE_CHANNEL_ID=setup.emu.ids["project-a"])
    assert done.returncode == 0 and done.stdout == b""
    assert "not a JSON object" in setup.hook_log()


def test_stop_hook_outside_the_bridge_does_nothing(setup: Setup) -> None:
    """No config and no marker: someone else's session. No network, no files, exit 0."""
    done = setup.hook(STOP_HOOK, stop_event(setup))
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert not setup.runtime.exists()
    assert setup.emu.client.counters() == {}


def test_stop_hook_posts_the_reply(setup: Setup) -> None:
    setup.write_config(setup.config())
    channel = setup.emu.ids["project-a"]
    done = setup.hook(
        STOP_HOOK, stop_event(setup, "All **done** @everyone"), DISCORD_BRIDGE_CHANNEL_ID=channel
    )
    assert done.returncode == 0 and done.stdout == b"", setup.hook_log()
    (msg,) = setup.emu.client.messages(channel)
    owner = setup.emu.ids["alice"]
    assert msg["content"] == f"All **done** @everyone\n\n-# 🔔 <@{owner}>"  # Claude waits for you
    assert msg["mention_everyone"] is False
    (record,) = setup.emu.client.records(kind="message_create")
    assert record["allowed_mentions"] == {"parse": [], "users": [owner]}  # only the owner
    assert setup.hook_log() == ""


def test_stop_hook_found_by_cwd_without_a_marker(setup: Setup) -> None:
    setup.write_config(setup.config())
    done = setup.hook(STOP_HOOK, stop_event(setup, "via cwd"))
    assert done.returncode == 0
    messages = setup.emu.client.messages(setup.emu.ids["project-a"])
    assert [m["content"].split("\n")[0] for m in messages] == ["via cwd"]


def test_session_start_hook_records_the_session(setup: Setup) -> None:
    setup.write_config(setup.config())
    channel = setup.emu.ids["project-a"]
    event = {"session_id": "abc", "cwd": str(setup.project), "source": "startup"}
    done = setup.hook(SESSION_START_HOOK, json.dumps(event), DISCORD_BRIDGE_CHANNEL_ID=channel)
    assert done.returncode == 0 and done.stdout == b""
    record = json.loads((setup.runtime / "sessions" / f"{channel}.json").read_text())
    assert record["session_id"] == "abc" and record["channel_id"] == channel


# --- doctor -----------------------------------------------------------------------------


def lines(out: str, mark: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(mark)]


def test_doctor_passes_on_a_good_setup(setup: Setup) -> None:
    setup.write_config(setup.config())
    setup.install_hooks()
    assert set(claude_settings.installed_events(str(setup.settings))) == set(claude_settings.HOOKS)
    done = setup.cli("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    ok = "\n".join(lines(done.stdout, "✓"))
    assert lines(done.stdout, "✗") == []
    bot = setup.emu.ids["bot_id"]
    assert "main: logged in as" in ok and f"({bot})" in ok
    assert "main: channel of project-a is visible" in ok
    assert "config mode 0600" in ok
    assert f"hooks installed in {setup.settings}" in ok
    assert f"runtime dir {setup.runtime} (volatile) and state dir {setup.runtime} are private" in ok
    assert "claude: " in ok and "tmux " in ok
    assert "· discord-bridge selftest: Claude Code with this bridge" in done.stdout
    assert done.stdout.rstrip().endswith("all checks passed")


def test_doctor_flags_hooks_installed_for_another_runtime_dir(setup: Setup) -> None:
    setup.write_config(setup.config())
    setup.install_hooks()  # hooks take their runtime dir from their command line
    setup.env["DISCORD_BRIDGE_RUNTIME_DIR"] = str(setup.tmp / "moved")
    done = setup.cli("doctor")
    assert done.returncode == 1
    failed = "\n".join(lines(done.stdout, "✗"))
    assert "installed for another bridge home or runtime dir" in failed
    assert f"--runtime-dir {setup.runtime}" in failed
    setup.install_hooks()
    assert lines(setup.cli("doctor").stdout, "✗") == []


def test_doctor_flags_a_wrong_token_with_the_fix(setup: Setup) -> None:
    setup.write_config(setup.config(token="MTIz.wrong.token"))
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 1
    failed = lines(done.stdout, "✗")
    assert len(failed) == 1 and "main: bot token rejected" in failed[0]
    assert "401" in failed[0]
    assert "fix: copy the token from the Developer Portal" in done.stdout
    assert "1 check(s) failed" in done.stdout


def test_doctor_flags_a_channel_the_bot_cannot_see(setup: Setup) -> None:
    setup.write_config(setup.config(channel="100000000000000777"))
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 1
    (failed,) = lines(done.stdout, "✗")
    assert "cannot see #100000000000000777 (project-a)" in failed
    assert "fix: invite the bot and give it View Channel" in done.stdout


def test_doctor_flags_a_readable_config(setup: Setup) -> None:
    setup.write_config(setup.config(), mode=0o644)
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 1
    (failed,) = lines(done.stdout, "✗")
    assert "config mode is 0o644" in failed
    assert f"fix: chmod 600 {setup.config_file}" in done.stdout


def test_doctor_flags_missing_hooks_and_a_bad_config(setup: Setup) -> None:
    raw = setup.config()
    del raw["servers"][0]["projects"][0]["projectPath"]
    setup.write_config(raw)
    done = setup.cli("doctor")
    assert done.returncode == 1
    failed = "\n".join(lines(done.stdout, "✗"))
    assert f"config {setup.config_file}" in failed
    assert "servers[0].projects[0].projectPath" in done.stdout
    assert "hooks missing in" in failed and "Stop" in failed
    assert "fix: discord-bridge hooks install" in done.stdout
    assert setup.emu.client.counters() == {}  # no Discord check without a usable config


def test_doctor_flags_a_prompt_timeout_longer_than_the_hook_timeout(setup: Setup) -> None:
    setup.write_config(setup.config())
    setup.install_hooks()  # PermissionRequest timeout: 900 s + 60 s
    raw = setup.config()
    raw["prompts"] = {"timeoutSeconds": 3600}
    setup.write_config(raw)
    done = setup.cli("doctor")
    assert done.returncode == 1
    (failed,) = lines(done.stdout, "✗")
    assert "PermissionRequest hook's timeout is not above prompts.timeoutSeconds" in failed
    setup.install_hooks()  # the fix the doctor names
    assert setup.cli("doctor").returncode == 0


def put_claude_first(setup: Setup, directory: str) -> None:
    setup.env["PATH"] = os.pathsep.join([directory, setup.env["PATH"]])


@pytest.mark.parametrize("version", versions.TESTED)
def test_doctor_reports_a_tested_claude_version(setup: Setup, version: str) -> None:
    if not claude_available(version):
        pytest.fail(f"Claude Code {version} is missing (./scripts/test.sh installs it)")
    put_claude_first(setup, os.path.dirname(claude_binary(version)))
    setup.write_config(setup.config())
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    tested = f"tested range {versions.OLDEST} to {versions.PINNED}"
    assert f"✓ claude: {version} (Claude Code) ({tested})" in done.stdout
    assert lines(done.stdout, "!") == []


def fake_claude(setup: Setup, printed: str) -> None:
    """A ``claude`` that prints ``printed`` for every command (``--version``, ``auth status``)."""
    fake = setup.tmp / "other-claude"
    fake.mkdir()
    script = fake / "claude"
    script.write_text(f"#!/bin/sh\necho '{printed} (Claude Code)'\n")
    script.chmod(0o755)
    put_claude_first(setup, str(fake))


def test_doctor_warns_about_a_claude_older_than_the_tested_range(setup: Setup) -> None:
    fake_claude(setup, "2.1.100")
    setup.write_config(setup.config())
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 0, done.stdout  # a warning, not a failure
    (warned,) = lines(done.stdout, "!")
    assert warned == "! claude: 2.1.100 (Claude Code) is older than the tested range"
    assert f"tested with Claude Code {versions.OLDEST} to {versions.PINNED}" in done.stdout
    assert done.stdout.rstrip().endswith("all checks passed")


def test_doctor_notes_a_newer_claude_calmly_and_points_at_selftest(setup: Setup) -> None:
    """Claude Code ships every few days: newer than the pinned version is the usual case
    after an upgrade, not a fault. The line says so and names the command that checks it."""
    fake_claude(setup, "2.3.0")
    setup.write_config(setup.config())
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 0, done.stdout
    assert lines(done.stdout, "!") == [] and lines(done.stdout, "✗") == []
    assert (
        f"· claude: 2.3.0 (Claude Code), newer than the tested {versions.OLDEST} to "
        f"{versions.PINNED}: run `discord-bridge selftest` to check this version with the bridge"
    ) in done.stdout.splitlines()
    assert done.stdout.rstrip().endswith("all checks passed")


def test_doctor_says_when_claude_is_not_logged_in_or_never_ran_here(setup: Setup) -> None:
    """The two ways a user's first message goes nowhere although everything is installed
    (2.1.332): no login (each prompt: "Not logged in · Please run /login")
    and a HOME where Claude Code never ran (offline: "Unable to connect to Anthropic
    services"). The real CLI's `auth status` says which."""
    if not claude_available():
        pytest.fail("Claude Code is missing (./scripts/test.sh installs it)")
    del setup.env["ANTHROPIC_API_KEY"]
    (setup.home / ".claude.json").unlink()
    setup.write_config(setup.config())
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 4, done.stdout  # to-dos before `try` (run from this shell)
    out = done.stdout
    assert '! claude is not logged in: each prompt from Discord would stop at "Not logged in' in out
    assert "run `claude` in a terminal as this user and /login" in out
    assert "! Claude Code has not finished its first run for this user" in out
    assert "Unable to connect to Anthropic services" in out
    assert "run `claude` once in a terminal as this user" in out
    assert (
        "before `discord-bridge try`:\n  □ log Claude Code in: run `claude` in a terminal and "
        "/login\n  □ finish Claude Code's first run: run `claude` once in a terminal\n" in out
    )
    setup.env["ANTHROPIC_API_KEY"] = "sk-test"
    assert "✓ claude: logged in (ANTHROPIC_API_KEY)" in setup.cli("doctor").stdout


def test_doctor_flags_hooks_whose_scripts_are_gone(setup: Setup) -> None:
    """An install from before the hooks moved into ``bridge.hooks`` left entries that run
    site-packages/hooks/*.py; once pip removes that folder, the doctor says so, and
    ``hooks install`` (which install.sh runs) writes today's paths over them."""
    setup.write_config(setup.config())
    setup.install_hooks()
    settings = json.loads(setup.settings.read_text())
    gone = setup.tmp / "site-packages" / "hooks"
    for groups in settings["hooks"].values():
        for group in groups:
            for entry in group["hooks"]:
                entry["command"] = entry["command"].replace(str(REPO / "hooks"), str(gone))
    setup.settings.write_text(json.dumps(settings))
    done = setup.cli("doctor")
    assert done.returncode == 1
    (failed,) = lines(done.stdout, "✗")
    assert f"run {gone}/" in failed and "which is gone" in failed
    assert "fix: discord-bridge hooks install" in done.stdout
    setup.install_hooks()
    assert lines(setup.cli("doctor").stdout, "✗") == []


def test_doctor_covers_codex_when_a_project_uses_it(setup: Setup) -> None:
    from bridge.codex import versions as codex_versions
    from bridge_testkit.codex_rig import codex_binary

    raw = setup.config()
    raw["servers"][0]["projects"][0].update(agent="codex", codexCommand=str(codex_binary()))
    setup.write_config(raw)
    setup.install_hooks()  # no ~/.codex yet: Codex's hooks are not written
    done = setup.cli("doctor")
    tested = f"tested range {codex_versions.OLDEST} to {codex_versions.PINNED}"
    line = f"✓ Codex: codex-cli {codex_versions.PINNED} at {codex_binary()} ({tested})"
    assert line in done.stdout
    assert f"✓ Codex: hooks are on ({codex_binary()} features list)" in done.stdout  # the real CLI
    assert "✗ Codex hooks missing in " in done.stdout
    (setup.home / ".codex").mkdir()
    setup.install_hooks()
    done = setup.cli("doctor")
    assert f"✓ Codex hooks installed in {setup.home / '.codex' / 'hooks.json'}" in done.stdout
