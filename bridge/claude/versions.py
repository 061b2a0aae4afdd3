"""The Claude Code CLI versions the bridge is tested against: the one place that says so.

CI (``scripts/test.sh``) installs every version in :data:`TESTED` and runs the end-to-end tests
marked ``claude_versions`` (relay, slash commands, the CLI-dependent decisions) on each;
``discord-bridge doctor`` warns when the installed CLI is outside ``[OLDEST, PINNED]``. Keep the
README's requirements line in step.
"""

from __future__ import annotations

PINNED = "2.1.332"  # the version the whole suite runs on
OLDEST = "2.1.197"  # the oldest version the version-sensitive e2e tests run on
TESTED = (OLDEST, PINNED)


def parse(text: str) -> tuple[int, ...] | None:
    """The dotted version at the start of ``claude --version`` output ("2.1.330 (Claude
    Code)"), as a tuple of ints; None when there is none."""
    head = text.strip().split(" ", 1)[0] if text.strip() else ""
    parts = head.split(".")
    if len(parts) < 2 or not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def in_tested_range(version: tuple[int, ...]) -> bool:
    """Whether ``version`` lies within [OLDEST, PINNED] (both tested)."""
    low, high = parse(OLDEST), parse(PINNED)
    assert low is not None and high is not None
    return low <= version <= high
