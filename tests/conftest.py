"""Shared fixtures: one Discord emulator and one fake Anthropic API per test session (reset
between tests), and a fresh end-to-end rig (config, HOME, tmux socket, bot) per test."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from discord_emulator import Emulator
from fake_anthropic import FakeAnthropic
from fake_anthropic.claude_cli import claude_available


@pytest.fixture(scope="session", autouse=True)
def private_bridge_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Nothing in the suite may touch a real bridge's config or runtime dir on this machine:
    code that forgets to pass its own gets these throwaway ones."""
    saved = {
        key: os.environ.get(key)
        for key in ("DISCORD_BRIDGE_HOME", "DISCORD_BRIDGE_RUNTIME_DIR", "DISCORD_BRIDGE_STATE_DIR")
    }
    os.environ["DISCORD_BRIDGE_HOME"] = str(tmp_path_factory.mktemp("bridge-home"))
    os.environ["DISCORD_BRIDGE_RUNTIME_DIR"] = str(tmp_path_factory.mktemp("bridge-runtime"))
    os.environ["DISCORD_BRIDGE_STATE_DIR"] = str(tmp_path_factory.mktemp("bridge-state"))
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


@pytest.fixture(scope="session")
def fake_api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as api:
        yield api


@pytest.fixture
def emu(emulator: Emulator) -> Iterator[Emulator]:
    """The shared emulator, reset before and after the test (never leave an outage or a
    forced 429 behind for other tests)."""
    emulator.client.reset()
    yield emulator
    emulator.client.reset()


@pytest.fixture
def rig(tmp_path, emulator: Emulator, fake_api: FakeAnthropic):
    if shutil.which("tmux") is None:
        pytest.fail("tmux is required for end-to-end tests (./scripts/test.sh installs it)")
    if not claude_available():
        pytest.fail("the pinned Claude Code CLI is missing (./scripts/test.sh installs it)")
    from bridge_testkit import BridgeRig

    emulator.client.reset()
    fake_api.reset()
    bridge = BridgeRig(tmp_path, emulator, fake_api)
    yield bridge
    bridge.close()
