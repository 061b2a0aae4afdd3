"""One name for a model wherever the bridge shows it."""

from __future__ import annotations

import pytest

from bridge.claude.model_names import display_name, session_model

LIVE = {"model_id": "claude-opus-5-5", "model_name": "Opus 5.5"}


@pytest.mark.parametrize(
    ("model", "shown"),
    [
        ("claude-opus-5-5", "Opus 5.5"),
        ("claude-sonnet-4-5-20250929", "Sonnet 4.5"),
        ("claude-3-5-haiku-20241022", "Haiku 3.5"),
        ("opus", "Opus"),
        ("claude-opus-5-5[1m]", "Opus 5.5 (1M context)"),
        ("claude-test-model", "claude-test-model"),  # no family: as given
        ("opusplan", "opusplan"),
        ("claude-opus-next", "claude-opus-next"),
        (None, ""),
        (7, ""),
    ],
)
def test_a_model_id_or_alias_reads_as_claude_codes_display_name(model, shown) -> None:
    assert display_name(model) == shown


def test_a_session_names_its_model_once_and_says_when_it_is_the_default() -> None:
    assert session_model(None, LIVE) == "Opus 5.5 (default)"
    assert session_model("default", {"model_id": "claude-opus-5-5"}) == "Opus 5.5 (default)"
    assert session_model(None, {}) == "Claude Code's default"
    # A chosen alias or id is the running model: the statusLine's name.
    assert session_model("opus", LIVE) == "Opus 5.5"
    assert session_model("claude-opus-5-5", LIVE) == "Opus 5.5"
    # Chosen but not seen yet (the statusLine has not run since /model): the choice.
    assert session_model("claude-sonnet-4-5", LIVE) == "Sonnet 4.5"
    assert session_model("sonnet", {}) == "Sonnet"
