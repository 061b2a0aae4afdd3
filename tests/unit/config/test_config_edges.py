"""Config files at the edges (issue 13.9, 13.17): what `run` and `doctor` say about a path that
is a directory, JSON nested too deeply, NaN/Infinity and NUL characters; a symlinked
config.json stays a symlink when the bridge writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge import config

GOOD = {
    "schemaVersion": 2,
    "servers": [
        {
            "name": "main",
            "discord": {"botToken": "tok", "ownerUserId": "412345678901234562"},
            "projects": [
                {"name": "alpha", "channelId": "412345678901234563", "projectPath": "/srv/alpha"}
            ],
        }
    ],
}


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "DISCORD_BRIDGE_HOME": str(tmp_path / "bridge-home"),
        "DISCORD_BRIDGE_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    return subprocess.run(
        [sys.executable, "-m", "bridge.cli", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def with_key(text: str) -> str:
    """GOOD with ``"extra": <text>`` spliced in as raw JSON text."""
    return json.dumps(GOOD)[:-1] + f', "extra": {text}}}'


CASES = {
    "directory": (None, "is a directory"),
    "nested-beyond-the-parser": (with_key("[" * 100_000 + "]" * 100_000), "nested too deeply"),
    "nested-deep": (with_key("[" * 500 + "]" * 500), "extra" + "[0]" * 63 + ": nested more than"),
    "nan": (
        json.dumps(GOOD).replace('"tok"', '"tok", "guildReadyTimeout": NaN'),
        "servers[0].discord.guildReadyTimeout: expected a finite number (got nan)",
    ),
    "infinity": (
        with_key('{"maxDownloadBytes": Infinity}'),
        "extra.maxDownloadBytes: expected a finite number (got inf)",
    ),
    "huge-number": (with_key("1e999"), "extra: expected a finite number (got inf)"),
    "nul-in-path": (
        json.dumps(GOOD).replace("/srv/alpha", "/srv/al\\u0000pha"),
        "servers[0].projects[0].projectPath: contains a NUL character",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_run_and_doctor_explain_a_config_edge_case_without_a_traceback(tmp_path, case) -> None:
    text, expected = CASES[case]
    path = tmp_path / "config.json"
    if text is None:
        path.mkdir()
    else:
        path.write_text(text)
        path.chmod(0o600)
    done = cli(tmp_path, "--config", str(path), "run")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert expected in done.stderr and str(path) in done.stderr, done.stderr
    doctor = cli(tmp_path, "--config", str(path), "doctor")
    assert "Traceback" not in doctor.stderr + doctor.stdout, doctor.stderr
    assert expected in doctor.stdout, doctor.stdout


def test_a_nul_in_any_path_is_refused_by_load(tmp_path) -> None:
    raw = json.loads(json.dumps(GOOD))
    raw["servers"][0]["projects"][0]["threads"] = [
        {"channelId": "412345678901234564", "projectPath": "/srv/x\0y"}
    ]
    raw["claudeArgs"] = ["--x\0"]
    problems = config.validate(raw)
    assert "servers[0].projects[0].threads[0].projectPath: contains a NUL character" in problems
    assert "claudeArgs[0]: contains a NUL character" in problems
    with pytest.raises(config.ConfigError, match="NUL"):
        config.load(str(tmp_path / "a\0b.json"))


def test_saving_a_symlinked_config_writes_through_the_link_atomically(tmp_path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "bridge.json"
    target.write_text(json.dumps(GOOD))
    home = tmp_path / "bridge-home"
    home.mkdir()
    link = home / "config.json"
    link.symlink_to(target)

    entry = {"name": "t", "channelId": "412345678901234564"}
    assert config.append_thread(str(link), 0, "alpha", entry)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["servers"][0]["projects"][0]["threads"] == [entry]
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in dotfiles.iterdir()) == ["bridge.json"]  # no temp file left
    assert sorted(p.name for p in home.iterdir()) == ["config.json"]

    raw = config.load(str(link)).raw
    raw["someKey"] = 1
    config.save_raw(str(link), raw)
    assert link.is_symlink() and json.loads(target.read_text())["someKey"] == 1
