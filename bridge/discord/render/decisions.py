"""Discord messages for Claude Code's prompts: permission, questions, a refused call; and the
component builders they share with the plan prompt (``render/plan_prompt.py``).

Pure functions. A prompt is a message payload (content + components as Discord JSON) whose
``custom_id``s carry the request id, so whoever receives a click — this bot or the next one
after a restart — knows which request it answers, and an action: every action, and which of
them a request offers, comes from ``bridge/discord/prompt_actions.py``, the same grammar the
bot parses clicks with.

The hook posts these payloads over REST (with the files they attach: a long plan, a long
change); the bot edits them through discord.py after rebuilding the same components with
:func:`question_components` / :func:`permission_components`, and opens the modals
``render/plan_prompt.py``'s ``plan_notes_modal`` / ``step_notes_modal`` describe.
"""

from __future__ import annotations

import os

from bridge.claude.permissions import rule_text
from bridge.discord import custom_ids
from bridge.discord import prompt_actions as actions
from bridge.discord.render import tool_call
from bridge.discord.render.tool_call import Files, OnDisk
from bridge.discord.render.visible import MARK_OPEN, reveal
from bridge.state.decisions import Request

CONTENT_LIMIT = 2000
BODY_LIMIT = 1700  # leaves room for the decision line appended when the prompt is answered
BUTTON_LABEL_LIMIT = 80
MODAL_TITLE_LIMIT = 45
SUMMARY_HEADER, SUMMARY_ANSWER = 60, 300  # the answers so far, shown under the questions

BUTTON, SELECT, ROW, TEXT_INPUT, LABEL = 2, 3, 1, 4, 18
PARAGRAPH = 2  # a text input's style
NOTE_LIMIT = 4000  # characters a text input takes
PRIMARY, SECONDARY, SUCCESS, DANGER = 1, 2, 3, 4

# Said under a prompt's title when its text shows hidden characters (render/visible.py).
REVEALED = "⚠️ Hidden or look-alike characters are shown as ⟦U+…⟧: what runs is what is shown."

SCOPE_LABELS = {  # how each "always allow" destination (bridge.claude.permissions) reads
    "s": "this session",
    "l": "this project (just me)",
    "p": "this project (shared)",
    "u": "all projects",
}


def custom_id(request_id: str, action: str, select: bool = False) -> str:
    """A prompt component's id: ``action`` from :mod:`bridge.discord.prompt_actions`."""
    return custom_ids.prompt(request_id, action, select=select)  # one home for the format


# --- permission -----------------------------------------------------------------------------

# The session's agent (a request's ``cli``) as a prompt names it; not bridge.agents' labels:
# the PermissionRequest hook renders this, and must not import the agents' modules.
SPEAKERS = {"claude": "Claude", "codex": "Codex"}


def permission_prompt(request: Request, on_disk: OnDisk = tool_call.UNREAD) -> tuple[dict, Files]:
    """The message for a permission dialog: what will happen (what the terminal's dialog
    shows: ``render/tool_call.py``; ``on_disk``: the file it writes, as the hook read it) and
    the buttons; and the files it attaches when that is too long to show."""
    tool = request.tool_name or "tool"
    home = os.path.expanduser("~").rstrip("/")
    shown, files = tool_call.describe(tool, request.tool_input, on_disk, home)
    who = speaker(request)
    title = f"🔐 **{who} wants to use {_inline(reveal(_label(tool), code=True))}**"
    payload = {
        "content": _fit(_titled(title, shown, "\n")),
        "components": permission_components(request, "s"),
    }
    return payload, files


def speaker(request: Request) -> str:
    """Who asks, as a prompt names it: Claude, or Codex for a Codex session's request."""
    return SPEAKERS.get(request.cli, "Claude")


def permission_components(request: Request, scope: str) -> list[dict]:
    rid = request.id
    rows = [
        _row(
            _button("Allow", custom_id(rid, actions.ALLOW), SUCCESS),
            _button("Deny", custom_id(rid, actions.DENY), DANGER),
            _button(
                f"Tell {speaker(request)} what to do instead…",
                custom_id(rid, actions.TELL),
                SECONDARY,
            ),
        )
    ]
    # A grant beyond this one call is never the loudest button: grey, its reach in words, so
    # the green one-time Allow stays the obvious choice.
    always = [
        _button(suggestion_label(s, scope), custom_id(rid, actions.always(n, scope)), SECONDARY)
        for n, s in actions.suggestions(request)
    ]
    if always:
        if actions.has_scope(request):
            label = f"↻ “Always” applies to: {SCOPE_LABELS[scope]}"
            always.append(_button(label, custom_id(rid, actions.rescope(scope)), SECONDARY))
        rows.append(_row(*always))
    return rows


