"""What a click on a prompt does: :class:`Action` (one click, read) and :func:`parse`, which reads
a click back by the grammar ``prompt_actions`` writes (its docstring has the table: which action
each request offers, from where). Its own module: only the bot reads clicks, so the hooks, which
build prompts with ``prompt_actions``, never load this one.

Anything the prompt's own message could not have sent parses as None and decides nothing:
another kind's action, an index past the end, an "always" on a suggestion that was not
offered, a select on a question asked with buttons, a number written another way
(``q00``), a step the plan does not have, a crafted custom_id, a reaction on a plan.
:func:`bridge.bot.client.allowed` (for a reaction, ``Server.may_act``) has already checked who
clicked; this checks what they clicked.
"""

from __future__ import annotations

from bridge.discord.prompt_actions import (
    ACCEPT,
    ALLOW,
    ALWAYS,
    ANSWER,
    APPROVE,
    APPROVE_NOTES,
    BUTTON,
    D_GO_ON,
    D_RETRY,
    DENY,
    E_BUTTONS,
    FILL,
    GO_ON,
    KEEP_PLANNING,
    MODAL,
    NOTES_MODES,
    OTHER,
    OTHER_VALUE,
    PICK,
    PLAN_KEEP,
    PLAN_MODES,
    PLAN_NOTES,
    PLAN_STEPS,
    REACTION,
    REACTIONS,
    RETRY,
    SCOPE,
    SCOPES,
    SELECT,
    SELECT_OPTIONS,
    STEP_NOTES,
    STEP_NOTES_MOST,
    STEP_SELECTS,
    STEPS_PER_SELECT,
    TELL,
    by_select,
    fill,
    form_layout,
    has_scope,
    label,
    options,
    other,
    questions,
    step_notes,
    suggestions,
)

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~5 ms
if TYPE_CHECKING:
    from bridge.state.decisions import Request


class Action:
    """One click, read: what it does, and what it names. ``suggestion`` and ``scope``: an
    "always" (``scope`` also the scope button's); ``mode``: a plan's approval; ``question``,
    ``picked`` (option numbers) and ``label`` (their labels, joined): a question's answer, or
    a form field's choices; ``page``: a form's page of text fields; ``steps``: the plan steps
    notes are asked on (numbers from 1)."""

    __slots__ = (
        "kind",
        "label",
        "mode",
        "page",
        "picked",
        "question",
        "scope",
        "steps",
        "suggestion",
    )

    def __init__(
        self,
        kind: str,
        *,
        suggestion: int | None = None,
        scope: str | None = None,
        mode: str | None = None,
        question: int | None = None,
        picked: tuple[int, ...] = (),
        label: str = "",
        page: int | None = None,
        steps: tuple[int, ...] = (),
    ) -> None:
        self.kind = kind
        self.steps = steps
        self.suggestion = suggestion
        self.scope = scope
        self.mode = mode
        self.question = question  # a question's number; a form field's (PICK)
        self.picked = picked
        self.label = label
        self.page = page  # FILL: the form's page of text fields

    def modal(self) -> str:
        """The action of the modal this click opens (a :data:`TYPED` kind): its submit parses
        back to this same action, with the text typed."""
        if self.kind == TELL:
            return TELL
        if self.kind == KEEP_PLANNING:
            return PLAN_KEEP
        if self.kind == APPROVE_NOTES:
            return PLAN_NOTES
        if self.kind == STEP_NOTES and self.steps:
            return step_notes(self.steps)
        if self.kind == OTHER and self.question is not None:
            return other(self.question, self.picked)
        if self.kind == FILL and self.page is not None:
            return fill(self.page)
        raise ValueError(f"{self.kind} opens no modal")

    def answer(self, text: str = "") -> str:
        """A question's answer: the options picked, then the text typed."""
        return ", ".join(part for part in (self.label, text) if part)

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, that: object) -> bool:
        return type(that) is Action and that._fields() == self._fields()

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a dict: equal by value

    def __repr__(self) -> str:
        fields = zip(self.__slots__, self._fields(), strict=True)
        shown = (f"{n}={v!r}" for n, v in fields if v not in (None, (), ""))
        return f"Action({', '.join(shown)})"


