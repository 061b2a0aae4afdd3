"""What a click on a prompt may decide: the grammar of a prompt's actions, both ways.

A prompt's ``custom_id`` (:func:`bridge.discord.custom_ids.prompt`) ends in an *action*.
``render/decisions.py`` puts every action on a button, select or modal with the builders
here, and the bot reads every click back with :func:`parse`, so the two cannot drift. What
an action may be depends on the request (its kind, the suggestions, questions and options it
holds, the plan's steps) and on where it came from (a button, a select menu, a modal's
submit, a reaction on the prompt's message):

    where   request     action                      values          Action
    button  permission  allow | deny                                ALLOW | DENY
                        tell                                        TELL (opens the text modal)
                        always:<n>:<scope>                          ALWAYS: suggestion n, scope
                        scope:<scope>                               SCOPE: the scope shown
    modal   permission  tell                                        TELL: the text decides
    reaction permission ✅ | ❌                                      ALLOW | DENY
    button  plan        plan:auto | plan:review                     APPROVE: mode
                        plan:notes                                  APPROVE_NOTES (opens the modal)
                        plan:keep                                   KEEP_PLANNING (opens the modal)
    modal   plan        plan:notes                  auto | review   APPROVE_NOTES: the mode picked
                                                                    in the modal, the text typed
                        plan:keep                                   KEEP_PLANNING: the text decides
    select  plan        plan:steps:<p>              s<k>…           STEP_NOTES: steps picked (one to
                                                                    five; opens the modal)
    modal   plan        plan:steps:<k>[.<k>…]                       STEP_NOTES: a note per step
    button  question    q<i>:o<j>                                   ANSWER: question i, option j
                        q<i>:other                                  OTHER (opens the modal)
    select  question    q<i>                        o<j>…           ANSWER: the options picked
                                                    [o<j>…] other   OTHER (opens the modal)
    modal   question    q<i>:other[:<j>.<k>…]                       OTHER: the text, after the
                                                                    options picked in the select
    button  elicitation e:accept | e:decline | e:cancel                 ACCEPT | DECLINE | CANCEL
                        e:terminal                                  TO_TERMINAL
                        e:fill:<p>                                  FILL (opens the modal of
                                                                    the form's page p)
    select  elicitation e:f<i>                      v<j>…           PICK: field i, options j
    modal   elicitation e:fill:<p>                                  FILL: page p's text inputs
                                                                    (``f<i>``) are its fields
    button  denied      retry | go_on                               RETRY | GO_ON

``n`` counts the request's ``permission_suggestions`` (only the first four are offered, and
only objects); ``i`` its questions that are objects (the first four); ``j`` a question's
options that are objects. A question with more than four options, or several answers, is
asked with a select (the first 24 options, then Other…), the others with buttons. ``k`` is a
plan step's number (``bridge/claude/plan_steps.py``, from 1), offered 25 a select (select
``p`` from 0: steps 25p+1 to 25p+25), four selects at most; a reaction's action is its emoji.

An elicitation (an MCP server asking for input, ``bridge.claude.elicitation``) in form mode is
laid out by :func:`form_layout`: its fields are numbered ``i`` in the schema's order; fields
with choices (one of, several of, yes/no) are asked with a select of their own in the message
(``j`` counts the field's options) while the message has rows left, every other field (text,
numbers, choices beyond that) as a text input of a modal, five to a page ``p``. URL mode offers
only the buttons (and a link). A form Discord cannot hold (a field of another shape, more than
five pages) offers only Decline, Cancel and the terminal.

Anything the prompt's own message could not have sent parses as None and decides nothing:
another kind's action, an index past the end, an "always" on a suggestion that was not
offered, a select on a question asked with buttons, a number written another way
(``q00``), a step the plan does not have, a crafted custom_id, a reaction on a plan.
:func:`bridge.bot.client.allowed` (for a reaction, ``Server.may_act``) has already checked who
clicked; this checks what they clicked.

No imports (``plan_steps``, itself import-free, only when a plan's steps are parsed):
``render/decisions.py`` is on the PermissionRequest hook's path (this module costs it ~0.2 ms,
``-X importtime``; the hooks of every tool call do not load it).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from bridge.state.decisions import Request

# --- where a click came from ----------------------------------------------------------------

BUTTON, SELECT, MODAL, REACTION = "button", "select", "modal", "reaction"

# --- what a click does (Action.kind) --------------------------------------------------------

ALLOW = "allow"  # allow this call
DENY = "deny"
TELL = "tell"  # deny, telling Claude what to do instead
ALWAYS = "always"  # allow, and apply a permission suggestion at a scope
SCOPE = "scope"  # show the "always" buttons at the next scope
APPROVE = "approve"  # approve a plan, switching the permission mode
APPROVE_NOTES = "approve_notes"  # approve a plan with notes Claude reads with the approval
KEEP_PLANNING = "keep_planning"  # send a plan back, saying what should change
STEP_NOTES = "step_notes"  # send a plan back with a note on each of some of its steps
ANSWER = "answer"  # answer a question with options picked
OTHER = "other"  # answer a question with text typed (after the options picked, if any)
# a button or select opens a modal; its submit decides
TYPED = (TELL, APPROVE_NOTES, KEEP_PLANNING, STEP_NOTES, OTHER)
ACCEPT = "accept"  # send the form (checked first), or say the link was followed
DECLINE = "decline"
CANCEL = "cancel"
TO_TERMINAL = "to_terminal"  # give no answer: Claude Code shows its own dialog
FILL = "fill"  # a page of the form's text fields (a modal)
PICK = "pick"  # a form field's choices, picked in its select
RETRY = "retry"  # a refused call: the model may try again
GO_ON = "go_on"  # … or not

# --- the action strings (a custom_id's part after the request id) ---------------------------

SCOPES = ("s", "l", "p", "u")  # the "always" scopes (bridge.claude.permissions.SCOPES)
PLAN_AUTO, PLAN_REVIEW, PLAN_KEEP = "plan:auto", "plan:review", "plan:keep"
PLAN_NOTES, PLAN_STEPS = "plan:notes", "plan:steps"
PLAN_MODES = {PLAN_AUTO: "acceptEdits", PLAN_REVIEW: "default"}  # Claude Code's mode names
NOTES_MODES = {"auto": "acceptEdits", "review": "default"}  # the mode select of plan:notes
REACTIONS = {"✅": ALLOW, "❌": DENY}  # an emoji on a permission prompt, as its button
STEPS_PER_SELECT = 25  # a select's options
STEP_SELECTS = 4  # the rows under the plan's buttons
STEP_NOTES_MOST = 5  # a modal holds five fields
OTHER_VALUE = "other"  # the Other… entry of a question's select menu
SUGGESTIONS_SHOWN = 4
QUESTIONS_SHOWN = 4
BUTTON_OPTIONS = 4  # more options than this (or several answers): a select menu
SELECT_OPTIONS = 24  # a select holds 25 entries: the first 24 options, then Other…
E_ACCEPT, E_DECLINE, E_CANCEL, E_TERMINAL = "e:accept", "e:decline", "e:cancel", "e:terminal"
E_BUTTONS = {E_ACCEPT: ACCEPT, E_DECLINE: DECLINE, E_CANCEL: CANCEL, E_TERMINAL: TO_TERMINAL}
D_RETRY, D_GO_ON = "retry", "go_on"
FORM_ROWS = 5  # a message's rows: the selects, then the buttons
PAGE_FIELDS = 5  # a modal holds five text inputs
FORM_PAGES = 5  # one row of "Fill in…" buttons
FIELD_OPTIONS = 25  # a select holds 25 entries


def always(suggestion: int, scope: str) -> str:
    return f"{ALWAYS}:{suggestion}:{scope}"


def rescope(scope: str) -> str:
    """The scope button, showing ``scope`` (a click shows the next one)."""
    return f"{SCOPE}:{scope}"


def option(question: int, option: int) -> str:
    return f"q{question}:{value(option)}"


def other(question: int, picked: tuple[int, ...] = ()) -> str:
    """Question ``question``'s Other…: a button, or the modal it opens (with the options
    already picked in the select, which the modal's submit adds to the text)."""
    return f"q{question}:{OTHER_VALUE}" + (":" + ".".join(map(str, picked)) if picked else "")