def suggestion_label(suggestion: dict, scope: str) -> str:
    """What the button will allow, e.g. "Always allow Bash(npm test:*)"."""
    kind = suggestion.get("type")
    if kind == "addRules":
        rules = reveal(", ".join(rule_text(r) for r in suggestion.get("rules") or []), code=True)
        behavior = suggestion.get("behavior", "allow")
        verb = {"allow": "Always allow", "ask": "Always ask for", "deny": "Always deny"}.get(
            behavior, f"Always {behavior}"
        )
        text = f"{verb} {rules}"
    elif kind == "addDirectories":
        dirs = suggestion.get("directories") or []
        shown = ", ".join(from_home(str(d)) for d in dirs)
        text = "Allow access to " + reveal(shown, code=True)
    elif kind == "setMode":
        return _label(f"{_mode_phrase(suggestion.get('mode'))} for this session")
    else:
        text = f"Always allow ({kind})"
    return _label(f"{text} · {SCOPE_LABELS[scope]}")


def from_home(path: str) -> str:
    """``~/code/webshop`` for a path under the user's HOME (Claude Code runs as the same user),
    as they know it; a button shows 80 characters, and the home part is the least telling."""
    home = os.path.expanduser("~").rstrip("/")
    if home and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def _mode_phrase(mode: object) -> str:
    return {
        "acceptEdits": "Accept edits",
        "bypassPermissions": "Bypass permissions",
        "default": "Ask before edits",
        "plan": "Plan mode",
    }.get(str(mode), f"Mode {mode}")


def describe_tool_call(tool: str, tool_input: dict) -> str:
    """What will happen, in Markdown, without attachments (``render/tool_call.py``; hidden
    and look-alike characters shown: ``render/visible.py``)."""
    home = os.path.expanduser("~").rstrip("/")
    return tool_call.describe(tool, tool_input, tool_call.UNREAD, home)[0]


# --- questions ------------------------------------------------------------------------------


def question_prompt(request: Request) -> dict:
    questions = actions.questions(request)
    title = "❓ **Claude has a question**" if len(questions) == 1 else "❓ **Claude has questions**"
    parts = [_question_text(i, question, len(questions)) for i, question in enumerate(questions)]
    return {
        "content": _fit(_titled(title, "\n\n".join(parts), "\n\n")),
        "components": question_components(request, {}),
    }


def question_components(request: Request, answers: dict) -> list[dict]:
    """One row per question still unanswered (``answers`` maps question index → answer)."""
    rid = request.id
    rows = []
    for i, question in enumerate(actions.questions(request)):
        if str(i) in answers:
            continue
        if actions.by_select(question):
            rows.append(_row(_question_select(rid, i, question)))
        else:
            buttons = [
                _button(reveal(actions.label(o)), custom_id(rid, actions.option(i, j)), PRIMARY)
                for j, o in enumerate(actions.options(question))
            ]
            buttons.append(_button("Other…", custom_id(rid, actions.other(i)), SECONDARY))
            rows.append(_row(*buttons))
    return rows


def _question_select(rid: str, i: int, question: dict) -> dict:
    choices = []
    for j, o in enumerate(actions.options(question)[: actions.SELECT_OPTIONS]):
        choice = {"label": _label(reveal(actions.label(o)), 100), "value": actions.value(j)}
        if o.get("description"):
            choice["description"] = _label(reveal(str(o["description"])), 100)
        choices.append(choice)
    other = {"label": "Other…", "value": actions.OTHER_VALUE, "description": "Type your own answer"}
    choices.append(other)
    multi = bool(question.get("multiSelect"))
    header = _one_line(reveal(str(question.get("header") or f"Question {i + 1}")))
    return {
        "type": SELECT,
        "custom_id": custom_id(rid, actions.select(i), select=True),
        "placeholder": _label(f"{header}: pick {'one or more' if multi else 'one'}", 150),
        "min_values": 1,
        "max_values": len(choices) if multi else 1,
        "options": choices,
    }


