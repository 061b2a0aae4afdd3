"""The example config's placeholders: ``run`` and ``doctor`` name each one (JSON path and what
to put there) and never try the network with them; a real config has none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bridge import placeholders
from discord_emulator import Emulator
from tests.unit.test_cli import Setup, lines

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = json.loads((REPO / "config.example.json").read_text())
EXAMPLE_PATHS = [
    "servers[0].discord.botToken",
    "servers[0].discord.guildId",
    "servers[0].discord.ownerUserId",
    "servers[0].projects[0].channelId",
    "servers[0].projects[0].projectPath",
]


@pytest.fixture
def setup(tmp_path: Path, emu: Emulator) -> Setup:
    return Setup(tmp_path, emu)


def test_every_placeholder_of_the_example_is_found() -> None:
    found = placeholders.find(EXAMPLE)
    assert [where for where, _ in found] == EXAMPLE_PATHS
    what = dict(found)
    assert "Reset Token" in what["servers[0].discord.botToken"]
    assert "Copy User ID" in what["servers[0].discord.ownerUserId"]
    assert "my-project" in what["servers[0].projects[0].channelId"]
    assert "directory" in what["servers[0].projects[0].projectPath"]


def test_placeholders_of_a_schema_version_1_file_are_named_where_they_are() -> None:
    server = json.loads(json.dumps(EXAMPLE["servers"][0]))
    v1 = {"schemaVersion": 1, **server}
    assert [where for where, _ in placeholders.find(v1)] == [
        path.removeprefix("servers[0].") for path in EXAMPLE_PATHS
    ]


def test_a_filled_in_config_has_none(setup: Setup) -> None:
    assert placeholders.find(setup.config()) == []
    real = json.loads(json.dumps(EXAMPLE))
    discord = real["servers"][0]["discord"]
    discord.update(
        botToken=setup.emu.bot_token,
        guildId="1183458132195049533",
        ownerUserId="283029871023587328",
    )
    real["servers"][0]["projects"][0].update(
        channelId="1183458132740300811", projectPath="/home/alice/code/site"
    )
    assert placeholders.find(real) == []


def test_only_the_remaining_placeholders_are_named() -> None:
    raw = json.loads(json.dumps(EXAMPLE))
    raw["servers"][0]["discord"]["botToken"] = "MTEz.real.token-with_dashes"
    raw["servers"][0]["projects"][0]["projectPath"] = "/srv/code"
    raw["servers"][0]["generalChannelId"] = "100000000000000004"
    raw["servers"][0]["projects"][0]["threads"] = [{"name": "t", "channelId": "1000000000000005"}]
    found = [where for where, _ in placeholders.find(raw)]
    assert found == [
        "servers[0].discord.guildId",
        "servers[0].discord.ownerUserId",
        "servers[0].generalChannelId",
        "servers[0].projects[0].channelId",
        "servers[0].projects[0].threads[0].channelId",
    ]


@pytest.mark.parametrize("token", ["PASTE-YOUR-BOT-TOKEN-HERE", "…", "<your token>", "YOUR_TOKEN"])
def test_template_tokens_are_placeholders(token: str) -> None:
    assert placeholders.is_placeholder_token(token)


def test_run_with_the_example_config_names_each_placeholder_and_exits_2(setup: Setup) -> None:
    shutil.copy(REPO / "config.example.json", setup.config_file)
    setup.config_file.chmod(0o600)
    done = setup.cli("run", timeout=20)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "still holds the example's placeholder values" in done.stderr
    assert str(setup.config_file) in done.stderr
    for where in EXAMPLE_PATHS:
        assert f"  {where}: put " in done.stderr, where
    assert "discord-bridge doctor" in done.stderr
    assert setup.emu.client.counters() == {}  # no login attempt anywhere


def test_doctor_with_the_example_config_names_each_placeholder_without_the_network(
    setup: Setup,
) -> None:
    raw = json.loads(json.dumps(EXAMPLE))
    raw["servers"][0]["discord"]["apiBaseUrl"] = setup.emu.api_base  # would be reachable
    setup.write_config(raw)
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 3  # set-up done, ready for `try`; to-dos left before `run`
    assert lines(done.stdout, "✗") == []  # a placeholder is a to-do, not a failure
    todo = done.stdout.split("before `discord-bridge run`:\n", 1)[1]
    assert todo.startswith(f"  □ replace the example's values in {setup.config_file}:\n")
    values = [
        line.strip().split(":")[0] for line in todo.splitlines()[1:] if line.startswith("   ")
    ]
    assert values == list(EXAMPLE_PATHS)
    assert "servers[0].discord.botToken: put your bot's token" in todo
    assert done.stdout.rstrip().endswith(
        "set-up done; ready for `discord-bridge try`; 1 thing(s) to do (above)"
    )
    assert "is missing" not in done.stdout and "does not exist" not in done.stdout
    assert setup.emu.client.counters() == {}  # the token was never sent


def test_doctor_says_how_to_fix_a_missing_project_path(setup: Setup) -> None:
    raw = setup.config()
    missing = setup.tmp / "not-there"
    raw["servers"][0]["projects"][0]["projectPath"] = str(missing)
    setup.write_config(raw)
    setup.install_hooks()
    done = setup.cli("doctor")
    assert done.returncode == 1
    (failed,) = lines(done.stdout, "✗")
    assert f"project project-a: {missing} does not exist" in failed
    fix = done.stdout.split(failed, 1)[1].splitlines()[1].strip()
    assert fix == (
        f"fix: create the directory (mkdir -p {missing}), or set servers[0].projects[0]"
        f".projectPath in {setup.config_file} to the project's existing directory"
    )
