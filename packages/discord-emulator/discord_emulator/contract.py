"""Request bodies held to Discord's own contract: its published OpenAPI 3.1 spec.

``openapi/discord-openapi.json`` is discord/discord-api-spec's ``specs/openapi.json`` (MIT:
``openapi/discord-openapi.LICENSE``; version in ``openapi/discord-openapi.SOURCE``). Every body
a REST handler reads (JSON, or a multipart request's ``payload_json``) is validated against the
request schema of its operation (method + path template) with a JSON Schema 2020-12 validator
over the spec's ``components``; an invalid one is answered as Discord does: 400, code 50035
"Invalid Form Body", ``errors`` naming each field (:func:`to_form_errors`).

The spec is loaded once, on the first body; each operation's validator is compiled on its
first use. Where Discord accepts what the spec forbids, :data:`RELAXATIONS` (the one place)
widens that rule, with the evidence. The emulator's own checks (``validation.py``: Discord's
limits for bots, the legacy component layout, link schemes) run after this one.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .validation import FormErrors

SPEC_PATH = Path(__file__).parent / "openapi" / "discord-openapi.json"
SPEC_URI = "urn:discord:openapi"
_PARAM = re.compile(r"\{[^}]*\}")
HTTP_METHODS = ("get", "put", "post", "patch", "delete")

# Where the spec is stricter than Discord, and only there. Each entry replaces one schema of
# ``components/schemas``; the comment is the evidence.
RELAXATIONS: dict[str, dict[str, Any]] = {
    # Snowflakes are typed as strings, but Discord parses a JSON integer as a snowflake too,
    # and clients rely on it: discord.py 2.7 sends attachment ids as list indices
    # (discord/file.py: ``'id': index``), message_reference ids and allowed_mentions user ids
    # as ints (``Message.to_message_reference_dict``, ``AllowedMentions.to_dict``), and
    # Discord's own docs upload files with ``"attachments": [{"id": 0, ...}]``
    # (Reference › Uploading Files). A negative or fractional number is still refused.
    "SnowflakeType": {
        "anyOf": [
            {"type": "string", "pattern": "^(0|[1-9][0-9]*)$", "format": "snowflake"},
            {"type": "integer", "minimum": 0},
        ]
    },
}


@dataclass
class ContractStats:
    """How many bodies were validated, and how many were refused, per operation."""

    validated: Counter[str] = field(default_factory=Counter)
    invalid: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, operation: str, ok: bool) -> None:
        with self.lock:
            self.validated[operation] += 1
            if not ok:
                self.invalid[operation] += 1

    def summary(self) -> dict[str, Any]:
        with self.lock:
            return {
                "validated": sum(self.validated.values()),
                "invalid": sum(self.invalid.values()),
                "operations": {
                    op: {"validated": n, "invalid": self.invalid[op]}
                    for op, n in sorted(self.validated.items())
                },
            }


# Every emulator of this process together (the test suite prints it at the end of a run);
# each emulator also keeps its own (``State.contract``, ``GET /_test/contract``).
PROCESS_STATS = ContractStats()


_loaded: dict[str, Any] | None = None
_load_lock = threading.Lock()


def _spec() -> dict[str, Any]:
    """The spec, read once per process (by :func:`warm` or the first body, whichever comes
    first; the other waits for it rather than reading it again)."""
    global _loaded
    if _loaded is None:
        with _load_lock:
            if _loaded is None:
                spec = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
                schemas = spec["components"]["schemas"]
                schemas.update(RELAXATIONS)
                _pick_by_type(spec, schemas)
                _loaded = spec
    return _loaded


WARM_ROUTES = (
    "POST /channels/{}/messages",
    "PATCH /channels/{}/messages/{}",
    "POST /interactions/{}/{}/callback",
    "POST /webhooks/{}/{}",
)


def warm() -> None:
    """Read the spec and compile the busiest operations now (an emulator starts this in the
    background), so that no client's first message waits ~0.1-0.3 s for it."""
    for route in WARM_ROUTES:
        validator = _validator(operation_of(route))
        validator.is_valid({})  # resolves its first references


