"""The Codex CLI versions the bridge is tested against (``@openai/codex`` on npm)."""

from __future__ import annotations

PINNED = "0.171.0"  # the version the Codex end-to-end tests run on
OLDEST = PINNED  # no older one is tested yet
TESTED = (PINNED,)


def parse(text: str) -> tuple[int, ...] | None:
    """The dotted version in ``codex --version`` output (``codex-cli 0.171.0``)."""
    for word in text.split():
        parts = word.split(".")
        if len(parts) >= 2 and all(part.isdigit() for part in parts):
            return tuple(int(part) for part in parts)
    return None
