"""What a click on a prompt may decide (bridge/discord/prompt_actions.py, read back by
bridge/discord/prompt_clicks.py), enumerated.

For each kind of request, every action its message offers (every button, every select with
what it may send, every modal the bot opens from them) and what it does; then the table of
what it must refuse: another kind's action, an index past the end, an "always" that was not
offered, a number written another way, a select on a question asked with buttons. Only the
owner can click at all; this is what they may decide with a click.
"""

from __future__ import annotations

from itertools import combinations

import pytest

from bridge.claude import permissions
from bridge.discord import prompt_actions as actions
from bridge.discord.prompt_actions import (
    ACCEPT,
    ALLOW,
    ALWAYS,
    ANSWER,
    APPROVE,
    APPROVE_NOTES,
    BUTTON,
    CANCEL,
    DECLINE,
    DENY,
    FILL,
    GO_ON,
    KEEP_PLANNING,
    MODAL,
    OTHER,
    PICK,
    REACTION,
    RETRY,
    SCOPE,
    SELECT,
    STEP_NOTES,
    TELL,
    TO_TERMINAL,
)
from bridge.discord.prompt_clicks import Action, parse
from bridge.discord.render import decisions as views
from bridge.discord.render import plan_prompt
from bridge.discord.render.elicitation import elicitation_prompt
from bridge.state.decisions import Request
from tests.unit.discord.prompt_requests import (
    ADD_DIRS,
    SET_MODE,
    denied,
    elicitation,
    permission,
    plan,
    q,
    question,
    suggestion_rules,
)

RULES = suggestion_rules("npm test:*")

REQUESTS = {
    "permission": permission(),
    "permission, suggestions": permission(
        # 1 is not an object (no button); 4 is past the four offered
        suggestions=[RULES, "junk", SET_MODE, ADD_DIRS, suggestion_rules("ls:*")]
    ),
    "permission, a mode switch only": permission(suggestions=[SET_MODE]),
    "question": question(q("Which database?", ["Postgres", "SQLite"])),
    "question, several answers": question(q("Which extras?", ["Docs", "Tests", "CI"], multi=True)),
    "question, many options": question(q("Pick", [f"n{j}" for j in range(7)])),
    "questions": question(
        q("Which database?", ["Postgres", "SQLite"]),
        "not a question",  # type: ignore[arg-type] - skipped: question 1 is the next object
        q("Which extras?", ["Docs", "Tests"], multi=True),
        q("Free text only?", [], header=None),
        {"question": "Yes?", "options": [{"label": "yes"}, "junk"], "multiSelect": False},
        q("A fifth question?", ["never shown"]),
    ),
    "plan": plan("# Plan\n\n1. Add README.md\n"),
    "form": elicitation(),
    "link": elicitation(url="https://example.com/auth?x=1"),
    # a field Discord cannot ask (an object): only Decline, Cancel and the terminal
    "form, not for Discord": elicitation(
        {"type": "object", "properties": {"where": {"type": "object"}}}
    ),
    # 12 text fields and 5 with choices: 3 selects (rows: 3 + the pages' + the buttons'),
    # the other 2 choices typed, 14 text inputs on 3 pages
    "form, many fields": elicitation(
        {
            "type": "object",
            "properties": {
                **{f"t{k}": {"type": "string"} for k in range(12)},
                "c0": {"type": "string", "enum": ["a", "b"]},
                "c1": {"type": "boolean"},
                "c2": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["x", "y", "z"]},
                    "minItems": 1,
                    "maxItems": 2,
                },
                "c3": {"type": "string", "oneOf": [{"const": "p", "title": "P"}]},
                "c4": {"type": "string", "enum": ["q"]},
            },
        }
    ),
    "denied": denied(),
}
MANY_STEPS = plan("\n".join(f"- step {k}" for k in range(1, 131)))  # 100 offered, 4 selects
REACTIONS = {(REACTION, "✅", ()): Action(ALLOW), (REACTION, "❌", ()): Action(DENY)}

FORM_BUTTONS = {
    (BUTTON, "e:accept", ()): Action(ACCEPT),
    (BUTTON, "e:decline", ()): Action(DECLINE),
    (BUTTON, "e:cancel", ()): Action(CANCEL),
    (BUTTON, "e:terminal", ()): Action(TO_TERMINAL),
}