# ----- unions, picked as Discord picks them ------------------------------------------------
#
# A message's components are a oneOf of 7 models whose items are a oneOf of 6, and every
# ``type`` field is a oneOf of consts: read literally, every model is tried against every
# component (~400 sub-validations for two rows of buttons). Discord instead picks the model
# by the object's ``type`` (the spec marks such unions ``x-discord-union``). So, once, at
# load: a oneOf/anyOf of consts becomes the same ``enum``, and a oneOf/anyOf of models whose
# ``type`` enums are disjoint (each model requires its ``type``) becomes "if type is k then
# that model", with a guard that names a missing or unknown ``type`` (``x-union``). Same
# verdicts at half the cost or less: the bridge's permission prompt takes 1.4-2.6 ms instead
# of 2.7-7 ms on the busy 2-core test machine (bench/openapi_validation.py).


def _pick_by_type(node: Any, schemas: dict[str, Any]) -> None:
    if isinstance(node, list):
        for item in node:
            _pick_by_type(item, schemas)
        return
    if not isinstance(node, dict):
        return
    for key in ("oneOf", "anyOf"):
        branches = node.get(key)
        if not isinstance(branches, list):
            continue
        if all(set(b) - {"title", "description"} == {"const"} for b in branches):
            node.pop(key)
            node["enum"] = [b["const"] for b in branches]
        elif (models := _models(branches, schemas)) is not None:
            node.pop(key)
            node.setdefault("allOf", []).extend(_dispatch(models))
    for value in node.values():
        _pick_by_type(value, schemas)


def _models(branches: list[Any], schemas: dict[str, Any]) -> list[tuple[list, str]] | None:
    """[(type values, $ref)] when every branch is a model with its own ``type`` values."""
    out = []
    for branch in branches:
        ref = branch.get("$ref") if isinstance(branch, dict) and len(branch) == 1 else None
        if not isinstance(ref, str) or not ref.startswith("#/components/schemas/"):
            return None
        target = schemas.get(ref.rsplit("/", 1)[1]) or {}
        values = ((target.get("properties") or {}).get("type") or {}).get("enum")
        if not values:
            return None
        out.append((list(values), ref))
    every = [v for values, _ in out for v in values]
    return out if len(every) == len(set(every)) else None


def _dispatch(models: list[tuple[list, str]]) -> list[dict[str, Any]]:
    is_model = {"type": "object", "required": ["type"]}
    picks = [
        {"if": {**is_model, "properties": {"type": {"enum": values}}}, "then": {"$ref": ref}}
        for values, ref in models
    ]
    every = sorted(v for values, _ in models for v in values)
    guard = {**is_model, "x-union": True, "properties": {"type": {"enum": every, "x-union": True}}}
    return [*picks, guard]


@functools.cache
def _registry() -> Any:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    resource = Resource(contents=_spec(), specification=DRAFT202012)
    return Registry().with_resource(SPEC_URI, resource)


def _template(path: str) -> str:
    """'/channels/{channel_id}/messages' → '/channels/{}/messages' (names differ)."""
    return _PARAM.sub("{}", path)


@functools.cache
def _operations() -> dict[str, str]:
    """'POST /channels/{}/messages' → the JSON pointer of its JSON request-body schema."""
    out = {}
    for path, item in _spec()["paths"].items():
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue  # "parameters", shared by the path's operations
            content = (op.get("requestBody") or {}).get("content") or {}
            if "application/json" in content:
                escaped = path.replace("~", "~0").replace("/", "~1")
                pointer = f"/paths/{escaped}/{method}/requestBody/content/application~1json/schema"
                out[f"{method.upper()} {_template(path)}"] = pointer
    return out


@functools.cache
def _validator(operation: str) -> Any:
    from jsonschema import Draft202012Validator

    pointer = _operations().get(operation)
    if pointer is None:
        return None
    return Draft202012Validator({"$ref": f"{SPEC_URI}#{pointer}"}, registry=_registry())


def operation_of(route: str) -> str:
    """'POST /channels/{channel_id}/messages' (a route key) → the spec's operation key."""
    method, _, path = route.partition(" ")
    return f"{method} {_template(path)}"


