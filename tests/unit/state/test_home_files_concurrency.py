"""The bridge home's shared files are updated by several bots at once without losing an entry:
``adopted-sessions.json`` (each bot routes the sessions it adopts), ``config-locations.json``
and ``run-configs`` (each ``try`` / ``run --config`` bot registers its config). Real
processes, started together, each adding entries of its own; every entry is there after."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.state import adoptions, locations, private_files, runtime

BOTS = 8
EACH = 4  # entries per bot: the more read-modify-writes overlap, the surer a lost one shows

# One bot: waits for "go" (so that all start at once), adds its entries, says "done", and
# stays alive until its stdin closes (a route names a running bot: one that exited is dropped).
BOT = """
import sys
from bridge.state import adoptions, locations, runtime
home, n, each = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
env = {runtime.ENV_HOME: home}
sys.stdin.readline()
for i in range(each):
    config = f"{home}/../bot-{n}-{i}/config.json"
    locations.register_config(config, env)
    locations.record_config_locations(config, runtime.Runtime(f"/run/{n}/{i}", f"/st/{n}/{i}"), env)
    adoptions.route(f"{n:08d}-0000-4000-8000-{i:012d}", config, env)
print("done", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    return home


def read(path: Path) -> dict:
    return private_files.read_json(str(path), own=True) or {}


def test_bots_updating_the_home_at_once_lose_no_entry(home: Path) -> None:
    bots = [
        subprocess.Popen(
            [sys.executable, "-c", BOT, str(home), str(n), str(EACH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(BOTS)
    ]
    try:
        for bot in bots:
            assert bot.stdin is not None
            bot.stdin.write("go\n")
            bot.stdin.flush()
        for bot in bots:
            assert bot.stdout is not None and bot.stdout.readline() == "done\n"

        configs = {
            os.path.abspath(home / ".." / f"bot-{n}-{i}" / "config.json")
            for n in range(BOTS)
            for i in range(EACH)
        }
        sessions = {f"{n:08d}-0000-4000-8000-{i:012d}" for n in range(BOTS) for i in range(EACH)}
        found = {
            locations.RUN_CONFIGS: set(locations.registered_configs({runtime.ENV_HOME: str(home)})),
            locations.CONFIG_LOCATIONS: set(read(home / locations.CONFIG_LOCATIONS)),
            adoptions.ROUTES: set(read(home / adoptions.ROUTES)),
        }
        wanted = {
            locations.RUN_CONFIGS: configs,
            locations.CONFIG_LOCATIONS: configs,
            adoptions.ROUTES: sessions,
        }
        lost = {name: len(wanted[name] - found[name]) for name in wanted}
        assert lost == dict.fromkeys(wanted, 0), f"entries lost: {lost}"
        for name in (locations.RUN_CONFIGS, locations.CONFIG_LOCATIONS, adoptions.ROUTES):
            assert (home / name).stat().st_mode & 0o777 == 0o600
    finally:
        for bot in bots:
            if bot.stdin is not None:
                bot.stdin.close()
        for bot in bots:
            bot.wait(10)