def select(question: int) -> str:
    return f"q{question}"


def value(option: int) -> str:
    """An option as a select menu's value (and the end of its button's action)."""
    return f"o{option}"


def step_select(page: int) -> str:
    """The select of steps ``25 * page + 1`` to ``25 * page + 25``."""
    return f"{PLAN_STEPS}:{page}"


def step_value(number: int) -> str:
    """A plan step as a select's value, and as the field of its note in the modal."""
    return f"s{number}"


def step_notes(numbers: tuple[int, ...]) -> str:
    """The modal asking a note on each of these steps."""
    return f"{PLAN_STEPS}:" + ".".join(map(str, numbers))


# --- what a request offers ------------------------------------------------------------------


def suggestions(request: Request) -> list[tuple[int, dict]]:
    """The permission suggestions offered as "always" buttons, with their numbers."""
    shown = request.permission_suggestions[:SUGGESTIONS_SHOWN]
    return [(n, s) for n, s in enumerate(shown) if isinstance(s, dict)]


def has_scope(request: Request) -> bool:
    """Whether the prompt shows the scope button: a suggestion that is saved somewhere (a mode
    switch is only ever for the session: ``bridge.claude.permissions.is_scoped``)."""
    return any(s.get("type") != "setMode" for _, s in suggestions(request))


