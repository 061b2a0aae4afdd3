"""Fixtures every kind of test shares: one Discord emulator and one fake Anthropic API per test
session (reset between tests), Claude Code's hook types, throwaway bridge directories; the
``--claude-version`` option and the listing of reruns. The end-to-end rig is tests/e2e's own
(tests/e2e/conftest.py): nothing here starts tmux, a bot or Claude Code.

``--claude-version X`` narrows the ``claude_versions``-marked e2e tests to one version, which
may be outside the tested range (``./scripts/test.sh --claude-version latest``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

import pytest

from bridge.claude import versions
from bridge_testkit import hook_contract as hook_contract_module
from bridge_testkit.hook_contract import HookContract
from discord_emulator import Emulator
from fake_anthropic import FakeAnthropic

pytest_plugins = ["bridge_testkit.reruns"]  # every rerun listed at the end with its failure


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--claude-version",
        action="append",
        type=claude_version_option,
        help="run the claude_versions-marked e2e tests on this CLI version only (repeatable): "
        "a tested one, or any installed in .cache/claude-code-<version> "
        "(./scripts/test.sh --claude-version latest installs the newest and runs them on it)",
    )


def claude_version_option(value: str) -> str:
    if value == "latest":
        raise argparse.ArgumentTypeError(
            "'latest' is asked of the npm registry by ./scripts/test.sh: run "
            "./scripts/test.sh --claude-version latest"
        )
    if versions.parse(value) is None or value.count(".") != 2:
        raise argparse.ArgumentTypeError(f"{value!r} is not a version such as {versions.PINNED}")
    return value


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "claude_versions: run the rig on every tested Claude Code version"
    )


CONTRACT_STATS = "discord_openapi_contract"
WORKER_CONTRACT_STATS: list[dict] = []  # each finished xdist worker's counts


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand its emulators' contract counts to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        from discord_emulator.contract import PROCESS_STATS

        workeroutput[CONTRACT_STATS] = PROCESS_STATS.summary()


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: called in the controller
def pytest_testnodedown(node: object, error: object) -> None:
    stats = getattr(node, "workeroutput", {}).get(CONTRACT_STATS)
    if stats:
        WORKER_CONTRACT_STATS.append(stats)


def contract_summary() -> dict:
    """The contract counts of this process's emulators and of every xdist worker's."""
    from discord_emulator.contract import PROCESS_STATS

    total: dict = {"validated": 0, "invalid": 0, "operations": {}}
    for stats in (PROCESS_STATS.summary(), *WORKER_CONTRACT_STATS):
        total["validated"] += stats["validated"]
        total["invalid"] += stats["invalid"]
        for operation, counts in stats["operations"].items():
            mine = total["operations"].setdefault(operation, {"validated": 0, "invalid": 0})
            mine["validated"] += counts["validated"]
            mine["invalid"] += counts["invalid"]
    total["operations"] = dict(sorted(total["operations"].items()))
    return total


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many request bodies this run's emulators held to Discord's OpenAPI spec (the
    emulators of this process and of its xdist workers; a ``discord-bridge try`` subprocess
    counts its own)."""
    stats = contract_summary()
    if not stats["validated"]:
        return
    terminalreporter.write_sep("-", "Discord OpenAPI contract")
    terminalreporter.write_line(
        f"{stats['validated']} request bodies validated against Discord's OpenAPI spec, "
        f"{stats['invalid']} refused (400 / 50035)"
    )
    for operation, counts in stats["operations"].items():
        refused = f", {counts['invalid']} refused" if counts["invalid"] else ""
        terminalreporter.write_line(f"  {operation}: {counts['validated']}{refused}")


# Started first by each pytest-xdist worker: alone they take minutes (install.sh's pip installs,
# pocketsphinx transcribing), so begun last they would leave one worker running long after the
# others are done (401 s and up to 68 s a test with 4 workers at load 20+).
LONGEST_FIRST = ("tests/test_install.py", "tests/unit/voice/test_audio.py")


E2E_RERUNS = 1  # an end-to-end test that fails runs once more; pytest lists it as "R" (rerun)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The end-to-end tests run real Claude Code CLIs, tmux and browsers side by side on a
    # shared machine: a failure is run once more (pytest-rerunfailures) and listed at the end
    # with its first failure (bridge_testkit.reruns), never hidden: each is a race to chase.
    # A test that fails twice fails the run.
    for item in items:
        if item.nodeid.startswith("tests/e2e/") and item.get_closest_marker("flaky") is None:
            item.add_marker(pytest.mark.flaky(reruns=E2E_RERUNS))
    if not hasattr(config, "workerinput"):  # not an xdist worker: the usual order
        return
    items.sort(key=lambda item: not item.nodeid.startswith(LONGEST_FIRST))  # stable


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
def hook_contract() -> HookContract:
    """Claude Code's hook types for the pinned CLI, as JSON Schema: generated once per SDK
    version (scripts/test.sh installs the SDK and the generator), then read from .cache."""
    return hook_contract_module.pinned()


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
