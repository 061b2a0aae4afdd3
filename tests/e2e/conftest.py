"""The end-to-end tests' own fixtures: the rig (a config, a HOME, a private tmux server, the
bot, the real Claude Code CLI) on the session's emulator and fake Messages API (tests/conftest.py),
and the Claude Code version it runs.

A test (or module, via ``pytestmark``) marked ``claude_versions`` runs its rig once per Claude
Code version in ``bridge.claude.versions.TESTED`` (ids ``[claude-2.1.197]``...); every other
rig runs the pinned version. ``--claude-version X`` (tests/conftest.py) narrows those runs to one
version.
"""

from __future__ import annotations

import shutil
import uuid

import pytest

from bridge.claude import versions
from discord_emulator import Emulator
from fake_anthropic import FakeAnthropic
from fake_anthropic.claude_cli import claude_available


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "claude_version" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("claude_versions") is None:
        return
    chosen = metafunc.config.getoption("--claude-version") or versions.TESTED
    metafunc.parametrize("claude_version", list(chosen), indirect=True, ids=lambda v: f"claude-{v}")


@pytest.fixture
def claude_version(request: pytest.FixtureRequest) -> str:
    """The Claude Code version the rig runs: a parameter for ``claude_versions`` tests."""
    return getattr(request, "param", versions.PINNED)


@pytest.fixture
def rig(tmp_path, emulator: Emulator, fake_api: FakeAnthropic, claude_version: str):
    if shutil.which("tmux") is None:
        pytest.fail("tmux is required for end-to-end tests (./scripts/test.sh installs it)")
    if not claude_available(claude_version):
        pytest.fail(f"Claude Code {claude_version} is missing (./scripts/test.sh installs it)")
    from bridge_testkit import BridgeRig

    emulator.client.reset()
    fake_api.reset()
    fake_api.admit_only(uuid.uuid4().hex[:12])  # this test's Claude Codes only
    bridge = BridgeRig(tmp_path, emulator, fake_api, claude_version)
    yield bridge
    bridge.close()
    bridge.assert_loop_kept_up()  # a bot that stalled over 2 s fails the test at teardown