def has_schema(route: str) -> bool:
    return operation_of(route) in _operations()


def check(route: str, body: Any, stats: Iterable[ContractStats] = ()) -> FormErrors:
    """Where ``body`` breaks the request schema of ``route``, in Discord's error tree (empty
    when it fits, or when the operation has no JSON request body in the spec)."""
    operation = operation_of(route)
    validator = _validator(operation)
    if validator is None:
        return FormErrors()
    errors = to_form_errors(validator.iter_errors(body))
    for counter in (PROCESS_STATS, *stats):
        counter.count(operation, not errors.tree)
    return errors


# ----- jsonschema errors → Discord's error tree ----------------------------------------------


# A value of the wrong type fails its other rules too (an enum, a length); Discord names only
# the type ('Value "CHAT_INPUT" is not int.').
TYPE_CODES = {
    "BASE_TYPE_REQUIRED",
    "NUMBER_TYPE_COERCE",
    "STRING_TYPE_CONVERT",
    "BOOLEAN_TYPE_CONVERT",
    "LIST_TYPE_CONVERT",
    "MODEL_TYPE_CONVERT",
}


def to_form_errors(errors: Iterable[Any]) -> FormErrors:
    found: dict[tuple[str, ...], list[Leaf]] = {}
    for error in errors:
        for leaf in _leaves(error):
            at = found.setdefault(tuple(str(p) for p in leaf[0]), [])
            if all(code != leaf[1] for _, code, _ in at):
                at.append(leaf)
    form = FormErrors()
    for leaves in found.values():
        typed = [leaf for leaf in leaves if leaf[1] in TYPE_CODES]
        for path, code, message in typed or leaves:
            form.add(path, code, message)
    return form


Leaf = tuple[tuple[str | int, ...], str, str]
MISSING_TYPE = 'Field "type" is required to determine the model type.'


def _leaves(error: Any) -> Iterator[Leaf]:
    path = tuple(error.absolute_path)
    kind = error.validator
    if kind in ("oneOf", "anyOf") and error.context:
        yield from _union(error, path)
    elif kind == "required" and error.schema.get("x-union"):
        yield path, "UNION_TYPE_MISSING", MISSING_TYPE
    elif kind == "enum" and error.schema.get("x-union"):
        message = f'Value of field "type" must be one of {_choices(error.validator_value)}.'
        yield path, "UNION_TYPE_CHOICES", message
    elif kind == "required":
        for name in error.validator_value:
            if isinstance(error.instance, dict) and name not in error.instance:
                yield (*path, name), "BASE_TYPE_REQUIRED", "This field is required"
    elif kind == "type":
        yield path, *_type_error(error.validator_value, error.instance)
    elif kind in ("maxLength", "minLength", "maxItems", "minItems", "maxProperties"):
        yield path, *_length_error(error.schema, kind)
    elif kind in ("minimum", "exclusiveMinimum"):
        limit = error.validator_value
        yield path, "NUMBER_TYPE_MIN", f"int value should be greater than or equal to {limit}."
    elif kind in ("maximum", "exclusiveMaximum"):
        limit = error.validator_value
        yield path, "NUMBER_TYPE_MAX", f"int value should be less than or equal to {limit}."
    elif kind in ("enum", "const"):
        choices = error.validator_value if kind == "enum" else [error.validator_value]
        yield path, "BASE_TYPE_CHOICES", f"Value must be one of {_choices(choices)}."
    elif kind == "pattern" and error.schema.get("format") == "snowflake":
        yield path, "NUMBER_TYPE_COERCE", f'Value "{error.instance}" is not snowflake.'
    elif kind == "pattern":
        yield path, "STRING_TYPE_REGEX", "String value did not match validation regex."
    elif kind == "uniqueItems":
        yield path, "BASE_TYPE_DUPLICATES", "Values must be unique."  # code not confirmed
    else:
        yield path, "BASE_TYPE_INVALID", error.message  # no Discord wording known


