"""Discord messages for an MCP server's request for input (Claude Code's Elicitation hook).

Form mode: the message names the server, quotes its message and lists the form's fields with
their answers so far; each field with choices has a select in the message, the others are
typed in modals of five text inputs (**Fill in…**), as :func:`prompt_actions.form_layout`
lays them out; **Send** checks the answers against the schema first. URL mode: the link as a
link button (http and https only), **Done** once it was followed. Both offer **Decline**,
**Cancel** and **Answer in the terminal** (no answer: Claude Code then shows its own dialog).
Pure functions, like ``decisions.py``; every action comes from ``prompt_actions``.

The server's words are not the bridge's: its message is quoted as plain text (``> `` lines,
its Markdown escaped: no heading, masked link, mention or emoji shortcode takes effect, so
it cannot pass for the bridge's own lines), and where a link goes is said in the bridge's
words, from the URL's real host (punycode decoded). Both, and the button's label, go through
``visible.py`` first: ``Open g⟦U+0456⟧thub.com``, as a permission prompt shows a command.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from bridge.claude import elicitation as forms
from bridge.discord import prompt_actions as actions
from bridge.discord.render.decisions import (
    DANGER,
    PRIMARY,
    SECONDARY,
    SELECT,
    SUCCESS,
    _button,
    _fit,
    _label,
    _one_line,
    _row,
    _shown,
    custom_id,
)
from bridge.discord.render.visible import MARK_CLOSE, MARK_OPEN, escape, reveal
from bridge.state.decisions import Request

LINK = 5  # a link button's style: it opens its url, it sends nothing to the bot
SHORT, PARAGRAPH = 1, 2  # text input styles
INPUT_LABEL_LIMIT = 45
PLACEHOLDER_LIMIT = 100
VALUE_LIMIT = 4000
FIELD_LINE_LIMIT = 160
CODE_LIMIT = 300
URL_SCHEMES = ("http", "https")  # what Discord takes in a link button
QUOTE_LINES, QUOTE_LIMIT = 8, 700  # of the server's message: the bridge's lines stay in view
HOST_LIMIT = 100
REVEALED = "⚠️ Hidden or look-alike characters are shown as ⟦U+…⟧"


def elicitation_prompt(request: Request, answers: dict) -> dict:
    """The message for an elicitation, with the form's answers so far (field name → value)."""
    data = request.tool_input
    name = _one_line(reveal(str(data.get("mcp_server_name") or ""), code=True))
    server = _code(name or "an MCP server")
    said = quoted(data.get("message"))
    if data.get("mode") == "url":
        url = str(data.get("url") or "")
        lines = [f"🔗 **The MCP server {server} asks you to open a link**", where(url), said]
        lines.append("-# **Done** once you have been there; the server then goes on.")
        content = _noted(lines, ": the link may not go where it seems.")
        return {"content": content, "components": url_components(request)}
    layout = actions.form_layout(request)
    lines = [f"🧩 **The MCP server {server} asks for your input**", said]
    lines += [_field_line(field, answers.get(field.name)) for field in layout.fields]
    if not layout.fits:
        lines.append(
            "-# ⚠️ Discord cannot hold this form (a field of another kind, or too many): "
            "answer it in the terminal."
        )
    elif any(field.required for field in layout.fields):
        lines.append("-# \\* required · **Send** checks the answers before they go")
    return {"content": _noted(lines, "."), "components": form_components(request, answers)}


def quoted(message: object) -> str:
    """The server's message as ``> `` lines of plain text (hidden characters shown, Markdown
    escaped), at most :data:`QUOTE_LINES` lines and about :data:`QUOTE_LIMIT` characters."""
    text = str(message or "").replace("\r\n", "\n")[: QUOTE_LIMIT * QUOTE_LINES]
    if not text.strip():
        return "> …"
    given = reveal(text.rstrip()).split("\n")
    lines, used = [], 0
    for line in given[:QUOTE_LINES]:
        line = escape(line.rstrip())
        if used + len(line) > QUOTE_LIMIT:
            lines.append(_cut(line, QUOTE_LIMIT - used))
            break
        lines.append(line)
        used += len(line)
    if len(lines) < len(given) and not lines[-1].endswith("…"):
        lines.append("…")
    return "\n".join(f"> {line}" for line in lines)


