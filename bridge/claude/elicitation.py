"""An MCP server's request for input (Claude Code's Elicitation hook): its form, read and checked.

In form mode the server sends a ``requested_schema``: a flat JSON object schema whose
properties are the MCP elicitation spec's primitives (2025-11-25):

    string   title, description, minLength, maxLength, format (email, uri, date, date-time)
    number / integer   minimum, maximum
    boolean
    one of   a string with ``enum`` (+ the older ``enumNames``), or ``oneOf`` [{const, title}]
    several  an array whose ``items`` have ``enum`` or ``anyOf`` [{const, title}]; minItems,
             maxItems

each with an optional ``default``, and ``required`` names. Claude Code passes whatever a hook
answers on to the server unchecked (measured on 2.1.332: content that breaks the schema, or
lacks a required field, arrives as it was), so the bridge checks every answer here before it
gives it: :func:`check` lists what is wrong, in words for the owner.

:func:`fields` reads a schema into :class:`Field` records; a property of another shape makes
the form one Discord cannot hold (:attr:`Field.kind` ``unsupported``). Pure functions, no I/O.
"""

from __future__ import annotations

import re

TEXT, NUMBER, INTEGER, BOOLEAN, CHOICE, CHOICES, UNSUPPORTED = (
    "text",
    "number",
    "integer",
    "boolean",
    "choice",
    "choices",
    "unsupported",
)
FORMATS = ("email", "uri", "date", "date-time")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
TRUE_WORDS = ("yes", "y", "true", "1", "on")
FALSE_WORDS = ("no", "n", "false", "0", "off")


class Field:
    """One property of the form. ``options``: (value, label) pairs of a choice."""

    __slots__ = (
        "default",
        "description",
        "format",
        "kind",
        "maximum",
        "minimum",
        "name",
        "options",
        "required",
        "title",
    )

    def __init__(self, name: str, kind: str, **about: object) -> None:
        self.name = name
        self.kind = kind
        self.title: str = str(about.get("title") or name)
        self.description: str = str(about.get("description") or "")
        self.required: bool = bool(about.get("required"))
        self.options: list[tuple[str, str]] = list(about.get("options") or [])  # type: ignore[call-overload]
        self.minimum: float | None = about.get("minimum")  # type: ignore[assignment]
        self.maximum: float | None = about.get("maximum")  # type: ignore[assignment]
        self.format: str | None = about.get("format")  # type: ignore[assignment]
        self.default: object = about.get("default")

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.kind!r})"


def fields(schema: object) -> list[Field]:
    """The form's fields, in the schema's order (an empty list for no properties)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return []
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    return [
        _field(str(name), prop, name in required) for name, prop in schema["properties"].items()
    ]


def _field(name: str, prop: object, required: bool) -> Field:
    if not isinstance(prop, dict):
        return Field(name, UNSUPPORTED, required=required)
    about: dict = {
        "title": _text(prop.get("title")),
        "description": _text(prop.get("description")),
        "required": required,
        "default": prop.get("default"),
    }
    kind = prop.get("type")
    options = _options(prop)
    if kind == "string" and options is not None:
        return Field(name, CHOICE, options=options, **about)
    if kind == "array" and isinstance(prop.get("items"), dict):
        items = _options(prop["items"])
        if items is None:
            return Field(name, UNSUPPORTED, **about)
        low, high = _bound(prop.get("minItems")), _bound(prop.get("maxItems"))
        return Field(name, CHOICES, options=items, minimum=low, maximum=high, **about)
    if kind == "string":
        low, high = _bound(prop.get("minLength")), _bound(prop.get("maxLength"))
        fmt = prop.get("format") if prop.get("format") in FORMATS else None
        return Field(name, TEXT, minimum=low, maximum=high, format=fmt, **about)
    if kind in (NUMBER, INTEGER):
        low, high = _bound(prop.get("minimum")), _bound(prop.get("maximum"))
        return Field(name, kind, minimum=low, maximum=high, **about)
    if kind == BOOLEAN:
        return Field(name, BOOLEAN, options=[("true", "Yes"), ("false", "No")], **about)
    return Field(name, UNSUPPORTED, **about)


def _options(prop: dict) -> list[tuple[str, str]] | None:
    """(value, label) of an ``enum`` (with ``enumNames``), a ``oneOf`` / ``anyOf`` of
    ``{const, title}``; None when ``prop`` offers no choice."""
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        names = prop.get("enumNames")
        if isinstance(names, list) and len(names) == len(enum):
            return [(v, _text(n) or v) for v, n in zip(enum, names, strict=True)]
        return [(v, v) for v in enum]
    for key in ("oneOf", "anyOf"):
        found = prop.get(key)
        if isinstance(found, list) and found:
            pairs = [(o.get("const"), o.get("title")) for o in found if isinstance(o, dict)]
            if len(pairs) == len(found) and all(isinstance(v, str) for v, _ in pairs):
                return [(v, _text(t) or v) for v, t in pairs]  # type: ignore[misc]
    return None


def _text(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _bound(value: object) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return value if ok else None  # type: ignore[return-value]


# --- answers ---------------------------------------------------------------------------------


def defaults(form: list[Field]) -> dict:
    """The answers a form starts with: each field's ``default`` that is a valid answer."""
    found = {}
    for field in form:
        if field.default is not None and not problem(field, field.default):
            found[field.name] = field.default
    return found