def fill(page: int) -> dict:
    return {
        (BUTTON, f"e:fill:{page}", ()): Action(FILL, page=page),
        (MODAL, f"e:fill:{page}", ()): Action(FILL, page=page),
    }


def pick(field: int, *picked: int) -> Action:
    return Action(PICK, question=field, picked=picked)


def answer(i: int, *picked: int, label: str) -> Action:
    return Action(ANSWER, question=i, picked=picked, label=label)


def other(i: int, *picked: int, label: str = "") -> Action:
    return Action(OTHER, question=i, picked=picked, label=label)


# (request, where, action, select values) → Action: everything each prompt offers
OFFERED = {
    "permission": {
        (BUTTON, "allow", ()): Action(ALLOW),
        (BUTTON, "deny", ()): Action(DENY),
        (BUTTON, "tell", ()): Action(TELL),
        (MODAL, "tell", ()): Action(TELL),
        **REACTIONS,
    },
    "permission, suggestions": {
        **REACTIONS,
        (BUTTON, "allow", ()): Action(ALLOW),
        (BUTTON, "deny", ()): Action(DENY),
        (BUTTON, "tell", ()): Action(TELL),
        (MODAL, "tell", ()): Action(TELL),
        **{
            (BUTTON, f"always:{n}:{scope}", ()): Action(ALWAYS, suggestion=n, scope=scope)
            for n in (0, 2, 3)
            for scope in "slpu"
        },
        **{(BUTTON, f"scope:{scope}", ()): Action(SCOPE, scope=scope) for scope in "slpu"},
    },
    "permission, a mode switch only": {
        **REACTIONS,
        (BUTTON, "allow", ()): Action(ALLOW),
        (BUTTON, "deny", ()): Action(DENY),
        (BUTTON, "tell", ()): Action(TELL),
        (MODAL, "tell", ()): Action(TELL),
        **{  # the button carries the scope the row shows, though a mode switch has none
            (BUTTON, f"always:0:{scope}", ()): Action(ALWAYS, suggestion=0, scope=scope)
            for scope in "slpu"
        },
    },
    "question": {
        (BUTTON, "q0:o0", ()): answer(0, 0, label="Postgres"),
        (BUTTON, "q0:o1", ()): answer(0, 1, label="SQLite"),
        (BUTTON, "q0:other", ()): other(0),
        (MODAL, "q0:other", ()): other(0),
    },
    "question, several answers": {
        **{
            (SELECT, "q0", tuple(f"o{j}" for j in picked)): answer(
                0, *picked, label=", ".join(["Docs", "Tests", "CI"][j] for j in picked)
            )
            for size in (1, 2, 3)
            for picked in combinations(range(3), size)
        },
        **{
            (SELECT, "q0", (*(f"o{j}" for j in picked), "other")): other(
                0, *picked, label=", ".join(["Docs", "Tests", "CI"][j] for j in picked)
            )
            for size in (0, 1, 2, 3)
            for picked in combinations(range(3), size)
        },
        **{
            (MODAL, "q0:other" + (":" + ".".join(map(str, picked)) if picked else ""), ()): other(
                0, *picked, label=", ".join(["Docs", "Tests", "CI"][j] for j in picked)
            )
            for size in (0, 1, 2, 3)
            for picked in combinations(range(3), size)
        },
    },
    "question, many options": {
        **{(SELECT, "q0", (f"o{j}",)): answer(0, j, label=f"n{j}") for j in range(7)},
        (SELECT, "q0", ("other",)): other(0),
        (MODAL, "q0:other", ()): other(0),
    },
    "questions": {
        (BUTTON, "q0:o0", ()): answer(0, 0, label="Postgres"),
        (BUTTON, "q0:o1", ()): answer(0, 1, label="SQLite"),
        (BUTTON, "q0:other", ()): other(0),
        (MODAL, "q0:other", ()): other(0),
        (SELECT, "q1", ("o0",)): answer(1, 0, label="Docs"),
        (SELECT, "q1", ("o1",)): answer(1, 1, label="Tests"),
        (SELECT, "q1", ("o0", "o1")): answer(1, 0, 1, label="Docs, Tests"),
        (SELECT, "q1", ("other",)): other(1),
        (SELECT, "q1", ("o0", "other")): other(1, 0, label="Docs"),
        (SELECT, "q1", ("o1", "other")): other(1, 1, label="Tests"),
        (SELECT, "q1", ("o0", "o1", "other")): other(1, 0, 1, label="Docs, Tests"),
        (MODAL, "q1:other", ()): other(1),
        (MODAL, "q1:other:0", ()): other(1, 0, label="Docs"),
        (MODAL, "q1:other:1", ()): other(1, 1, label="Tests"),
        (MODAL, "q1:other:0.1", ()): other(1, 0, 1, label="Docs, Tests"),
        (BUTTON, "q2:other", ()): other(2),  # no options: Other… alone
        (MODAL, "q2:other", ()): other(2),
        (BUTTON, "q3:o0", ()): answer(3, 0, label="yes"),  # the option that is an object
        (BUTTON, "q3:other", ()): other(3),
        (MODAL, "q3:other", ()): other(3),
    },
    "plan": {  # steps: 1 "Plan", 2 "Add README.md"
        (BUTTON, "plan:auto", ()): Action(APPROVE, mode="acceptEdits"),
        (BUTTON, "plan:review", ()): Action(APPROVE, mode="default"),
        (BUTTON, "plan:notes", ()): Action(APPROVE_NOTES),
        (MODAL, "plan:notes", ("auto",)): Action(APPROVE_NOTES, mode="acceptEdits"),
        (MODAL, "plan:notes", ("review",)): Action(APPROVE_NOTES, mode="default"),
        (BUTTON, "plan:keep", ()): Action(KEEP_PLANNING),
        (MODAL, "plan:keep", ()): Action(KEEP_PLANNING),
        (SELECT, "plan:steps:0", ("s1",)): Action(STEP_NOTES, steps=(1,)),
        (SELECT, "plan:steps:0", ("s2",)): Action(STEP_NOTES, steps=(2,)),
        (SELECT, "plan:steps:0", ("s1", "s2")): Action(STEP_NOTES, steps=(1, 2)),
        (MODAL, "plan:steps:1", ()): Action(STEP_NOTES, steps=(1,)),
        (MODAL, "plan:steps:2", ()): Action(STEP_NOTES, steps=(2,)),
        (MODAL, "plan:steps:1.2", ()): Action(STEP_NOTES, steps=(1, 2)),
    },
    "form": {
        **FORM_BUTTONS,
        **fill(0),  # the name and the count
        **{(SELECT, f"e:f{i}", (f"v{j}",)): pick(i, j) for i in (1, 3) for j in (0, 1)},
    },
    "link": FORM_BUTTONS,  # and a link button, which sends nothing
    "form, not for Discord": {
        key: click for key, click in FORM_BUTTONS.items() if click.kind != ACCEPT
    },
    "form, many fields": {
        **FORM_BUTTONS,
        **fill(0),
        **fill(1),
        **fill(2),
        **{(SELECT, f"e:f{i}", (f"v{j}",)): pick(i, j) for i in (12, 13) for j in (0, 1)},
        **{
            (SELECT, "e:f14", tuple(f"v{j}" for j in picked)): pick(14, *picked)
            for size in (1, 2)
            for picked in combinations(range(3), size)
        },
    },
    "denied": {
        (BUTTON, "retry", ()): Action(RETRY),
        (BUTTON, "go_on", ()): Action(GO_ON),
    },
}
OFFERED_CASES = [
    pytest.param(name, where, action, values, expected, id=f"{name}-{where}-{action}-{values}")
    for name, table in OFFERED.items()
    for (where, action, values), expected in table.items()
]


