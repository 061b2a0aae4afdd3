"""The run's summary lists every rerun with its first failure, in one process and under
pytest-xdist (whose controller prints the summary from its workers' reports)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FLAKY_ONCE = """
import pathlib
import pytest

@pytest.mark.flaky(reruns=1)
def test_races(tmp_path_factory):
    mark = pathlib.Path(__file__).with_name("failed-once")
    if not mark.exists():
        mark.write_text("")
        blank = "\\n" * 20
        raise AssertionError(f"queued prompt still waiting; screen:{blank}processes: [42 codex]")

def test_steady():
    pass
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_rerun_is_listed_with_its_first_failure(tmp_path: Path, workers: str) -> None:
    (tmp_path / "test_flaky.py").write_text(FLAKY_ONCE)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "bridge_testkit.reruns",
            "-p",
            "no:cacheprovider",
            "-n",
            workers,
            "-q",
            "-o",
            "addopts=",
            "test_flaky.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert run.returncode == 0, run.stdout + run.stderr  # the rerun passed: the run passes
    summary = run.stdout.split("1 rerun(s): a race to chase", 1)
    assert len(summary) == 2, run.stdout
    assert "RERUN test_flaky.py::test_races (call)" in summary[1]
    assert "queued prompt still waiting" in summary[1]
    assert "(19 empty lines)" in summary[1]  # a blank screen folded (after its first line)
    assert "processes: [42 codex]" in summary[1]  # and the failure's end shown
    assert "test_steady" not in summary[1]
