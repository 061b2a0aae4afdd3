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


def agent_sdk_version(cli: str = PINNED) -> str:
    """The ``@anthropic-ai/claude-agent-sdk`` release published with Claude Code ``cli``: it
    ships that CLI's hook contract as TypeScript types, which the tests hold every hook input
    and output to (``bridge_testkit.hook_contract``). The SDK is released with each CLI and
    numbered after it (0.3.332 with 2.1.332, 0.2.141 with 2.1.141: the series moved at
    2.1.142); its package.json names the CLI it belongs to in ``claudeCodeVersion``."""
    parts = parse(cli)
    if parts is None or len(parts) != 3 or parts[:2] != (2, 1):
        raise ValueError(f"no known Agent SDK numbering for Claude Code {cli!r}")
    series = 3 if parts[2] >= 142 else 2
    return f"0.{series}.{parts[2]}"