def parse(
    request: Request, action: str, where: str, values: tuple[str, ...] | list[str] = ()
) -> Action | None:
    """What ``action`` does on this request, coming from ``where`` (:data:`BUTTON`,
    :data:`SELECT` with the ``values`` picked, or :data:`MODAL`); None if the request's own
    prompt could not have sent it."""
    if request.kind == "permission":
        return _permission(request, action, where)
    if request.kind == "plan":
        return _plan(request, action, where, list(values))
    if request.kind == "question":
        return _question(request, action, where, list(values))
    if request.kind == "elicitation":
        return _elicitation(request, action, where, list(values))
    if request.kind == "denied":
        return _denied(action, where)
    return None


def _elicitation(request: Request, action: str, where: str, values: list[str]) -> Action | None:
    layout = form_layout(request)
    url = request.tool_input.get("mode") == "url"
    if where == BUTTON and action in E_BUTTONS:
        kind = E_BUTTONS[action]
        return Action(kind) if kind != ACCEPT or layout.fits else None
    if action.startswith("e:fill:") and where in (BUTTON, MODAL) and not url:
        page = _number(action[len("e:fill:") :])
        return Action(FILL, page=page) if page is not None and page < len(layout.pages) else None
    if where == SELECT and action.startswith("e:f") and not url:
        field = _number(action[len("e:f") :])
        if field is None or field not in layout.selects:
            return None
        low, high = layout.select_range(field)
        offered = len(layout.fields[field].options)
        picked = [_number(v[1:]) if v.startswith("v") else None for v in values]
        numbers = [j for j in picked if j is not None and j < offered]
        if len(numbers) < len(picked) or len(set(numbers)) < len(numbers):
            return None
        if not low <= len(numbers) <= high:
            return None
        return Action(PICK, question=field, picked=tuple(numbers))
    return None


def _denied(action: str, where: str) -> Action | None:
    if where != BUTTON:
        return None
    return {D_RETRY: Action(RETRY), D_GO_ON: Action(GO_ON)}.get(action)


def _permission(request: Request, action: str, where: str) -> Action | None:
    if where == REACTION:
        kind = REACTIONS.get(action)
        return Action(kind) if kind else None
    if where == MODAL:
        return Action(TELL) if action == TELL else None
    if where != BUTTON:
        return None
    if action in (ALLOW, DENY, TELL):
        return Action(action)
    parts = action.split(":")
    if parts[0] == ALWAYS and len(parts) == 3 and parts[2] in SCOPES:
        n = _number(parts[1])
        offered = n is not None and n in dict(suggestions(request))
        return Action(ALWAYS, suggestion=n, scope=parts[2]) if offered else None
    if parts[0] == SCOPE and len(parts) == 2 and parts[1] in SCOPES:
        return Action(SCOPE, scope=parts[1]) if has_scope(request) else None
    return None


def _plan(request: Request, action: str, where: str, values: list[str]) -> Action | None:
    if action == PLAN_KEEP and where in (BUTTON, MODAL):
        return Action(KEEP_PLANNING)
    if action in PLAN_MODES and where == BUTTON:
        return Action(APPROVE, mode=PLAN_MODES[action])
    if action == PLAN_NOTES and where == BUTTON:
        return Action(APPROVE_NOTES)
    if action == PLAN_NOTES and where == MODAL:
        mode = NOTES_MODES.get(values[0]) if len(values) == 1 else None
        return Action(APPROVE_NOTES, mode=mode) if mode else None
    if not action.startswith(PLAN_STEPS + ":"):
        return None
    rest = action[len(PLAN_STEPS) + 1 :]
    shown = min(plan_step_count(request), STEPS_PER_SELECT * STEP_SELECTS)
    if where == SELECT:
        page = _number(rest)
        if page is None or page * STEPS_PER_SELECT >= shown:
            return None
        first = page * STEPS_PER_SELECT + 1
        offered = range(first, min(first + STEPS_PER_SELECT, shown + 1))
        return _steps([_step_number(v) for v in values], offered)
    if where == MODAL:
        picked = [_number(p) for p in rest.split(".")]
        found = _steps(picked, range(1, shown + 1))
        return found if found is not None and list(found.steps) == picked else None  # as sent
    return None


