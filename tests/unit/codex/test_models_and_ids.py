"""What reaches Codex's command line from a file: a session id in Codex's UUID shape only, a
model name that is no option; and the model catalog read from ``codex debug models``."""

from __future__ import annotations

import json

import pytest

from bridge.codex import launch, models

ID = "01a22656-bb46-7c93-b002-84fc9a347e53"  # measured on 0.171.0


def argv(resume: str | None) -> list[str]:
    return launch.codex_argv("codex", None, resume, "/up", "/out", 1 << 20, [])


def test_a_session_id_resumes_only_in_codexs_shape() -> None:
    assert argv(ID)[:3] == ["codex", "resume", ID]
    for bad in ("--yolo", f"{ID} --yolo", "../x", ID + "0", "", " " + ID):
        if bad:
            with pytest.raises(ValueError):
                argv(bad)
    assert "resume" not in argv(None)


@pytest.mark.parametrize("name", ["gpt-6.2-sol", "o3", "provider/model:tag", "m[1m]"])
def test_model_names_that_may_go_to_model(name: str) -> None:
    assert models.valid_name(name)


@pytest.mark.parametrize("name", ["-x", "--yolo", "a b", "a;b", "", "x" * 101, "é"])
def test_model_names_refused(name: str) -> None:
    assert not models.valid_name(name)


def test_the_catalog_lists_what_codexs_picker_lists() -> None:
    raw = json.dumps(
        {
            "models": [
                {"slug": "gpt-6.2-sol", "display_name": "GPT-6.2-Sol", "visibility": "list"},
                {"slug": "hidden-one", "display_name": "Hidden", "visibility": "hide"},
                {"slug": "--bad", "display_name": "Bad", "visibility": "list"},
                {"slug": "gpt-5.5", "visibility": "list"},
                "junk",
            ]
        }
    ).encode()
    assert models.parse_catalog(raw) == [
        models.Model("gpt-6.2-sol", "GPT-6.2-Sol"),
        models.Model("gpt-5.5", "gpt-5.5"),
    ]
    assert models.parse_catalog(b"not json") == []
    assert models.parse_catalog(b'{"models": 3}') == []
