"""What a click on a prompt may decide: the grammar of a prompt's actions, both ways.

A prompt's ``custom_id`` (:func:`bridge.discord.custom_ids.prompt`) ends in an *action*.
``render/decisions.py`` puts every action on a button, select or modal with the builders
here, and the bot reads every click back with ``prompt_clicks.parse`` by the same grammar, so
the two cannot drift. What an action may be depends on the request (its kind, the
suggestions, questions and options it holds, the plan's steps) and on where it came from (a
button, a select menu, a modal's submit, a reaction on the prompt's message):

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

What a click does (``Action``) and the reading of a click (``parse``, what it refuses) are
``prompt_clicks``': only the bot reads clicks, so the hooks do not load them.

No imports (``bridge/claude/elicitation.py`` only when a form is laid out):
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
        i
        for i, f in enumerate(form)
        if f.kind in (forms.CHOICE, forms.CHOICES, forms.BOOLEAN)
        and len(f.options) <= FIELD_OPTIONS
    ]
    while True:
        typed = [i for i in range(len(form)) if i not in choosing]
        pages = [typed[k : k + PAGE_FIELDS] for k in range(0, len(typed), PAGE_FIELDS)]
        rows = len(choosing) + 1 + (1 if len(pages) > 1 else 0)
        if rows <= FORM_ROWS or not choosing:
            break
        choosing = choosing[:-1]  # the last choice field is typed instead
    return FormLayout(form, choosing, pages, len(pages) <= FORM_PAGES)
