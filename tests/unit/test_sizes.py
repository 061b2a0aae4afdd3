"""Sizes as the user reads them in Discord and in Claude's system prompt."""

from bridge.sizes import format_size

MiB = 1024 * 1024


def test_format_size() -> None:
    assert format_size(10) == "10 bytes"
    assert format_size(1536) == "1.5 KiB"
    assert format_size(10 * MiB) == "10 MiB"
    assert format_size(3 * 1024 * MiB) == "3 GiB"