def from_text(field: Field, typed: str) -> tuple[object, str]:
    """What the owner typed for ``field`` as the value the schema wants, and the problem with
    it ("" when none). Blank means "not set" (value None)."""
    typed = typed.strip()
    if not typed:
        return None, ""
    value: object = typed
    if field.kind in (NUMBER, INTEGER):
        try:
            number = float(typed.replace(",", "."))
        except ValueError:
            return None, f"{field.title}: “{_short(typed)}” is not a number"
        if field.kind == INTEGER:
            if not number.is_integer():
                return None, f"{field.title}: a whole number, not {_short(typed)}"
            value = int(number)
        else:
            value = int(number) if number.is_integer() and "." not in typed else number
    elif field.kind == BOOLEAN:
        word = typed.lower()
        if word not in TRUE_WORDS + FALSE_WORDS:
            return None, f"{field.title}: yes or no, not “{_short(typed)}”"
        value = word in TRUE_WORDS
    elif field.kind == CHOICE:
        value = _option_value(field, typed)
        if value is None:
            return None, f"{field.title}: one of {_listed(field)}, not “{_short(typed)}”"
    elif field.kind == CHOICES:
        picked = [_option_value(field, part) for part in typed.split(",") if part.strip()]
        if any(v is None for v in picked):
            return None, f"{field.title}: any of {_listed(field)}, separated by commas"
        value = list(dict.fromkeys(picked))
    return value, problem(field, value)


def _option_value(field: Field, typed: str) -> str | None:
    wanted = typed.strip().lower()
    for value, label in field.options:
        if wanted in (value.lower(), label.lower()):
            return value
    return None


def problem(field: Field, value: object) -> str:
    """What is wrong with ``value`` as ``field``'s answer ("" when nothing is)."""
    name = field.title
    if field.kind == TEXT:
        if not isinstance(value, str):
            return f"{name}: text expected"
        if field.minimum is not None and len(value) < field.minimum:
            return f"{name}: at least {int(field.minimum)} characters"
        if field.maximum is not None and len(value) > field.maximum:
            return f"{name}: at most {int(field.maximum)} characters"
        return _format_problem(field, value)
    if field.kind in (NUMBER, INTEGER):
        number_type = int if field.kind == INTEGER else int | float
        if isinstance(value, bool) or not isinstance(value, number_type):
            return f"{name}: {'a whole number' if field.kind == INTEGER else 'a number'} expected"
        if field.minimum is not None and value < field.minimum:
            return f"{name}: at least {_number(field.minimum)}"
        if field.maximum is not None and value > field.maximum:
            return f"{name}: at most {_number(field.maximum)}"
        return ""
    if field.kind == BOOLEAN:
        return "" if isinstance(value, bool) else f"{name}: yes or no expected"
    if field.kind == CHOICE:
        ok = isinstance(value, str) and value in dict(field.options)
        return "" if ok else f"{name}: one of {_listed(field)}"
    if field.kind == CHOICES:
        offered = dict(field.options)
        if not isinstance(value, list) or not all(
            isinstance(v, str) and v in offered for v in value
        ):
            return f"{name}: any of {_listed(field)}"
        if len(set(value)) < len(value):
            return f"{name}: each choice once"
        if field.minimum is not None and len(value) < field.minimum:
            return f"{name}: pick at least {int(field.minimum)}"
        if field.maximum is not None and len(value) > field.maximum:
            return f"{name}: pick at most {int(field.maximum)}"
        return ""
    return f"{name}: cannot be answered from Discord"


def _format_problem(field: Field, value: str) -> str:
    if field.format == "email" and not _EMAIL.fullmatch(value):
        return f"{field.title}: an e-mail address expected"
    if field.format == "uri" and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S+$", value):
        return f"{field.title}: a URI expected (such as https://…)"
    if field.format == "date" and not _DATE.fullmatch(value):
        return f"{field.title}: a date expected (YYYY-MM-DD)"
    if field.format == "date-time" and not _DATE_TIME.fullmatch(value):
        return f"{field.title}: a date and time expected (YYYY-MM-DDTHH:MM…)"
    return ""


def check(form: list[Field], content: dict) -> list[str]:
    """Everything that keeps ``content`` from being the form's answer: a required field
    unset, a value of the wrong type or out of bounds, a key the form does not have."""
    names = {field.name for field in form}
    problems = [f"{key}: not a field of this form" for key in content if key not in names]
    for field in form:
        if field.name not in content or content[field.name] is None:
            if field.required:
                problems.append(f"{field.title}: required")
            continue
        found = problem(field, content[field.name])
        if found:
            problems.append(found)
    return problems


def shown(field: Field, value: object) -> str:
    """An answer as the owner reads it: labels for choices, "yes"/"no", the text."""
    if value is None:
        return ""
    if field.kind == BOOLEAN:
        return "yes" if value else "no"
    labels = dict(field.options)
    if field.kind == CHOICE:
        return labels.get(str(value), str(value))
    if field.kind == CHOICES and isinstance(value, list):
        return ", ".join(labels.get(str(v), str(v)) for v in value) or "none"
    return str(value)


def summary(form: list[Field], content: dict, limit: int = 300) -> str:
    """The answers, as one line: ``Project name: x · Colour: green``."""
    parts = [f"{f.title}: {shown(f, content[f.name])}" for f in form if f.name in content]
    text = " · ".join(parts) or "(nothing)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _listed(field: Field) -> str:
    labels = [label for _, label in field.options[:8]]
    return ", ".join(labels) + (", …" if len(field.options) > 8 else "")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"
