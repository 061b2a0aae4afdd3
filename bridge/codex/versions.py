"""The Codex CLI versions the bridge is tested against: the one place that says so.

``scripts/test.sh`` installs every version in :data:`TESTED` from the npm registry
(``@openai/codex``), each in ``.cache/codex-<version>``; the real-CLI tests in
``tests/e2e/test_codex_cli.py`` run on both. What was measured on them: docs/codex.md.
A plain module (no imports of the package): the test script reads it with ``runpy``.
"""

from __future__ import annotations

NPM_PACKAGE = "@openai/codex"
PINNED = "0.171.0"  # the version the suite runs on
# The oldest version the version-sensitive tests run on: the first whose hooks have the
# ``Interrupt`` event (Esc), with hooks "stable" and on by default (``codex features list``).
# Hooks are stable from 0.124.0 (as ``codex_hooks``), but before 0.150 an interrupted turn
# fires no hook at all, so a bridge could not tell an Esc from a turn still running.
OLDEST = "0.150.1"
TESTED = (OLDEST, PINNED)


def parse(text: str) -> tuple[int, ...] | None:
    """The dotted version in ``codex --version`` output ("codex-cli 0.171.0"), as a tuple of
    ints; None when there is none."""
    words = text.strip().split()
    if len(words) < 2 or words[0] != "codex-cli":
        return None
    parts = words[1].split(".")
    if len(parts) < 2 or not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def in_tested_range(version: tuple[int, ...]) -> bool:
    """Whether ``version`` lies within [OLDEST, PINNED] (both tested)."""
    low, high = parse(f"codex-cli {OLDEST}"), parse(f"codex-cli {PINNED}")
    assert low is not None and high is not None
    return low <= version <= high