def _question_text(i: int, question: dict, count: int) -> str:
    number = f"{i + 1}. " if count > 1 else ""
    header = question.get("header")
    head = f"**{number}{_shown(header)}** — " if header else f"**{number}**"
    lines = [head + _shown(question.get("question") or "")]
    if question.get("multiSelect"):
        lines[0] += " *(pick one or more)*"
    for option in question.get("options") or []:
        if not isinstance(option, dict):
            continue
        description = option.get("description")
        suffix = f" — {_shown(description)}" if description else ""
        lines.append(f"• **{_shown(option.get('label'))}**{suffix}")
    return "\n".join(lines)


def question_count(request: Request) -> int:
    return len(actions.questions(request))


def question_text(request: Request, index: int) -> str:
    """Question ``index``'s text: the key of its answer in what Claude Code reads."""
    return str(actions.questions(request)[index].get("question") or "")


def question_header(request: Request, index: int) -> str:
    """Question ``index``'s header as shown (hidden characters made visible)."""
    question = actions.questions(request)[index]
    return _shown(question.get("header") or question.get("question") or f"Question {index + 1}")


def answers_summary(request: Request, answers: dict) -> str:
    lines = []
    for i in range(question_count(request)):
        if str(i) in answers:
            header = _label(question_header(request, i), SUMMARY_HEADER)
            answer = _label(reveal(str(answers[str(i)])), SUMMARY_ANSWER)
            lines.append(f"✅ **{header}:** {answer}")
    return "\n".join(lines)


# --- a call auto mode refused (PermissionDenied) --------------------------------------------


def denied_prompt(request: Request, offer_retry: bool) -> dict:
    """The notice of a tool call auto mode's safety check refused, with **Let Claude try
    again** when ``offer_retry``: the model may make the call once more, and the check
    judges it again (the button overrides nothing)."""
    tool = request.tool_name or "tool"
    reason = _one_line(request.reason) or "no reason given"
    lines = [
        f"🛡️ **Auto mode blocked {_inline(tool)}**",
        describe_tool_call(tool, request.tool_input),
        f"> Auto mode: {reason[:300]}",
    ]
    if offer_retry:
        lines.append(
            "-# Claude is told it was refused and goes on. **Let Claude try again** allows "
            "one more try, which auto mode's check judges again."
        )
    rid = request.id
    buttons = [
        _button("Let Claude try again", custom_id(rid, actions.D_RETRY), PRIMARY),
        _button("Go on without it", custom_id(rid, actions.D_GO_ON), SECONDARY),
    ]
    return {
        "content": _fit("\n".join(lines)),
        "components": [_row(*buttons)] if offer_retry else [],
    }


# --- after the decision ---------------------------------------------------------------------


def modal(custom: str, title: str, label: str, placeholder: str) -> dict:
    """A modal with one paragraph input (Discord JSON, for the tests and the bot alike)."""
    return {
        "custom_id": custom,
        "title": _label(title, MODAL_TITLE_LIMIT),
        "label": _label(label, 45),
        "placeholder": _label(placeholder, 100),
    }


# --- small pieces ---------------------------------------------------------------------------


def _row(*components: dict) -> dict:
    return {"type": ROW, "components": list(components)}


def _button(label: str, custom: str, style: int) -> dict:
    return {"type": BUTTON, "style": style, "label": _label(label), "custom_id": custom}


def _label(text: str, limit: int = BUTTON_LABEL_LIMIT) -> str:
    text = _one_line(text) or "…"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one_line(text: object) -> str:
    return " ".join(str(text or "").split())


def _shown(text: object) -> str:
    """Text from the model as one line, hidden characters made visible first (``split``
    would turn some of them, such as U+2028, into plain spaces)."""
    return _one_line(reveal(str(text or "")))


def _path(path: object) -> str:
    return _one_line(reveal(str(path), code=True)).replace("`", "'")


def _titled(title: str, body: str, gap: str) -> str:
    """The title, the note about hidden characters when the body shows any (right under the
    title, where a long body's cut never reaches), then the body."""
    note = f"\n{REVEALED}" if MARK_OPEN in title + body else ""
    return f"{title}{note}{gap}{body}"


def _inline(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _fit(text: str) -> str:
    return text if len(text) <= BODY_LIMIT else text[: BODY_LIMIT - 1] + "…"