@pytest.mark.parametrize(("name", "where", "action", "values", "expected"), OFFERED_CASES)
def test_every_action_a_prompt_offers_and_what_it_does(
    name: str, where: str, action: str, values: tuple, expected: Action
) -> None:
    assert parse(REQUESTS[name], action, where, values) == expected


def rendered(request: Request) -> set[tuple[str, str, tuple]]:
    """(where, action, values) of every click the prompt's message allows: each button; each
    select with every set of values it lets through; each modal the bot opens from them."""
    if request.kind == "permission":
        rows = [row for s in actions.SCOPES for row in views.permission_components(request, s)]
    elif request.kind == "plan":
        rows = plan_prompt.plan_components(request)
    elif request.kind == "elicitation":
        rows = elicitation_prompt(request, {})["components"]
    elif request.kind == "denied":
        rows = views.denied_prompt(request, offer_retry=True)["components"]
    else:
        rows = views.question_components(request, {})
    found = set()
    for item in (item for row in rows for item in row["components"]):
        if "url" in item:  # a link button: it sends nothing
            continue
        action = item["custom_id"].split(":", 3)[3]
        if item["type"] == views.BUTTON:
            found.add((BUTTON, action, ()))
            continue
        offered = [o["value"] for o in item["options"]]
        for size in range(item["min_values"], item["max_values"] + 1):
            for values in combinations(offered, size):
                found.add((SELECT, action, values))
    for where, action, values in list(found):
        click = parse(request, action, where, values)
        if click is not None and click.kind in (*actions.TYPED, FILL):
            found.update((MODAL, click.modal(), picked) for picked in modal_values(click))
    if request.kind == "permission":  # ✅ / ❌ added to its message
        found.update((REACTION, emoji, ()) for emoji in actions.REACTIONS)
    return found


