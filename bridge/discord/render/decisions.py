"""Discord messages for Claude Code's prompts: permission, questions, plan approval.

Pure functions. A prompt is a message payload (content + components as Discord JSON) whose
``custom_id``s carry the request id, so whoever receives a click — this bot or the next one
after a restart — knows which request it answers:

    db:p:<id>:allow | deny | tell                     permission: once / no / a modal for text
    db:p:<id>:always:<n>:<scope>  db:p:<id>:scope:<scope>   "always allow" suggestion n; scope cycle
    db:p:<id>:q<i>:o<j> | q<i>:other[:<j>.<k>]        question i: option j, or free text
    db:s:<id>:q<i>                                    question i's select menu (multiSelect / many)
    db:p:<id>:plan:auto | plan:review | plan:keep     plan approval

The hook posts these payloads over REST; the bot edits them through discord.py after
rebuilding the same components with :func:`question_components` / :func:`permission_components`.
"""

from __future__ import annotations

import difflib
import json

from bridge.claude.permissions import is_scoped, rule_text
from bridge.discord import custom_ids
from bridge.state.decisions import Decision, Request

CONTENT_LIMIT = 2000
BODY_LIMIT = 1700  # leaves room for the decision line appended when the prompt is answered
BUTTON_LABEL_LIMIT = 80
SELECT_OPTION_LIMIT = 25
MODAL_TITLE_LIMIT = 45
PLAN_EXCERPT = 1200
SUMMARY_HEADER, SUMMARY_ANSWER = 60, 300  # the answers so far, shown under the questions

BUTTON, SELECT, ROW = 2, 3, 1
PRIMARY, SECONDARY, SUCCESS, DANGER = 1, 2, 3, 4

OTHER = "other"
SCOPE_LABELS = {  # how each "always allow" destination (bridge.claude.permissions) reads
    "s": "this session",
    "l": "this project (just me)",
    "p": "this project (shared)",
    "u": "all projects",
}


def custom_id(request_id: str, *action: str | int, select: bool = False) -> str:
    return custom_ids.prompt(request_id, *action, select=select)  # one home for the format


# --- permission -----------------------------------------------------------------------------


def permission_prompt(request: Request) -> dict:
    """The message for a permission dialog: what will happen, and the buttons."""
    tool = request.tool_name or "tool"
    body = f"🔐 **Claude wants to use {_inline(tool)}**\n" + describe_tool_call(
        tool, request.tool_input
    )
    return {
        "content": _fit(body),
        "components": permission_components(request, "s"),
    }


def permission_components(request: Request, scope: str) -> list[dict]:
    rid = request.id
    rows = [
        _row(
            _button("Allow", custom_id(rid, "allow"), SUCCESS),
            _button("Deny", custom_id(rid, "deny"), DANGER),
            _button("Tell Claude what to do instead…", custom_id(rid, "tell"), SECONDARY),
        )
    ]
    suggestions = request.permission_suggestions
    always = [
        _button(suggestion_label(s, scope), custom_id(rid, "always", n, scope), PRIMARY)
        for n, s in enumerate(suggestions[:4])
        if isinstance(s, dict)
    ]
    if always:
        if any(is_scoped(s) for s in suggestions[:4] if isinstance(s, dict)):
            label = f"Scope: {SCOPE_LABELS[scope]} ↻"
            always.append(_button(label, custom_id(rid, "scope", scope), SECONDARY))
        rows.append(_row(*always))
    return rows


def suggestion_label(suggestion: dict, scope: str) -> str:
    """What the button will allow, e.g. "Always allow Bash(npm test:*)"."""
    kind = suggestion.get("type")
    if kind == "addRules":
        rules = ", ".join(rule_text(r) for r in suggestion.get("rules") or [])
        behavior = suggestion.get("behavior", "allow")
        verb = {"allow": "Always allow", "ask": "Always ask for", "deny": "Always deny"}.get(
            behavior, f"Always {behavior}"
        )
        text = f"{verb} {rules}"
    elif kind == "addDirectories":
        text = "Allow access to " + ", ".join(suggestion.get("directories") or [])
    elif kind == "setMode":
        return _label(f"{_mode_phrase(suggestion.get('mode'))} for this session")
    else:
        text = f"Always allow ({kind})"
    return _label(f"{text} · {SCOPE_LABELS[scope]}")


