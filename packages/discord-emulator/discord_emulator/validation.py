"""Discord's request validation, returning errors in Discord's exact shapes."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error response; the middleware turns it into Discord's JSON body."""

    def __init__(
        self, status: int, code: int, message: str, errors: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = self.errors
        return body


def unknown(what: str) -> ApiError:
    codes = {
        "channel": 10003,
        "message": 10008,
        "user": 10013,
        "webhook": 10015,
        "interaction": 10062,
        "guild": 10004,
        "command": 10063,
    }
    return ApiError(404, codes[what], f"Unknown {what.capitalize()}")


class FormErrors:
    """Collects field errors into Discord's nested {"a": {"0": {"_errors": [...]}}} tree."""

    def __init__(self) -> None:
        self.tree: dict[str, Any] = {}

    def add(self, path: tuple[str | int, ...], code: str, message: str) -> None:
        node = self.tree
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def max_len(self, path: tuple[str | int, ...], value: Any, limit: int) -> None:
        if value is not None and len(value) > limit:
            self.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")

    def len_range(self, path: tuple[str | int, ...], value: Any, low: int, high: int) -> None:
        if value is None or not low <= len(value) <= high:
            self.add(path, "BASE_TYPE_BAD_LENGTH", f"Must be between {low} and {high} in length.")

    def merge(self, other: FormErrors) -> None:
        _merge_tree(self.tree, other.tree)

    def has(self, path: tuple[str | int, ...]) -> bool:
        """Whether the field at ``path`` already has an error (checks on it can skip)."""
        node = self.tree
        for part in path:
            node = node.get(str(part))
            if node is None:
                return False
        return bool(node.get("_errors"))

    def raise_if_any(self) -> None:
        if self.tree:
            raise ApiError(400, 50035, "Invalid Form Body", self.tree)


def _merge_tree(into: dict[str, Any], tree: dict[str, Any]) -> None:
    for key, value in tree.items():
        if key == "_errors":
            into.setdefault("_errors", []).extend(value)
        else:
            _merge_tree(into.setdefault(key, {}), value)


EMBED_LIMITS = {"title": 256, "description": 4096}


def validate_message(body: dict[str, Any], n_files: int, edit: bool = False) -> None:
    """Raise ApiError for anything Discord would reject in a message create/edit body."""
    errs = FormErrors()
    errs.max_len(("content",), body.get("content"), 2000)
    nonce = body.get("nonce")
    if isinstance(nonce, str):
        errs.max_len(("nonce",), nonce, 25)
    _validate_embeds(errs, body.get("embeds") or [])
    if not int(body.get("flags") or 0) & (1 << 15):
        validate_components(errs, ("components",), body.get("components") or [])
    _validate_attachments(errs, body.get("attachments") or [])
    errs.raise_if_any()
    if int(body.get("flags") or 0) & IS_VOICE_MESSAGE:
        _validate_voice_message(body, n_files, edit)
    if n_files > 10:
        raise ApiError(
            400,
            50035,
            "Invalid Form Body",
            {
                "files": {
                    "_errors": [
                        {
                            "code": "BASE_TYPE_MAX_LENGTH",
                            "message": "Must be 10 or fewer in length.",
                        }
                    ]
                }
            },
        )
    empty = not (
        body.get("content")
        or body.get("embeds")
        or body.get("components")
        or body.get("sticker_ids")
        or n_files
        or body.get("poll")
    )
    if empty and not edit:
        raise ApiError(400, 50006, "Cannot send an empty message")


IS_VOICE_MESSAGE = 1 << 13
WAVEFORM_MAX_CHARS = 400  # MessageAttachmentRequest.waveform (base64 of ≤ 256 amplitudes)


def _validate_attachments(errs: FormErrors, attachments: list[Any]) -> None:
    """MessageAttachmentRequest's own limits: a voice message's duration and waveform."""
    for i, att in enumerate(attachments if isinstance(attachments, list) else []):
        if not isinstance(att, dict):
            continue
        seconds = att.get("duration_secs")
        if seconds is not None and (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not 0 <= seconds <= 2147483647
        ):
            errs.add(
                ("attachments", i, "duration_secs"),
                "NUMBER_TYPE_COERCE",
                f'Value "{seconds}" is not a valid number.',
            )
        waveform = att.get("waveform")
        if waveform is not None:
            if not isinstance(waveform, str):
                errs.add(
                    ("attachments", i, "waveform"),
                    "STRING_TYPE_CONVERT",
                    "Could not interpret value as string.",
                )
            else:
                errs.max_len(("attachments", i, "waveform"), waveform, WAVEFORM_MAX_CHARS)


def _validate_voice_message(body: dict[str, Any], n_files: int, edit: bool) -> None:
    """A message flagged IS_VOICE_MESSAGE (Discord's JSON error codes 50159–50161): one
    audio file with its duration and waveform, and nothing else."""
    if edit:
        raise ApiError(400, 50162, "Voice messages cannot be edited")
    if body.get("content") or body.get("embeds") or body.get("sticker_ids") or body.get("poll"):
        raise ApiError(400, 50159, "Voice messages do not support additional content")
    attachments = [a for a in body.get("attachments") or [] if isinstance(a, dict)]
    if n_files != 1 or len(attachments) != 1:
        raise ApiError(400, 50160, "Voice messages must have a single audio attachment")
    meta = attachments[0]
    if meta.get("duration_secs") is None or not meta.get("waveform"):
        raise ApiError(400, 50161, "Voice messages must have supporting metadata")


def _validate_embeds(errs: FormErrors, embeds: list[dict[str, Any]]) -> None:
    if len(embeds) > 10:
        errs.add(("embeds",), "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
    total = 0
    for i, embed in enumerate(embeds):
        for key, limit in EMBED_LIMITS.items():
            errs.max_len(("embeds", i, key), embed.get(key), limit)
            total += len(embed.get(key) or "")
        fields = embed.get("fields") or []
        if len(fields) > 25:
            errs.add(
                ("embeds", i, "fields"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."
            )
        for j, fld in enumerate(fields):
            errs.max_len(("embeds", i, "fields", j, "name"), fld.get("name"), 256)
            errs.max_len(("embeds", i, "fields", j, "value"), fld.get("value"), 1024)
            total += len(fld.get("name") or "") + len(fld.get("value") or "")
        footer = (embed.get("footer") or {}).get("text")
        errs.max_len(("embeds", i, "footer", "text"), footer, 2048)
        author = (embed.get("author") or {}).get("name")
        errs.max_len(("embeds", i, "author", "name"), author, 256)
        total += len(footer or "") + len(author or "")
    if total > 6000:
        errs.add(("embeds",), "MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of 6000")


SELECT_TYPES = (3, 5, 6, 7, 8)


def validate_components(
    errs: FormErrors, path: tuple[str | int, ...], rows: list[dict[str, Any]]
) -> None:
    """Legacy layout: ≤ 5 action rows of 1–5 buttons or exactly one select."""
    if len(rows) > 5:
        errs.add(path, "BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.")
    seen: set[str] = set()
    for i, row in enumerate(rows):
        if row.get("type") != 1:
            errs.add(
                (*path, i, "type"),
                "UNION_TYPE_CHOICES",
                'Value of field "type" must be one of (1,).',
            )
            continue
        items = row.get("components") or []
        if not 1 <= len(items) <= 5:
            errs.add(
                (*path, i, "components"),
                "BASE_TYPE_BAD_LENGTH",
                "Must be between 1 and 5 in length.",
            )
        has_select = any(c.get("type") in SELECT_TYPES for c in items)
        if has_select and len(items) > 1:
            errs.add(
                (*path, i, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
        for j, comp in enumerate(items):
            _validate_item(errs, (*path, i, "components", j), comp, seen)


def _validate_item(
    errs: FormErrors, path: tuple[str | int, ...], comp: dict[str, Any], seen: set[str]
) -> None:
    ctype = comp.get("type")
    if ctype == 2 and comp.get("style") == 5:
        if comp.get("custom_id"):
            errs.add(
                (*path, "custom_id"),
                "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
                "A custom id cannot be specified for a link button",
            )
        if not comp.get("url"):
            errs.add((*path, "url"), "BUTTON_COMPONENT_URL_REQUIRED", "A url is required")
        else:
            _validate_link(errs, (*path, "url"), comp["url"])
        errs.max_len((*path, "url"), comp.get("url"), 512)
    elif ctype in (2, *SELECT_TYPES, 4) and not (ctype == 2 and comp.get("style") == 6):
        _validate_custom_id(errs, path, comp.get("custom_id"), seen)
    if ctype == 2:
        errs.max_len((*path, "label"), comp.get("label"), 80)
    if ctype in SELECT_TYPES:
        _validate_select(errs, path, comp)


LINK_SCHEMES = ("http", "https", "discord")


def _validate_link(errs: FormErrors, path: tuple[str | int, ...], url: Any) -> None:
    """A link button's url, as Discord checks it: http, https or discord, and well formed
    (never ``javascript:``, ``data:`` or ``file:``)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(str(url).strip())
    except ValueError:
        parts = None
    if parts is None or not parts.scheme:
        errs.add(path, "URL_TYPE_INVALID_URL", "Not a well formed URL.")
    elif parts.scheme.lower() not in LINK_SCHEMES:
        errs.add(
            path,
            "URL_TYPE_INVALID_SCHEME",
            f'Scheme "{parts.scheme}" is not supported. '
            "Scheme must be one of ('http', 'https', 'discord').",
        )
    elif parts.scheme.lower() != "discord" and not parts.netloc:
        errs.add(path, "URL_TYPE_INVALID_URL", "Not a well formed URL.")


def _validate_custom_id(
    errs: FormErrors, path: tuple[str | int, ...], custom_id: Any, seen: set[str]
) -> None:
    errs.len_range((*path, "custom_id"), custom_id, 1, 100)
    if custom_id in seen:
        errs.add(
            (*path, "custom_id"),
            "COMPONENT_CUSTOM_ID_DUPLICATED",
            "Component custom id cannot be duplicated",
        )
    if custom_id:
        seen.add(custom_id)


def _validate_select(errs: FormErrors, path: tuple[str | int, ...], comp: dict[str, Any]) -> None:
    options = comp.get("options") or []
    if comp.get("type") == 3:
        errs.len_range((*path, "options"), options, 1, 25)
    for k, opt in enumerate(options):
        for key in ("label", "value", "description"):
            errs.max_len((*path, "options", k, key), opt.get(key), 100)
    errs.max_len((*path, "placeholder"), comp.get("placeholder"), 150)
    lo, hi = comp.get("min_values", 1), comp.get("max_values", 1)
    if not 0 <= lo <= 25:
        errs.add((*path, "min_values"), "NUMBER_TYPE_MAX", "int value should be <= 25 and >= 0.")
    if not 1 <= hi <= 25 or hi < lo:
        errs.add((*path, "max_values"), "NUMBER_TYPE_MAX", "int value should be <= 25 and >= 1.")
    if comp.get("type") == 3 and options and hi > len(options):
        errs.add(
            (*path, "max_values"),
            "SELECT_COMPONENT_MAX_VALUES_EXCEEDED",
            "max_values exceeds the number of options",
        )


def validate_modal(data: dict[str, Any]) -> None:
    """A type-9 callback body: title ≤ 45, 1–5 rows/labels, custom ids 1–100."""
    errs = FormErrors()
    errs.len_range(("data", "custom_id"), data.get("custom_id"), 1, 100)
    errs.len_range(("data", "title"), data.get("title"), 1, 45)
    rows = data.get("components") or []
    errs.len_range(("data", "components"), rows, 1, 5)
    seen: set[str] = set()
    for i, row in enumerate(rows):
        inner = row.get("components") if row.get("type") == 1 else [row.get("component")]
        for j, comp in enumerate(c for c in inner or [] if c):
            if comp.get("type") == 4:
                errs.max_len(
                    ("data", "components", i, "components", j, "max_length"),
                    "x" * int(comp.get("max_length") or 0),
                    4000,
                )
            if comp.get("custom_id") is not None or comp.get("type") in (4, *SELECT_TYPES):
                _validate_custom_id(
                    errs, ("data", "components", i, "components", j), comp.get("custom_id"), seen
                )
        if row.get("type") == 18:
            errs.max_len(("data", "components", i, "label"), row.get("label"), 45)
    errs.raise_if_any()


def validate_command(errs: FormErrors, i: int, cmd: dict[str, Any]) -> None:
    """Slash command names 1–32 lowercase, descriptions 1–100."""
    name = cmd.get("name") or ""
    errs.len_range((i, "name"), name, 1, 32)
    if int(cmd.get("type", 1)) == 1:
        if name != name.lower() or " " in name:
            errs.add((i, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
        errs.len_range((i, "description"), cmd.get("description"), 1, 100)