def questions(request: Request) -> list[dict]:
    found = request.tool_input.get("questions")
    if not isinstance(found, list):
        return []
    return [q for q in found if isinstance(q, dict)][:QUESTIONS_SHOWN]


def options(question: dict) -> list[dict]:
    found = question.get("options")
    return [o for o in found if isinstance(o, dict)] if isinstance(found, list) else []


def by_select(question: dict) -> bool:
    """Whether a question is asked with a select menu rather than buttons."""
    return bool(question.get("multiSelect")) or len(options(question)) > BUTTON_OPTIONS


def label(option: dict) -> str:
    return str(option.get("label"))


def fill(page: int) -> str:
    """The "Fill in…" button of the form's page ``page``, and the modal it opens."""
    return f"e:fill:{page}"


def pick(field: int) -> str:
    """The select of the form's field ``field``."""
    return f"e:f{field}"


def field_input(field: int) -> str:
    """The text input of field ``field`` in a page's modal."""
    return f"f{field}"


def choice(option: int) -> str:
    """An option of a field's select, as its value."""
    return f"v{option}"


class FormLayout:
    """How a form is asked on Discord: ``selects`` (field numbers asked with a select in
    the message), ``pages`` (the field numbers of each modal of text inputs), ``fits``
    (False: Discord cannot hold it, and nothing of it is offered)."""

    __slots__ = ("fields", "fits", "pages", "selects")

    def __init__(self, fields: list, selects: list[int], pages: list[list[int]], fits: bool):
        self.fields = fields
        self.selects = selects
        self.pages = pages
        self.fits = fits

    def select_range(self, field: int) -> tuple[int, int]:
        """How many values field ``field``'s select takes (min, max)."""
        from bridge.claude import elicitation as forms

        found = self.fields[field]
        if found.kind != forms.CHOICES:
            return 1, 1
        count = len(found.options)
        low = int(found.minimum) if found.minimum is not None else 0
        high = int(found.maximum) if found.maximum is not None else count
        return max(0, min(low, count)), max(1, min(high, count))


def form_layout(request: Request) -> FormLayout:
    """The layout of an elicitation's form (see the module's docstring)."""
    from bridge.claude import elicitation as forms

    form = forms.fields(request.tool_input.get("requested_schema"))
    if request.tool_input.get("mode") == "url":
        return FormLayout(form, [], [], True)
    if any(f.kind == forms.UNSUPPORTED for f in form):
        return FormLayout(form, [], [], False)
    choosing = [
        i for i, f in enumerate(form)
        if f.kind in (forms.CHOICE, forms.CHOICES, forms.BOOLEAN)
        and len(f.options) <= FIELD_OPTIONS
    ]  # fmt: skip
    while True:
        typed = [i for i in range(len(form)) if i not in choosing]
        pages = [typed[k : k + PAGE_FIELDS] for k in range(0, len(typed), PAGE_FIELDS)]
        rows = len(choosing) + 1 + (1 if len(pages) > 1 else 0)
        if rows <= FORM_ROWS or not choosing:
            break
        choosing = choosing[:-1]  # the last choice field is typed instead
    return FormLayout(form, choosing, pages, len(pages) <= FORM_PAGES)


# --- what a click does ----------------------------------------------------------------------


class Action:
    """One click, read: what it does, and what it names. ``suggestion`` and ``scope``: an
    "always" (``scope`` also the scope button's); ``mode``: a plan's approval; ``question``,
    ``picked`` (option numbers) and ``label`` (their labels, joined): a question's answer, or
    a form field's choices; ``page``: a form's page of text fields; ``steps``: the plan steps
    notes are asked on (numbers from 1)."""

    __slots__ = (
        "kind", "label", "mode", "page", "picked", "question", "scope", "steps", "suggestion"
    )  # fmt: skip

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