def _mode_phrase(mode: object) -> str:
    return {
        "acceptEdits": "Accept edits",
        "bypassPermissions": "Bypass permissions",
        "default": "Ask before edits",
        "plan": "Plan mode",
    }.get(str(mode), f"Mode {mode}")


def describe_tool_call(tool: str, tool_input: dict) -> str:
    """What will happen, in Markdown: a command, a diff, the start of a file, or the JSON."""
    if tool == "Bash" and isinstance(tool_input.get("command"), str):
        text = _code_block(tool_input["command"], "sh", 1200)
        description = tool_input.get("description")
        return text + (f"\n> {_one_line(description)}" if description else "")
    if tool in ("Edit", "MultiEdit") and tool_input.get("file_path"):
        return f"**Edit** `{_one_line(tool_input['file_path'])}`\n" + _code_block(
            _compact_diff(tool_input), "diff", 1300
        )
    if tool == "Write" and tool_input.get("file_path"):
        content = str(tool_input.get("content") or "")
        lines = content.count("\n") + (0 if content.endswith("\n") else 1)
        head = f"**Write** `{_one_line(tool_input['file_path'])}` ({lines} lines)\n"
        return head + _code_block(content, "", 1200)
    return _code_block(json.dumps(tool_input, indent=1, ensure_ascii=False), "json", 1400)


def _compact_diff(tool_input: dict) -> str:
    edits = tool_input.get("edits") or [tool_input]
    lines: list[str] = []
    for edit in edits:
        old = str(edit.get("old_string") or "").splitlines()
        new = str(edit.get("new_string") or "").splitlines()
        diff = difflib.unified_diff(old, new, lineterm="", n=1)
        lines.extend(line for line in diff if not line.startswith(("---", "+++", "@@")))
    return "\n".join(lines) or "(no textual change)"


# --- questions ------------------------------------------------------------------------------


def question_prompt(request: Request) -> dict:
    questions = _questions(request)
    title = "❓ **Claude has a question**" if len(questions) == 1 else "❓ **Claude has questions**"
    parts = [title]
    for i, question in enumerate(questions):
        parts.append(_question_text(i, question, len(questions)))
    return {
        "content": _fit("\n\n".join(parts)),
        "components": question_components(request, {}),
    }


def question_components(request: Request, answers: dict) -> list[dict]:
    """One row per question still unanswered (``answers`` maps question index → answer)."""
    rid = request.id
    rows = []
    for i, question in enumerate(_questions(request)):
        if str(i) in answers:
            continue
        options = [o for o in question.get("options") or [] if isinstance(o, dict)]
        if question.get("multiSelect") or len(options) > 4:
            rows.append(_row(_question_select(rid, i, question, options)))
        else:
            buttons = [
                _button(str(o.get("label")), custom_id(rid, f"q{i}", f"o{j}"), PRIMARY)
                for j, o in enumerate(options)
            ]
            buttons.append(_button("Other…", custom_id(rid, f"q{i}", OTHER), SECONDARY))
            rows.append(_row(*buttons))
    return rows


def _question_select(rid: str, i: int, question: dict, options: list[dict]) -> dict:
    choices = [
        {
            "label": _label(str(o.get("label")), 100),
            "value": f"o{j}",
            **({"description": _label(str(o["description"]), 100)} if o.get("description") else {}),
        }
        for j, o in enumerate(options[: SELECT_OPTION_LIMIT - 1])
    ]
    choices.append({"label": "Other…", "value": OTHER, "description": "Type your own answer"})
    multi = bool(question.get("multiSelect"))
    header = _one_line(question.get("header") or f"Question {i + 1}")
    return {
        "type": SELECT,
        "custom_id": custom_id(rid, f"q{i}", select=True),
        "placeholder": _label(f"{header}: pick {'one or more' if multi else 'one'}", 150),
        "min_values": 1,
        "max_values": len(choices) if multi else 1,
        "options": choices,
    }


def _question_text(i: int, question: dict, count: int) -> str:
    number = f"{i + 1}. " if count > 1 else ""
    header = question.get("header")
    head = f"**{number}{_one_line(header)}** — " if header else f"**{number}**"
    lines = [head + _one_line(question.get("question") or "")]
    if question.get("multiSelect"):
        lines[0] += " *(pick one or more)*"
    for option in question.get("options") or []:
        if not isinstance(option, dict):
            continue
        description = option.get("description")
        suffix = f" — {_one_line(description)}" if description else ""
        lines.append(f"• **{_one_line(option.get('label'))}**{suffix}")
    return "\n".join(lines)