def _steps(picked: list[int | None], offered: range) -> Action | None:
    """Notes asked on the steps ``picked`` (in the plan's order): one to five, each offered,
    none twice."""
    numbers = [n for n in picked if n is not None and n in offered]
    if not 1 <= len(picked) <= STEP_NOTES_MOST or len(numbers) < len(picked):
        return None
    if len(set(numbers)) < len(numbers):
        return None
    return Action(STEP_NOTES, steps=tuple(sorted(numbers)))


def plan_step_count(request: Request) -> int:
    from bridge.claude.plan_steps import count  # only a click on a plan's steps needs it

    return count(str(request.tool_input.get("plan") or ""))


def _step_number(text: str) -> int | None:
    """``s<k>``: a step as a select's value."""
    return _number(text[1:]) if text.startswith("s") else None


def _question(request: Request, action: str, where: str, values: list[str]) -> Action | None:
    parts = action.split(":")
    index = _number(parts[0][1:]) if parts[0].startswith("q") else None
    asked = questions(request)
    if index is None or index >= len(asked):
        return None
    question, rest = asked[index], parts[1:]
    if where == SELECT and not rest and by_select(question):
        return _picks(index, question, values)
    if where == BUTTON and len(rest) == 1 and not by_select(question):
        if rest[0] == OTHER_VALUE:
            return Action(OTHER, question=index)
        return _answer(ANSWER, index, question, [_option_number(rest[0])])
    if where == MODAL and 1 <= len(rest) <= 2 and rest[0] == OTHER_VALUE:
        picked = [_number(p) for p in rest[1].split(".")] if len(rest) == 2 and rest[1] else []
        if picked and not question.get("multiSelect"):
            return None  # only a select of several answers sends options with Other…
        return _answer(OTHER, index, question, picked, SELECT_OPTIONS)
    return None


def _picks(index: int, question: dict, values: list[str]) -> Action | None:
    """A select's values: options (as many as the select allows), with or without Other…"""
    offered = min(len(options(question)), SELECT_OPTIONS) + 1  # the options shown, Other…
    most = offered if question.get("multiSelect") else 1
    if not values or len(values) > most or len(set(values)) < len(values):
        return None
    picked = [_option_number(v) for v in values if v != OTHER_VALUE]
    kind = OTHER if len(picked) < len(values) else ANSWER
    return _answer(kind, index, question, picked, SELECT_OPTIONS)


def _answer(
    kind: str, index: int, question: dict, picked: list[int | None], shown: int | None = None
) -> Action | None:
    """Question ``index`` answered with the options ``picked``: each one the question offers
    (among the first ``shown``), none twice; else None."""
    offered = options(question)[:shown]
    numbers = [j for j in picked if j is not None and j < len(offered)]
    if len(numbers) < len(picked) or len(set(numbers)) < len(numbers):
        return None
    labels = ", ".join(label(offered[j]) for j in numbers)
    return Action(kind, question=index, picked=tuple(numbers), label=labels)


def _option_number(text: str) -> int | None:
    """``o<j>``: an option as a button's action and a select's value."""
    return _number(text[1:]) if text.startswith("o") else None


def _number(text: str) -> int | None:
    """A question, option or suggestion number as the prompt writes it (decimal, no sign, no
    leading zero, at most three digits), else None."""
    if not (text.isascii() and text.isdigit() and len(text) <= 3):
        return None
    return int(text) if str(int(text)) == text else None