def where(url: str) -> str:
    """Where the link goes, in the bridge's words: its real host, then the whole address."""
    if not _linkable(url):
        shown = _code(_one_line(reveal(url, code=True)) or "(no link)")
        return f"Not a web page's address, so there is no button: {shown}"
    return f"It opens **{escape(host(url))}**: {_code(reveal(url, code=True))}"


def host(url: str) -> str:
    """The URL's host as a reader should see it: IDNA labels (``xn--…``) decoded, then hidden
    and look-alike characters marked (``g⟦U+0456⟧thub.com``)."""
    name = urlsplit(url).hostname or ""
    return _cut(
        reveal(".".join(_unicode(label) for label in name.split(".")), code=True), HOST_LIMIT
    )


def _unicode(label: str) -> str:
    if not label.startswith("xn--"):
        return label
    try:  # IDNA's ToUnicode: a label that does not round-trip is no IDN (``xn--broken-``)
        return label.encode("ascii").decode("idna")
    except (UnicodeError, ValueError):
        return label  # shown as it is written: that is the name DNS is asked for


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, never ending inside a ``⟦U+…⟧`` mark or on the
    backslash of an escape."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    if cut.rfind(MARK_OPEN) > cut.rfind(MARK_CLOSE):
        cut = cut[: cut.rfind(MARK_OPEN)]
    if (len(cut) - len(cut.rstrip("\\"))) % 2:
        cut = cut[:-1]
    return cut + "…"


def _noted(lines: list[str], why: str) -> str:
    """The message, with a line under the title when it shows a marked character."""
    if any(MARK_OPEN in line for line in lines):
        lines = [lines[0], REVEALED + why, *lines[1:]]
    return _fit("\n".join(lines))


def _field_line(field: forms.Field, value: object) -> str:
    star = "\\*" if field.required else ""
    shown = forms.shown(field, value)
    answer = _code(shown) if shown else "*not set*"
    line = f"**{escape(_shown(field.title))}**{star}: {answer}"
    return line if len(line) <= FIELD_LINE_LIMIT else line[: FIELD_LINE_LIMIT - 1] + "…"


def form_components(request: Request, answers: dict) -> list[dict]:
    """The selects of the form's choice fields, then its buttons."""
    rid = request.id
    layout = actions.form_layout(request)
    end = [
        _button("Decline", custom_id(rid, actions.E_DECLINE), DANGER),
        _button("Cancel", custom_id(rid, actions.E_CANCEL), SECONDARY),
        _button("Answer in the terminal", custom_id(rid, actions.E_TERMINAL), SECONDARY),
    ]
    if not layout.fits:
        return [_row(*end)]
    rows = [_row(_select(request, layout, i, answers)) for i in layout.selects]
    fills = [
        _button(_fill_label(layout, p), custom_id(rid, actions.fill(p)), PRIMARY)
        for p in range(len(layout.pages))
    ]
    send = _button("Send", custom_id(rid, actions.E_ACCEPT), SUCCESS)
    if len(fills) > 1:
        rows.append(_row(*fills))
        fills = []
    rows.append(_row(*fills, send, *end))
    return rows


def _fill_label(layout: actions.FormLayout, page: int) -> str:
    if len(layout.pages) == 1:
        return "Fill in…"
    numbers = layout.pages[page]
    return (
        f"Fill in {numbers[0] + 1}–{numbers[-1] + 1}…"
        if len(numbers) > 1
        else (f"Fill in {numbers[0] + 1}…")
    )


def _select(request: Request, layout: actions.FormLayout, i: int, answers: dict) -> dict:
    field = layout.fields[i]
    current = answers.get(field.name)
    chosen = set(current) if isinstance(current, list) else {current}
    if field.kind == forms.BOOLEAN:
        chosen = {"true" if current is True else "false" if current is False else None}
    low, high = layout.select_range(i)
    options = []
    for j, (value, label) in enumerate(field.options):
        option: dict[str, object] = {"label": _label(label, 100), "value": actions.choice(j)}
        if value in chosen:
            option["default"] = True
        options.append(option)
    how = "pick one" if field.kind != forms.CHOICES else "pick any"
    return {
        "type": SELECT,
        "custom_id": custom_id(request.id, actions.pick(i), select=True),
        "placeholder": _label(f"{field.title}: {how}", 150),
        "min_values": low,
        "max_values": high,
        "options": options,
    }


