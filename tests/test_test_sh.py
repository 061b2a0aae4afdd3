"""``./scripts/test.sh --claude-version latest``: the real npm asks a registry which version is
the newest and the version-sensitive tests are collected for it; without an answer it says so
and stops. The registry is a local HTTP server holding one packument (no network needed)."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.claude import versions

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "@anthropic-ai/claude-code"


@pytest.fixture
def registry() -> Iterator[str]:
    """An npm registry that knows one package, whose latest is the pinned version (so no
    install is needed: scripts/test.sh installed it already)."""
    latest = versions.PINNED
    packument = {
        "name": PACKAGE,
        "dist-tags": {"latest": latest},
        "versions": {latest: {"name": PACKAGE, "version": latest}},
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(packument).encode()
            found = self.path.lstrip("/").replace("%2f", "/").replace("%2F", "/") == PACKAGE
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def run_test_sh(registry: str, *args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "npm_config_registry": registry,
        "npm_config_cache": str(tmp_path / "npm-cache"),  # nothing answered from a cache
    }
    return subprocess.run(
        ["./scripts/test.sh", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_latest_runs_the_version_sensitive_tests_on_what_the_registry_calls_latest(
    registry: str, tmp_path: Path
) -> None:
    done = run_test_sh(
        registry,
        "--claude-version",
        "latest",
        "tests/e2e/test_relay.py",
        "tests/e2e/test_sessions.py",
        "--collect-only",
        "-q",
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    latest = versions.PINNED
    assert f"Claude Code latest (npm registry, today): {latest}" in done.stderr
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected, done.stdout
    assert all(line.endswith(f"[claude-{latest}]") for line in collected), collected
    assert not any("test_sessions.py" in line for line in collected)  # not version-sensitive


def test_latest_without_an_answer_from_the_registry_says_so(tmp_path: Path) -> None:
    closed = "http://127.0.0.1:9/"  # nothing listens: as offline as it gets
    done = run_test_sh(closed, "--claude-version=latest", "--collect-only", tmp_path=tmp_path)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "the npm registry did not answer (no network?)" in done.stderr
    assert "collected" not in done.stdout


def test_pytest_alone_sends_latest_to_the_script_and_refuses_what_is_no_version() -> None:
    for value, said in (
        ("latest", "./scripts/test.sh --claude-version latest"),
        ("2.1", "is not a version"),
    ):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--claude-version",
                value,
                "--collect-only",
                "-q",
                "tests/e2e/test_relay.py",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode != 0 and said in done.stderr, done.stderr[-2000:]
