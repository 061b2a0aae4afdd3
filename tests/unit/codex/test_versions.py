"""The tested Codex CLI range is defined once (bridge/codex/versions.py) and used by the test
setup script."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.codex import versions

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("printed", "parsed"),
    [
        ("codex-cli 0.171.0", (0, 171, 0)),
        ("codex-cli 0.150.1\n", (0, 150, 1)),
        ("0.171.0", None),
        ("", None),
        ("codex-cli latest", None),
    ],
)
def test_parse_reads_the_version_codex_prints(printed: str, parsed: tuple | None) -> None:
    assert versions.parse(printed) == parsed


@pytest.mark.parametrize(
    ("version", "inside"),
    [((0, 150, 0), False), ((0, 150, 1), True), ((0, 171, 0), True), ((0, 171, 1), False)],
)
def test_the_tested_range_includes_both_ends(version: tuple, inside: bool) -> None:
    assert versions.in_tested_range(version) is inside


def test_the_test_script_installs_the_versions_named_here_only() -> None:
    assert versions.TESTED == (versions.OLDEST, versions.PINNED)
    script = (REPO / "scripts" / "test.sh").read_text()
    assert "bridge/codex/versions.py" in script and "@openai/codex@$version" in script
    assert versions.PINNED not in script and versions.OLDEST not in script