def option_label(request: Request, question_index: int, value: str) -> str | None:
    """The label of option ``o<j>`` of a question, or None if there is no such option."""
    questions = _questions(request)
    if not (0 <= question_index < len(questions)) or not value.startswith("o"):
        return None
    options = [o for o in questions[question_index].get("options") or [] if isinstance(o, dict)]
    j = _index(value[1:])
    if j is None or j >= len(options):
        return None
    return str(options[j].get("label"))


def question_count(request: Request) -> int:
    return len(_questions(request))


def question_text(request: Request, index: int) -> str:
    return str(_questions(request)[index].get("question") or "")


def question_header(request: Request, index: int) -> str:
    question = _questions(request)[index]
    return _one_line(question.get("header") or question.get("question") or f"Question {index + 1}")


def answers_summary(request: Request, answers: dict) -> str:
    lines = []
    for i in range(question_count(request)):
        if str(i) in answers:
            header = _label(question_header(request, i), SUMMARY_HEADER)
            lines.append(f"✅ **{header}:** {_label(answers[str(i)], SUMMARY_ANSWER)}")
    return "\n".join(lines)


def _questions(request: Request) -> list[dict]:
    questions = request.tool_input.get("questions")
    if not isinstance(questions, list):
        return []
    return [q for q in questions if isinstance(q, dict)][:4]


# --- plan -----------------------------------------------------------------------------------


def plan_prompt(request: Request) -> tuple[dict, bytes | None]:
    """The plan message, and the full plan as a file when it is too long to show."""
    plan = str(request.tool_input.get("plan") or "").strip() or "(empty plan)"
    head = "📋 **Claude's plan is ready for review**\n"
    attach = len(plan) > BODY_LIMIT - len(head) - 40
    excerpt = _balance_fences(plan[:PLAN_EXCERPT].rstrip() if attach else plan)
    body = excerpt + "\n…\n*(full plan attached: plan.md)*" if attach else excerpt
    rid = request.id
    payload = {
        "content": _fit(head + body),
        "components": [
            _row(
                _button("Approve, auto-accept edits", custom_id(rid, "plan", "auto"), SUCCESS),
                _button("Approve, review each edit", custom_id(rid, "plan", "review"), PRIMARY),
                _button("Keep planning…", custom_id(rid, "plan", "keep"), SECONDARY),
            )
        ],
    }
    return payload, (plan.encode() if attach else None)


# --- which actions a prompt has -------------------------------------------------------------

BUTTON_CLICK, SELECT_PICK, MODAL_SUBMIT = "button", "select", "modal"
PLAN_ACTIONS = ("plan:auto", "plan:review", "plan:keep")


def accepts(request: Request, action: str, where: str) -> bool:
    """Whether ``action`` (a custom_id's part after the request id) is one this prompt's own
    message could have sent: a ``where`` (button, select or modal) of the prompt's kind, of
    the right shape, naming a suggestion, question or option the request has. A click the
    bot did not render (a crafted custom_id) is refused before anything reads its parts."""
    if request.kind == "permission":
        return _permission_accepts(request, action, where)
    if request.kind == "plan":
        return action in PLAN_ACTIONS if where == BUTTON_CLICK else action == "plan:keep"
    if request.kind == "question":
        return _question_accepts(request, action, where)
    return False


def _permission_accepts(request: Request, action: str, where: str) -> bool:
    if where == MODAL_SUBMIT:
        return action == "tell"
    if where != BUTTON_CLICK:
        return False
    if action in ("allow", "deny", "tell"):
        return True
    parts = action.split(":")
    shown = request.permission_suggestions[:4]  # the buttons number them in this list
    if parts[0] == "always" and len(parts) == 3:
        n = _index(parts[1])
        offered = n is not None and n < len(shown) and isinstance(shown[n], dict)
        return offered and parts[2] in SCOPE_LABELS
    if parts[0] == "scope" and len(parts) == 2:
        scoped = any(is_scoped(s) for s in shown if isinstance(s, dict))
        return scoped and parts[1] in SCOPE_LABELS
    return False


