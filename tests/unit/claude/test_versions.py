"""The tested Claude Code range is defined once (bridge/claude/versions.py) and used by the
doctor, the test setup script and the test packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.claude import versions
from fake_anthropic.claude_cli import CLAUDE_VERSION, cache_dir

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("printed", "parsed"),
    [
        ("2.1.330 (Claude Code)", (2, 1, 330)),
        ("2.1.197 (Claude Code)\n", (2, 1, 197)),
        ("2.2.0", (2, 2, 0)),
        ("", None),
        ("Claude Code 2.1.330", None),
        ("error: not found", None),
    ],
)
def test_parse_reads_the_version_claude_prints(printed: str, parsed: tuple | None) -> None:
    assert versions.parse(printed) == parsed


PINNED = versions.parse(versions.PINNED)
assert PINNED is not None


@pytest.mark.parametrize(
    ("version", "inside"),
    [
        ((2, 1, 196), False),
        ((2, 1, 197), True),
        ((2, 1, 250), True),
        (PINNED, True),
        ((*PINNED[:-1], PINNED[-1] + 1), False),  # newer than the pinned one
        ((2, 2, 0), False),
        ((1, 9, 999), False),
    ],
)
def test_the_tested_range_includes_both_ends(version: tuple, inside: bool) -> None:
    assert versions.in_tested_range(version) is inside


def test_the_pinned_version_is_the_same_everywhere() -> None:
    assert versions.TESTED == (versions.OLDEST, versions.PINNED)
    assert CLAUDE_VERSION == versions.PINNED  # the test packages' default CLI
    assert cache_dir(versions.PINNED) == Path(f".cache/claude-code-{versions.PINNED}")
    assert cache_dir(versions.OLDEST) == Path(f".cache/claude-code-{versions.OLDEST}")
    script = (REPO / "scripts" / "test.sh").read_text()
    assert "bridge/claude/versions.py" in script and "2.1." not in script


@pytest.mark.parametrize(
    ("cli", "sdk"),
    [
        ("2.1.332", "0.3.332"),
        ("2.1.330", "0.3.330"),
        ("2.1.142", "0.3.142"),
        ("2.1.141", "0.2.141"),
    ],
)
def test_the_agent_sdk_of_a_cli_is_numbered_after_it(cli: str, sdk: str) -> None:
    """As published: npm view @anthropic-ai/claude-agent-sdk@<sdk> claudeCodeVersion → <cli>."""
    assert versions.agent_sdk_version(cli) == sdk


@pytest.mark.parametrize("cli", ["2.2.0", "3.0.1", "2.1", "latest"])
def test_a_cli_outside_the_known_numbering_has_no_agent_sdk_version(cli: str) -> None:
    with pytest.raises(ValueError, match="no known Agent SDK numbering"):
        versions.agent_sdk_version(cli)