def url_components(request: Request) -> list[dict]:
    rid = request.id
    url = str(request.tool_input.get("url") or "")
    buttons = []
    if _linkable(url):
        label = _label(f"Open {host(url) or 'the link'}")
        buttons.append({"type": 2, "style": LINK, "label": label, "url": url})
    buttons += [
        _button("Done", custom_id(rid, actions.E_ACCEPT), SUCCESS),
        _button("Decline", custom_id(rid, actions.E_DECLINE), DANGER),
        _button("Cancel", custom_id(rid, actions.E_CANCEL), SECONDARY),
        _button("Answer in the terminal", custom_id(rid, actions.E_TERMINAL), SECONDARY),
    ]
    return [_row(*buttons)]


def _linkable(url: str) -> bool:
    """A link button Discord takes and a phone opens as a web page: http(s), with a host,
    no whitespace, within Discord's 512 characters."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    clean = url.isprintable() and not any(c.isspace() for c in url)
    return parts.scheme in URL_SCHEMES and bool(parts.hostname) and clean and len(url) <= 512


def fill_modal(request: Request, page: int, answers: dict) -> dict:
    """The modal of page ``page``: ``custom_id``, ``title`` and its text ``inputs`` (each
    ``custom_id``, ``label``, ``placeholder``, ``value``, ``required``), Discord's limits
    kept."""
    layout = actions.form_layout(request)
    server = _one_line(request.tool_input.get("mcp_server_name")) or "MCP server"
    title = f"{server}: your input" if len(layout.pages) == 1 else f"{server}: page {page + 1}"
    inputs = []
    for i in layout.pages[page]:
        field = layout.fields[i]
        value = forms.shown(field, answers.get(field.name))
        inputs.append(
            {
                "custom_id": actions.field_input(i),
                "label": _label(field.title + (" *" if field.required else ""), INPUT_LABEL_LIMIT),
                "placeholder": _label(hint(field), PLACEHOLDER_LIMIT),
                "value": value[:VALUE_LIMIT],
                "required": field.required,
                "style": PARAGRAPH if field.kind == forms.TEXT and _long(field) else SHORT,
            }
        )
    return {
        "custom_id": custom_id(request.id, actions.fill(page)),
        "title": _label(title, 45),
        "inputs": inputs,
    }


def _long(field: forms.Field) -> bool:
    return field.maximum is None or field.maximum > 200


def hint(field: forms.Field) -> str:
    """What to type in a field's text input: its description and what it takes."""
    takes = {
        forms.TEXT: {
            "email": "an e-mail address",
            "uri": "a link (https://…)",
            "date": "a date, YYYY-MM-DD",
            "date-time": "a date and time, YYYY-MM-DDTHH:MM",
        }.get(field.format or "", ""),
        forms.NUMBER: _range("a number", field),
        forms.INTEGER: _range("a whole number", field),
        forms.BOOLEAN: "yes or no",
        forms.CHOICE: "one of: " + ", ".join(label for _, label in field.options),
        forms.CHOICES: "any of, with commas: " + ", ".join(label for _, label in field.options),
    }.get(field.kind, "")
    return " · ".join(part for part in (field.description, takes) if part) or field.title


def _range(what: str, field: forms.Field) -> str:
    low, high = field.minimum, field.maximum
    if low is not None and high is not None:
        return f"{what}, {forms._number(low)}–{forms._number(high)}"
    if low is not None:
        return f"{what}, at least {forms._number(low)}"
    if high is not None:
        return f"{what}, at most {forms._number(high)}"
    return what


def _code(text: str) -> str:
    text = text.replace("`", "'")
    return "`" + (text if len(text) <= CODE_LIMIT else text[: CODE_LIMIT - 1] + "…") + "`"