def _question_accepts(request: Request, action: str, where: str) -> bool:
    parts = action.split(":")
    index = _index(parts[0][1:]) if parts[0].startswith("q") else None
    questions = _questions(request)
    if index is None or index >= len(questions):
        return False
    options = [o for o in questions[index].get("options") or [] if isinstance(o, dict)]
    if where == SELECT_PICK:
        return len(parts) == 1
    if where == BUTTON_CLICK:
        if len(parts) != 2:
            return False
        if parts[1] == OTHER:
            return True
        option = _index(parts[1][1:]) if parts[1].startswith("o") else None
        return option is not None and option < len(options)
    if where == MODAL_SUBMIT:
        if len(parts) == 2:
            return parts[1] == OTHER
        if len(parts) != 3 or parts[1] != OTHER:
            return False
        picked = [_index(p) for p in parts[2].split(".") if p]
        return all(p is not None and p < len(options) for p in picked)
    return False


def _index(text: str) -> int | None:
    """A small non-negative decimal (a question, option or suggestion number), else None."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 3 else None


# --- after the decision ---------------------------------------------------------------------


def closed_content(original: str, outcome_line: str) -> str:
    """The prompt's text with what happened appended (buttons are removed separately)."""
    room = CONTENT_LIMIT - len(outcome_line) - 2
    text = original if len(original) <= room else original[: room - 1] + "…"
    return f"{text}\n\n{outcome_line}"


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


def _inline(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _code_block(text: str, language: str, limit: int) -> str:
    if len(text) > limit:
        text = text[:limit].rstrip() + f"\n… ({len(text) - limit} more characters)"
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"


def _balance_fences(text: str) -> str:
    """An excerpt cut inside a code block must not turn the rest of the message into code."""
    opened = sum(1 for line in text.splitlines() if line.lstrip().startswith("```")) % 2
    return text + "\n```" if opened else text


def _fit(text: str) -> str:
    return text if len(text) <= BODY_LIMIT else text[: BODY_LIMIT - 1] + "…"


def outcome_line(request: Request, decision: Decision, timeout: float = 900.0) -> str:
    """One line saying who decided what, appended to the prompt when it closes."""
    who = f"<@{decision.by}>" if decision.by else "someone"
    said = _quote(decision.message)
    outcome = decision.outcome
    if outcome == "allow":
        return f"✅ **Allowed** by {who}"
    if outcome == "always":
        suggestions = request.permission_suggestions
        index = decision.suggestion if decision.suggestion is not None else -1
        what = (
            suggestion_label(suggestions[index], scope_of(decision))
            if 0 <= index < len(suggestions) and isinstance(suggestions[index], dict)
            else "always"
        )
        return f"✅ **{what}** — by {who}"
    if outcome == "deny":
        return f"❌ **Denied** by {who}"
    if outcome == "tell":
        return f"💬 **Denied** by {who}, telling Claude: {said}"
    if outcome == "answers":
        return f"✅ **Answered** by {who}"
    if outcome == "approve":
        how = "auto-accept edits" if decision.mode == "acceptEdits" else "review each edit"
        return f"✅ **Plan approved** by {who} — {how}"
    if outcome == "keep_planning":
        return f"✏️ {who} asked Claude to **keep planning**: {said}"
    if outcome == "timeout":
        waited = duration(timeout)
        return f"⏱ **No answer within {waited}** — {_timeout_result(request, decision)}"
    event = decision.event
    if event == "interrupted":
        return "⏹ **Interrupted** in the terminal — this prompt is closed"
    if event == "session ended":
        return "⏹ **The Claude Code session ended** — this prompt is closed"
    return "🖥️ **Answered in the terminal** — this prompt is closed"


def duration(seconds: float) -> str:
    """ "15 min", "90 s", "2 h": how long a prompt waited, for people."""
    if seconds < 120:
        return f"{round(seconds)} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"


def _timeout_result(request: Request, decision: Decision) -> str:
    return "left to the terminal" if decision.left_to_terminal else "denied"


def scope_of(decision: Decision) -> str:
    """An "always" decision's destination, one of :data:`SCOPE_LABELS` (session if unknown)."""
    return decision.scope if decision.scope in SCOPE_LABELS else "s"  # type: ignore[return-value]


def _quote(text: object) -> str:
    one = _one_line(text)
    return f"“{one[:300]}{'…' if len(one) > 300 else ''}”" if one else "(nothing)"