def modal_values(click: Action) -> list[tuple]:
    """What the modal a click opens may send with its text: the mode its select picks."""
    if click.kind == APPROVE_NOTES:
        return [(value,) for value in actions.NOTES_MODES]
    return [()]


@pytest.mark.parametrize("name", OFFERED)
def test_the_table_is_what_the_message_renders(name: str) -> None:
    """Render and parse share one grammar: every click the message allows is in the table
    above (so it parses), and the table holds nothing the message does not offer."""
    request = REQUESTS[name]
    assert rendered(request) == set(OFFERED[name])


def test_a_typed_click_opens_a_modal_that_parses_back_to_it() -> None:
    for name, table in OFFERED.items():
        for (where, _action, _values), click in table.items():
            if where == MODAL or click.kind not in actions.TYPED:
                continue
            for values in modal_values(click):
                back = parse(REQUESTS[name], click.modal(), MODAL, values)
                if click.kind == APPROVE_NOTES:  # the modal adds the mode picked in it
                    assert back is not None and back.kind == APPROVE_NOTES and back.mode
                else:
                    assert back == click


def test_a_long_plan_offers_its_first_100_steps_in_four_selects_five_at_a_time() -> None:
    request = MANY_STEPS
    assert parse(request, "plan:steps:3", SELECT, ["s76", "s100"]) == Action(
        STEP_NOTES, steps=(76, 100)
    )
    assert parse(request, "plan:steps:0", SELECT, ["s5", "s1"]) == Action(
        STEP_NOTES,
        steps=(1, 5),  # in the plan's order, whichever order the client sent
    )
    five = [f"s{k}" for k in range(1, 6)]
    assert parse(request, "plan:steps:0", SELECT, five).steps == (1, 2, 3, 4, 5)
    assert parse(request, "plan:steps:100", MODAL) == Action(STEP_NOTES, steps=(100,))
    for where, action, values in (
        (SELECT, "plan:steps:4", ["s101"]),  # past the 100 offered
        (SELECT, "plan:steps:0", ["s26"]),  # on the next select
        (SELECT, "plan:steps:1", ["s25"]),
        (SELECT, "plan:steps:0", [*five, "s6"]),  # six: a modal holds five
        (MODAL, "plan:steps:101", []),
        (MODAL, "plan:steps:1.2.3.4.5.6", []),
    ):
        assert parse(request, action, where, values) is None, (action, values)


def test_the_long_select_offers_its_first_24_options_and_other() -> None:
    request = question(q("Pick", [f"n{j}" for j in range(30)], multi=True))
    (row,) = views.question_components(request, {})
    (select,) = row["components"]
    values = [o["value"] for o in select["options"]]
    assert values == [f"o{j}" for j in range(24)] + ["other"]
    assert parse(request, "q0", SELECT, values) == other(
        0, *range(24), label=", ".join(f"n{j}" for j in range(24))
    )
    assert parse(request, "q0", SELECT, ["o24"]) is None  # not shown
    assert parse(request, "q0:other:24", MODAL) is None


# --- what a click may not decide ------------------------------------------------------------

