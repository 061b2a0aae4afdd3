"""``/keys``: words between key names are typed as one text with their spaces; key names (and
their aliases, any case) are pressed as keys."""

from __future__ import annotations

import pytest

from bridge.sessions.pane_ops import parse_keys


@pytest.mark.parametrize(
    ("keys", "steps"),
    [
        ("hello there", [("text", "hello there")]),
        ("hello there Enter", [("text", "hello there"), ("key", "Enter")]),
        ("2 Enter", [("text", "2"), ("key", "Enter")]),
        ("  a   b  ", [("text", "a   b")]),
        (
            "esc hi\tyou C-c x",
            [("key", "Escape"), ("text", "hi you"), ("key", "C-c"), ("text", "x")],
        ),
        ("down DOWN enter", [("key", "Down"), ("key", "Down"), ("key", "Enter")]),
        ("say \x1b[31mred\x07 Enter", [("text", "say red"), ("key", "Enter")]),
        ("", []),
    ],
)
def test_parse_keys(keys: str, steps: list[tuple[str, str]]) -> None:
    assert parse_keys(keys) == steps
