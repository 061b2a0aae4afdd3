"""``discord-bridge service``: the systemd user unit written for this installation (checked by
the real ``systemd-analyze verify`` when it is installed), install / status / uninstall run as
the real command under a throwaway HOME and XDG_CONFIG_HOME (no user service manager is
reachable there, as in a container), the doctor's line, and the macOS launchd agent."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bridge import service
from bridge.service import launchd as service_launchd
from discord_emulator import Emulator
from tests.unit.test_cli import Setup, lines


@pytest.fixture
def setup(tmp_path: Path, emu: Emulator) -> Setup:
    found = Setup(tmp_path, emu)
    runtime = tmp_path / "xdg-runtime"  # empty: no user bus, so systemctl --user cannot talk
    runtime.mkdir(mode=0o700)
    found.env.update(XDG_CONFIG_HOME=str(tmp_path / "xdg-config"), XDG_RUNTIME_DIR=str(runtime))
    return found


def unit_file(setup: Setup) -> Path:
    return Path(setup.env["XDG_CONFIG_HOME"]) / "systemd" / "user" / "discord-bridge.service"


def verify(path: Path, tmp: Path) -> subprocess.CompletedProcess:
    runtime = tmp / "verify-runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    return subprocess.run(
        ["systemd-analyze", "verify", "--user", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_unit_runs_this_interpreter_with_the_config_and_restarts_on_failure() -> None:
    env = {
        "PATH": "/opt/node/bin:/usr/bin",
        "LANG": "en_US.UTF-8",
        "DISCORD_BRIDGE_RUNTIME_DIR": "/run/db",
        "SECRET": "x",
    }
    text = service.unit_text("/home/u/.discord-bridge/config.json", env=env)
    keys = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert (
        f'ExecStart="{sys.executable}" "-m" "bridge.cli" "--config" '
        '"/home/u/.discord-bridge/config.json" "run"' in keys
    )
    assert os.path.isabs(sys.executable)
    assert 'Environment="PATH=/opt/node/bin:/usr/bin"' in keys
    assert 'Environment="LANG=en_US.UTF-8"' in keys
    assert 'Environment="DISCORD_BRIDGE_RUNTIME_DIR=/run/db"' in keys
    assert not any("SECRET" in line for line in keys)  # only what the bot needs
    for wanted in (
        "Restart=on-failure",
        "RestartSec=5",
        "RestartPreventExitStatus=2",
        "KillMode=process",
        "StartLimitBurst=10",
        "StartLimitIntervalSec=600",
        "WantedBy=default.target",
    ):
        assert wanted in keys, wanted
    assert "RestartSteps" not in text  # unknown before systemd 254
    newer = service.unit_text("/c.json", env={}, version=256)
    assert "RestartSteps=6" in newer and "RestartMaxDelaySec=300" in newer
    assert 'Environment="LANG=C.UTF-8"' in newer  # tmux needs a UTF-8 locale


def test_quoting_keeps_spaces_percent_and_dollar_literal() -> None:
    assert service.quote('/a b/%h$HOME"x\\') == '"/a b/%%h$$HOME\\"x\\\\"'


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze not installed")
def test_the_generated_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    config = tmp_path / "my config %d $X" / "config.json"  # quoting put to the test
    path = tmp_path / "discord-bridge.service"
    path.write_text(service.unit_text(str(config), version=service.systemd_version()))
    done = verify(path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert str(path) not in done.stderr, done.stderr  # no warning about any line of ours
    broken = tmp_path / "broken.service"
    broken.write_text(path.read_text().replace("KillMode=process", "KillMode=sometimes"))
    assert f"{broken}:" in verify(broken, tmp_path).stderr  # the check can fail


def test_install_status_doctor_and_uninstall(setup: Setup) -> None:
    setup.write_config(setup.config())
    setup.install_hooks()
    assert "service: not installed" in setup.cli("service", "status").stdout
    done = setup.cli("service", "install")
    assert done.returncode == 0, done.stdout + done.stderr
    unit = unit_file(setup)
    assert f"wrote {unit}" in done.stdout
    text = unit.read_text()
    assert f'"--config" "{setup.config_file}" "run"' in text
    assert f'Environment="DISCORD_BRIDGE_HOME={setup.bridge_home}"' in text
    assert "loginctl enable-linger" in done.stdout
    has_systemctl = shutil.which("systemctl") is not None
    wants = unit.parent / "default.target.wants" / "discord-bridge.service"
    if has_systemctl:  # enabling is a symlink; it needs no running service manager
        assert "enabled discord-bridge.service" in done.stdout
        assert "no user service manager is reachable" in done.stdout
        assert wants.is_symlink() and wants.resolve() == unit.resolve()

    status = setup.cli("service", "status")
    assert f"service: installed ({unit})" in status.stdout
    if has_systemctl:
        assert "enabled: enabled; active: unknown" in status.stdout
    doctor = setup.cli("doctor")
    assert lines(doctor.stdout, "✗") == [], doctor.stdout
    assert f"✓ service: installed ({unit})" in doctor.stdout

    done = setup.cli("service", "uninstall")
    assert done.returncode == 0 and f"removed {unit}" in done.stdout
    assert not unit.exists() and not wants.is_symlink()
    assert "service: not installed" in setup.cli("service", "status").stdout
    assert "not installed" in setup.cli("service", "uninstall").stdout


def test_doctor_flags_a_unit_for_another_installation(setup: Setup) -> None:
    setup.write_config(setup.config())
    setup.install_hooks()
    unit = unit_file(setup)
    unit.parent.mkdir(parents=True)
    unit.write_text(service.unit_text("/elsewhere/config.json", env={}))
    doctor = setup.cli("doctor")
    (failed,) = lines(doctor.stdout, "✗")
    assert failed == f"✗ service: installed ({unit})"
    assert "runs another interpreter or config file" in doctor.stdout
    assert "discord-bridge service install" in doctor.stdout


INJECTED = "ExecStartPre=/bin/touch /tmp/discord-bridge-injected"


@pytest.mark.parametrize("name", ["DISCORD_BRIDGE_STATE_DIR", "PATH", "LANG"])
@pytest.mark.parametrize("control", ["\n", "\r", "\x1b", "\t"])
def test_a_control_character_in_a_carried_variable_is_refused_not_written(
    setup: Setup, name: str, control: str
) -> None:
    """Issue 18.10: a line break in a carried value wrote a directive of its own into the unit
    (``ExecStartPre=``), which systemd-analyze verify accepts and systemd would run."""
    setup.write_config(setup.config())
    setup.env[name] = setup.env.get(name, "/x") + control + INJECTED
    done = setup.cli("service", "install", "--no-start")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{name} holds a control character" in done.stdout + done.stderr
    assert "nothing written" in done.stdout + done.stderr
    assert not unit_file(setup).exists()


def test_a_config_path_with_a_line_break_is_refused(tmp_path: Path) -> None:
    with pytest.raises(service.UnsafeValue, match="control character"):
        service.unit_text(str(tmp_path / f"x\n{INJECTED}" / "config.json"), env={})
    with pytest.raises(service.UnsafeValue, match="control character"):
        service_launchd.plist_bytes(str(tmp_path / "x\ry" / "config.json"), env={})


def test_api_and_gateway_overrides_are_never_carried_and_the_user_is_told(setup: Setup) -> None:
    """Issue 18.10: a DISCORD_BRIDGE_API_BASE left from testing against an emulator would send
    the real token to whatever listens there later; pane markers are the bot's to set."""
    setup.write_config(setup.config())
    setup.env.update(
        DISCORD_BRIDGE_API_BASE="http://127.0.0.1:9/api/v10",
        DISCORD_BRIDGE_GATEWAY_URL="ws://127.0.0.1:9",
        DISCORD_BRIDGE_CHANNEL_ID="100000000000000003",
        DISCORD_BRIDGE_TMUX_SOCKET="mine",
    )
    done = setup.cli("service", "install", "--no-start")
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: systemctl cannot enable
    text = unit_file(setup).read_text()
    assert "127.0.0.1:9" not in text and "DISCORD_BRIDGE_CHANNEL_ID" not in text
    assert 'Environment="DISCORD_BRIDGE_TMUX_SOCKET=mine"' in text
    assert f'Environment="DISCORD_BRIDGE_STATE_DIR={setup.runtime}"' in text
    for name in ("DISCORD_BRIDGE_API_BASE", "DISCORD_BRIDGE_GATEWAY_URL"):
        assert f"{name} is set in this shell but not carried into the service" in done.stdout
    assert "discord.apiBaseUrl" in done.stdout  # where an endpoint is set on purpose
    agent = plistlib.loads(service_launchd.plist_bytes(str(setup.config_file), env=setup.env))
    assert "DISCORD_BRIDGE_API_BASE" not in agent["EnvironmentVariables"]
    if shutil.which("systemd-analyze"):
        verified = verify(unit_file(setup), setup.tmp)
        assert str(unit_file(setup)) not in verified.stderr, verified.stderr


def test_the_launchd_agent_runs_this_interpreter_and_restarts_on_failure(tmp_path: Path) -> None:
    data = service_launchd.plist_bytes(
        "/Users/u/.discord-bridge/config.json",
        env={"PATH": "/opt/homebrew/bin:/usr/bin"},
        home="/Users/u",
    )
    agent = plistlib.loads(data)
    assert agent["Label"] == service_launchd.LABEL
    assert agent["ProgramArguments"] == [
        sys.executable,
        "-m",
        "bridge.cli",
        "--config",
        "/Users/u/.discord-bridge/config.json",
        "run",
    ]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["AbandonProcessGroup"] is True  # tmux and Claude outlive the agent
    assert agent["EnvironmentVariables"]["PATH"] == "/opt/homebrew/bin:/usr/bin"
    assert agent["StandardErrorPath"] == "/Users/u/Library/Logs/discord-bridge.log"