REFUSED = [
    # another kind's action, or another place's
    ("permission, suggestions", BUTTON, "plan:auto", ()),  # an approval with acceptEdits
    ("permission, suggestions", MODAL, "plan:keep", ()),
    ("permission, suggestions", BUTTON, "q0:o0", ()),
    ("permission, suggestions", SELECT, "q0", ("o0",)),
    ("permission, suggestions", MODAL, "q3:other", ()),
    ("permission, suggestions", SELECT, "allow", ("o0",)),
    ("permission, suggestions", MODAL, "allow", ()),
    ("permission, suggestions", MODAL, "always:0:s", ()),
    ("permission, suggestions", "elsewhere", "allow", ()),
    ("plan", BUTTON, "allow", ()),
    ("plan", BUTTON, "always:0:s", ()),
    ("plan", MODAL, "tell", ()),
    ("plan", MODAL, "plan:auto", ()),
    ("plan", SELECT, "plan:auto", ("o0",)),
    ("question", BUTTON, "allow", ()),
    ("question", MODAL, "tell", ()),
    ("question", BUTTON, "plan:review", ()),
    ("question", SELECT, "plan:steps:0", ("s1",)),
    ("question", MODAL, "plan:notes", ("auto",)),
    # a reaction on anything but a permission, or any other emoji
    ("plan", REACTION, "✅", ()),
    ("plan", REACTION, "❌", ()),
    ("question", REACTION, "✅", ()),
    ("permission", REACTION, "👍", ()),
    ("permission", REACTION, "allow", ()),
    ("permission", REACTION, "✔️", ()),
    ("permission", REACTION, "✅✅", ()),
    ("permission", REACTION, "", ()),
    ("permission", BUTTON, "✅", ()),
    ("permission", MODAL, "✅", ()),
    # a plan's notes: the mode the modal picked, and nothing else
    ("plan", MODAL, "plan:notes", ()),
    ("plan", MODAL, "plan:notes", ("fast",)),
    ("plan", MODAL, "plan:notes", ("auto", "review")),
    ("plan", MODAL, "plan:notes", ("acceptEdits",)),
    ("plan", SELECT, "plan:notes", ("auto",)),
    ("plan", BUTTON, "plan:notes:auto", ()),
    # steps the plan does not have, or not as its select and modal write them
    ("plan", BUTTON, "plan:steps:0", ()),
    ("plan", SELECT, "plan:steps:0", ()),
    ("plan", SELECT, "plan:steps:1", ("s1",)),  # one select: steps 1-25
    ("plan", SELECT, "plan:steps:0", ("s3",)),
    ("plan", SELECT, "plan:steps:0", ("s0",)),
    ("plan", SELECT, "plan:steps:0", ("s1", "s1")),
    ("plan", SELECT, "plan:steps:0", ("1",)),
    ("plan", SELECT, "plan:steps:0", ("s01",)),
    ("plan", SELECT, "plan:steps:00", ("s1",)),
    ("plan", SELECT, "plan:steps", ("s1",)),
    ("plan", SELECT, "plan:steps:", ("s1",)),
    ("plan", MODAL, "plan:steps:2.1", ()),  # the bot writes them in the plan's order
    ("plan", MODAL, "plan:steps:3", ()),
    ("plan", MODAL, "plan:steps:0", ()),
    ("plan", MODAL, "plan:steps:", ()),
    ("plan", MODAL, "plan:steps:1.1", ()),
    ("plan", MODAL, "plan:steps:1..2", ()),
    ("plan", MODAL, "plan:steps:s1", ()),
    ("plan", MODAL, "plan:steps", ()),
    # an "always" that was not offered, or not as the message writes it
    ("permission", BUTTON, "always:0:s", ()),  # no suggestions at all
    ("permission", BUTTON, "scope:l", ()),
    ("permission, suggestions", BUTTON, "always:1:s", ()),  # suggestion 1 is not an object
    ("permission, suggestions", BUTTON, "always:4:s", ()),  # past the four offered
    ("permission, suggestions", BUTTON, "always:7:u", ()),  # no such suggestion
    ("permission, suggestions", BUTTON, "always:0:z", ()),  # no such scope
    ("permission, suggestions", BUTTON, "always:0:sl", ()),
    ("permission, suggestions", BUTTON, "always:0:", ()),
    ("permission, suggestions", BUTTON, "always:0", ()),
    ("permission, suggestions", BUTTON, "always", ()),
    ("permission, suggestions", BUTTON, "always:x:s", ()),
    ("permission, suggestions", BUTTON, "always:-1:s", ()),
    ("permission, suggestions", BUTTON, "always:00:s", ()),
    ("permission, suggestions", BUTTON, "always:٠:s", ()),  # a digit, not an ASCII one
    ("permission, suggestions", BUTTON, "always:0:s:s", ()),
    ("permission, suggestions", BUTTON, "scope:x", ()),
    ("permission, suggestions", BUTTON, "scope:", ()),
    ("permission, suggestions", BUTTON, "scope:s:l", ()),
    ("permission, a mode switch only", BUTTON, "scope:s", ()),  # no scope button
    ("permission, suggestions", BUTTON, "allow:", ()),
    ("permission, suggestions", BUTTON, "allow:now", ()),
    ("permission, suggestions", BUTTON, "Allow", ()),
    ("permission, suggestions", BUTTON, "", ()),
    # a question or option past the end
    ("question", BUTTON, "q1:o0", ()),  # no second question
    ("question", BUTTON, "q0:o2", ()),  # no third option
    ("question", BUTTON, "q0:o999", ()),
    ("question", BUTTON, "q0:o1000", ()),
    ("questions", BUTTON, "q4:o0", ()),  # the fifth question is never shown
    ("questions", BUTTON, "q4:other", ()),
    ("questions", BUTTON, "q3:o1", ()),  # its second option is not an object
    ("questions", BUTTON, "q2:o0", ()),  # no options
    ("questions", SELECT, "q1", ("o2",)),
    ("questions", MODAL, "q1:other:2", ()),
    ("question, many options", SELECT, "q0", ("o7",)),
    # a question's action of the wrong shape or place
    ("question", BUTTON, "q0", ()),
    ("question", BUTTON, "q0:o", ()),
    ("question", BUTTON, "q0:", ()),
    ("question", BUTTON, "q0:o0:o1", ()),
    ("question", BUTTON, "q0:1", ()),
    ("question", BUTTON, "q00:o0", ()),  # numbers are written one way
    ("question", BUTTON, "q0:o01", ()),
    ("question", BUTTON, "q-1:o0", ()),
    ("question", BUTTON, "qx:o0", ()),
    ("question", BUTTON, "o0", ()),
    ("question", BUTTON, "q0:other:0", ()),
    ("question", SELECT, "q0", ("o0",)),  # asked with buttons: it has no select
    ("question", SELECT, "q0:o0", ("o0",)),
    ("question", MODAL, "q0:o0", ()),
    ("question", MODAL, "q0:other:0", ()),  # its Other… button remembers no options
    ("question", MODAL, "qx:other", ()),
    ("question", MODAL, "q0:other:0:1", ()),
    ("question", MODAL, "q0:other:x", ()),
    ("question", MODAL, "q0:others", ()),
    ("question, several answers", BUTTON, "q0:o0", ()),  # asked with a select: no buttons
    ("question, several answers", BUTTON, "q0:other", ()),
    ("question, many options", BUTTON, "q0:o6", ()),
    ("question, many options", MODAL, "q0:other:1", ()),  # one answer: Other… comes alone
    # a select's values it could not have sent
    ("question, several answers", SELECT, "q0", ()),  # nothing picked
    ("question, several answers", SELECT, "q0", ("o3",)),  # past the end
    ("question, several answers", SELECT, "q0", ("o0", "o0")),  # twice
    ("question, several answers", SELECT, "q0", ("other", "other")),
    ("question, several answers", SELECT, "q0", ("o0", "o1", "o2", "other", "o0")),  # too many
    ("question, several answers", SELECT, "q0", ("Docs",)),
    ("question, several answers", SELECT, "q0", ("o00",)),
    ("question, several answers", SELECT, "q0", ("",)),
    ("question, several answers", SELECT, "q0:o0", ("o0",)),
    ("question, several answers", MODAL, "q0:other:0.0", ()),
    ("question, several answers", MODAL, "q0:other:0.3", ()),
    ("question, several answers", MODAL, "q0:other:0..1", ()),
    ("question, many options", SELECT, "q0", ("o0", "o1")),  # one answer only
    ("question, many options", SELECT, "q0", ("o0", "other")),
    # a form's, a link's or a refused call's action it could not have sent
    ("form", BUTTON, "e:fill:1", ()),  # one page only
    ("form", BUTTON, "e:fill:01", ()),
    ("form", BUTTON, "e:fill:", ()),
    ("form", BUTTON, "e:fill", ()),
    ("form", MODAL, "e:fill:1", ()),
    ("form", SELECT, "e:f0", ("v0",)),  # a text field: no select
    ("form", SELECT, "e:f1", ("v2",)),  # past its options
    ("form", SELECT, "e:f1", ("v0", "v1")),  # one of
    ("form", SELECT, "e:f1", ()),
    ("form", SELECT, "e:f1", ("v0", "v0")),
    ("form", SELECT, "e:f1", ("red",)),
    ("form", SELECT, "e:f9", ("v0",)),
    ("form", SELECT, "e:f01", ("v0",)),
    ("form", SELECT, "e:accept", ("v0",)),
    ("form", MODAL, "e:accept", ()),
    ("form", MODAL, "e:decline", ()),
    ("form", BUTTON, "e:f1", ()),
    ("form", BUTTON, "e:send", ()),
    ("form", BUTTON, "allow", ()),
    ("form", BUTTON, "retry", ()),
    ("link", BUTTON, "e:fill:0", ()),
    ("link", SELECT, "e:f1", ("v0",)),
    ("form, not for Discord", BUTTON, "e:accept", ()),
    ("form, not for Discord", BUTTON, "e:fill:0", ()),
    ("form, many fields", BUTTON, "e:fill:3", ()),
    ("form, many fields", SELECT, "e:f15", ("v0",)),  # typed in a modal: no select
    ("form, many fields", SELECT, "e:f14", ("v0", "v1", "v2")),  # more than maxItems
    ("form, many fields", SELECT, "e:f14", ()),  # fewer than minItems
    ("denied", BUTTON, "allow", ()),
    ("denied", MODAL, "retry", ()),
    ("denied", SELECT, "retry", ("v0",)),
    ("denied", BUTTON, "e:accept", ()),
    ("permission", BUTTON, "retry", ()),
    ("permission", BUTTON, "e:accept", ()),
    ("plan", BUTTON, "go_on", ()),
]