def _type_error(expected: str | list[str], value: Any) -> tuple[str, str]:
    types = [expected] if isinstance(expected, str) else list(expected)
    if value is None:  # null where null is not allowed: Discord says "required"
        return "BASE_TYPE_REQUIRED", "This field is required"
    shown = json.dumps(value) if not isinstance(value, str) else value
    if "integer" in types:
        return "NUMBER_TYPE_COERCE", f'Value "{shown}" is not int.'
    if "number" in types:
        return "NUMBER_TYPE_COERCE", f'Value "{shown}" is not a number.'
    if "string" in types:
        return "STRING_TYPE_CONVERT", f'Could not interpret "{shown}" as string.'
    if "boolean" in types:
        return "BOOLEAN_TYPE_CONVERT", f'Could not interpret "{shown}" as boolean.'
    if "array" in types:
        return "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType"
    return "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType"


def _length_error(schema: dict[str, Any], kind: str) -> tuple[str, str]:
    if kind.endswith("Items"):
        low, high = schema.get("minItems", 0), schema.get("maxItems")
    elif kind.endswith("Length"):
        low, high = schema.get("minLength", 0), schema.get("maxLength")
    else:
        low, high = 0, schema.get("maxProperties")
    if low and high is not None:
        return "BASE_TYPE_BAD_LENGTH", f"Must be between {low} and {high} in length."
    if high is not None and kind.startswith("max"):
        return "BASE_TYPE_MAX_LENGTH", f"Must be {high} or fewer in length."
    return "BASE_TYPE_MIN_LENGTH", f"Must be {low} or more in length."


def _choices(values: Iterable[Any]) -> str:
    return repr(tuple(values))  # "(1,)", "(4, 5)": as Discord writes them


def _union(error: Any, path: tuple[str | int, ...]) -> Iterator[Leaf]:
    """A oneOf/anyOf: Discord picks the model by the object's ``type`` and reports that
    model's errors; a ``type`` no model has is UNION_TYPE_CHOICES."""
    branches: dict[int, list[Any]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    if all(_is_const(subs) for subs in branches.values()):  # an enum spelt as oneOf consts
        values = [subs[0].validator_value for subs in branches.values()]
        yield path, "BASE_TYPE_CHOICES", f"Value must be one of {_choices(values)}."
        return
    instance = error.instance
    untyped = isinstance(instance, dict) and "type" not in instance
    if untyped and all(_requires_type(subs) for subs in branches.values()):
        yield path, "UNION_TYPE_MISSING", MISSING_TYPE
        return
    fitting = [subs for subs in branches.values() if not _wrong_model(subs)]
    if fitting:
        best = min(fitting, key=len)
        for sub in best:
            yield from _leaves(sub)
        return
    kinds = _discriminators(branches.values())
    if isinstance(instance, dict) and "type" in instance and kinds:
        message = f'Value of field "type" must be one of {_choices(kinds)}.'
        yield (*path, "type"), "UNION_TYPE_CHOICES", message
        return
    non_null = [s for s in branches.values() if not _only_null(s)] or list(branches.values())
    for sub in non_null[0]:
        yield from _leaves(sub)


def _is_const(subs: list[Any]) -> bool:
    return len(subs) == 1 and subs[0].validator == "const" and not subs[0].relative_path


def _requires_type(subs: list[Any]) -> bool:
    return any(s.validator == "required" and "type" in s.validator_value for s in subs)


def _only_null(subs: list[Any]) -> bool:
    return any(s.validator == "type" and s.validator_value == "null" for s in subs)


def _wrong_model(subs: list[Any]) -> bool:
    """This branch is another model: its root type differs, or its ``type`` field does."""
    for sub in subs:
        at = list(sub.relative_path)
        if not at and sub.validator == "type":
            return True
        if at == ["type"] and sub.validator in ("enum", "const", "oneOf"):
            return True
    return False


def _discriminators(branches: Iterable[list[Any]]) -> list[Any]:
    kinds: list[Any] = []
    for subs in branches:
        for sub in subs:
            if list(sub.relative_path) == ["type"] and sub.validator == "enum":
                kinds.extend(v for v in sub.validator_value if v not in kinds)
    return kinds
