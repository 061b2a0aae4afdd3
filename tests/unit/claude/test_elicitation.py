"""An MCP server's form, read from its schema and every answer checked against it: Claude
Code passes a hook's content on to the server unchecked (2.1.332, measured), so this is the
only check there is."""

from __future__ import annotations

import pytest

from bridge.claude import elicitation as forms
from bridge.discord import prompt_actions as actions
from bridge.discord.render.elicitation import elicitation_prompt, fill_modal
from tests.unit.discord.prompt_requests import FORM, elicitation

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Project name", "minLength": 2, "maxLength": 8},
        "mail": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "count": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "confirm": {"type": "boolean", "default": "yes"},  # not a boolean: not a default
        "color": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
        },
        "where": {"type": "object"},
    },
    "required": ["name", "color"],
}
FORM_FIELDS = {f.name: f for f in forms.fields(SCHEMA)}


def test_every_kind_of_field_is_read() -> None:
    kinds = {name: field.kind for name, field in FORM_FIELDS.items()}
    assert kinds == {
        "name": "text",
        "mail": "text",
        "site": "text",
        "day": "text",
        "count": "integer",
        "ratio": "number",
        "confirm": "boolean",
        "color": "choice",
        "size": "choice",
        "tags": "choices",
        "where": "unsupported",
    }
    assert FORM_FIELDS["color"].options == [("red", "Red"), ("green", "Green")]
    assert FORM_FIELDS["size"].options == [("s", "Small"), ("l", "Large")]
    assert FORM_FIELDS["name"].required and not FORM_FIELDS["mail"].required
    assert forms.defaults(list(FORM_FIELDS.values())) == {"count": 2}


@pytest.mark.parametrize(
    ("name", "typed", "value", "problem"),
    [
        ("name", "  demo ", "demo", ""),
        ("name", "x", "x", "Project name: at least 2 characters"),
        ("name", "far too long", "far too long", "Project name: at most 8 characters"),
        ("name", "   ", None, ""),  # blank: not set
        ("mail", "ann@example.org", "ann@example.org", ""),
        ("mail", "ann", "ann", "mail: an e-mail address expected"),
        ("site", "https://example.org/x", "https://example.org/x", ""),
        ("site", "example", "example", "site: a URI expected (such as https://…)"),
        ("day", "2026-11-25", "2026-11-25", ""),
        ("day", "25.11.2026", "25.11.2026", "day: a date expected (YYYY-MM-DD)"),
        ("count", "3", 3, ""),
        ("count", "3.0", 3, ""),
        ("count", "3.5", None, "count: a whole number, not 3.5"),
        ("count", "9", 9, "count: at most 5"),
        ("count", "three", None, "count: “three” is not a number"),
        ("ratio", "0,5", 0.5, ""),
        ("ratio", "2", 2, "ratio: at most 1"),
        ("confirm", "Yes", True, ""),
        ("confirm", "off", False, ""),
        ("confirm", "maybe", None, "confirm: yes or no, not “maybe”"),
        ("color", "Green", "green", ""),  # a label or a value
        ("color", "blue", None, "color: one of Red, Green, not “blue”"),
        ("tags", "a, b", ["a", "b"], ""),
        ("tags", "a, b, c", ["a", "b", "c"], "tags: pick at most 2"),
        ("tags", "a, x", None, "tags: any of a, b, c, separated by commas"),
    ],
)
def test_what_is_typed_becomes_the_schemas_value_or_a_problem(
    name: str, typed: str, value: object, problem: str
) -> None:
    assert forms.from_text(FORM_FIELDS[name], typed) == (value, problem)


@pytest.mark.parametrize(
    ("content", "problems"),
    [
        ({"name": "demo", "color": "green"}, []),
        ({"color": "green"}, ["Project name: required"]),
        (
            {"name": "demo", "color": "green", "count": 9, "confirm": "yes"},
            ["count: at most 5", "confirm: yes or no expected"],
        ),
        (
            {"name": "demo", "color": "blue", "tags": []},
            ["color: one of Red, Green", "tags: pick at least 1"],
        ),
        ({"name": "demo", "color": "red", "count": True}, ["count: a whole number expected"]),
        ({"name": "demo", "color": "red", "extra": 1}, ["extra: not a field of this form"]),
        ({"name": "demo", "color": "red", "where": {}}, ["where: cannot be answered from Discord"]),
        (
            {"name": 5, "color": "red", "tags": ["a", "a"]},
            ["Project name: text expected", "tags: each choice once"],
        ),
    ],
)
def test_an_answer_is_checked_whole_before_it_goes(content: dict, problems: list[str]) -> None:
    """What 2.1.332 would have passed to the server unchecked (the reference's own example:
    ``{"count": 9, "color": "blue"}``, no name) is refused with every reason."""
    assert forms.check(list(FORM_FIELDS.values()), content) == problems


def test_the_measured_form_is_asked_with_two_selects_and_one_page() -> None:
    request = elicitation()
    layout = actions.form_layout(request)
    assert [f.name for f in layout.fields] == ["name", "color", "count", "confirm"]
    assert layout.selects == [1, 3] and layout.pages == [[0, 2]] and layout.fits
    shown = elicitation_prompt(request, {"name": "demo", "confirm": False})["content"]
    assert "**Project name**\\*: `demo`" in shown and "**Sure?**: `no`" in shown
    assert "**Colour**: *not set*" in shown
    modal = fill_modal(request, 0, {"name": "demo"})
    assert [(i["custom_id"], i["value"], i["required"]) for i in modal["inputs"]] == [
        ("f0", "demo", True),
        ("f2", "", False),
    ]
    assert modal["inputs"][1]["placeholder"] == "a whole number, 1–5"


def test_a_form_too_large_for_discord_is_not_offered() -> None:
    many = {f"t{k}": {"type": "string"} for k in range(26)}  # six pages of five
    layout = actions.form_layout(elicitation({"type": "object", "properties": many}))
    assert not layout.fits
    content = elicitation_prompt(elicitation({"type": "object", "properties": many}), {})
    assert "Discord cannot hold this form" in content["content"]
    assert FORM["required"] == ["name"]  # the request the other tests use is the measured one


def test_a_link_that_is_not_a_web_page_gets_no_button() -> None:
    for url in ("javascript:alert(1)", "file:///etc/passwd", "https://", "https://a b"):
        rows = elicitation_prompt(elicitation(url=url), {})["components"]
        assert not any("url" in c for row in rows for c in row["components"]), url