@pytest.mark.parametrize(("name", "where", "action", "values"), REFUSED)
def test_what_a_prompt_could_not_have_sent_decides_nothing(
    name: str, where: str, action: str, values: tuple
) -> None:
    assert parse(REQUESTS[name], action, where, values) is None


def test_a_request_of_an_unknown_kind_offers_nothing() -> None:
    request = permission()
    request.kind = "review"  # a newer bridge's kind, read by this one
    assert parse(request, "allow", BUTTON) is None


# --- the grammar agrees with what it names --------------------------------------------------


def test_scopes_are_claude_codes_destinations_in_the_scope_buttons_order() -> None:
    assert tuple(permissions.SCOPES) == actions.SCOPES
    assert "".join(actions.SCOPES) == permissions.SCOPE_ORDER
    assert tuple(views.SCOPE_LABELS) == actions.SCOPES


@pytest.mark.parametrize("suggestion", [RULES, SET_MODE, ADD_DIRS, {}, {"type": None}])
def test_the_scope_button_shows_for_a_scoped_suggestion(suggestion: dict) -> None:
    assert actions.has_scope(permission(suggestions=[suggestion])) == permissions.is_scoped(
        suggestion
    )


def test_an_empty_plan_has_no_steps_to_note() -> None:
    request = plan("   \n")
    assert parse(request, "plan:steps:0", SELECT, ["s1"]) is None
    assert parse(request, "plan:steps:1", MODAL) is None


def test_only_typed_kinds_open_a_modal() -> None:
    for kind in (ALLOW, DENY, ALWAYS, SCOPE, APPROVE, ANSWER, ACCEPT, PICK, RETRY, GO_ON):
        with pytest.raises(ValueError):
            Action(kind).modal()


def test_an_other_modal_opened_by_an_older_bridge_still_parses() -> None:
    """Before this grammar, a select's Other… picked alone opened ``q<i>:other:`` (an empty
    list of picks): such a modal, submitted after an upgrade, still answers."""
    request = REQUESTS["questions"]
    assert parse(request, "q1:other:", MODAL) == other(1)
