"""JSON decoding without importing :mod:`json`.

Hooks run on every tool call, and ``import json`` pulls in ``re`` and ``enum``, which costs
about 15 ms on a small machine: more than the rest of a hook's fast path. The C scanner that
:mod:`json` itself uses is reachable directly through ``_json.make_scanner``; this module
drives it the same way ``json.JSONDecoder`` does. If the accelerator is missing (another
Python implementation), it falls back to :func:`json.loads`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable

_WHITESPACE = " \t\n\r"


class _Context:
    """The attributes ``_json.make_scanner`` reads from a decoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}  # noqa: RUF012 - the scanner uses its own memo; kept for parity

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


_scan: Callable[[str, int], tuple[object, int]] | None
try:
    from _json import make_scanner as _make_scanner

    # CPython reads a decoder's settings from the argument (typeshed declares a scanner there)
    _scan = _make_scanner(_Context())  # type: ignore[arg-type]
except ImportError:  # pragma: no cover - CPython always has _json
    _scan = None


class JSONDecodeError(ValueError):
    """The text is not one JSON document."""


def loads(text: str | bytes) -> object:
    """Parse one JSON document, like :func:`json.loads`; nesting too deep for the decoder is
    a :class:`JSONDecodeError` too (not a ``RecursionError``)."""
    if isinstance(text, bytes | bytearray):
        # A BOM is skipped by hand: the utf-8-sig codec is a module import of its own.
        text = bytes(text[3:] if text[:3] == b"\xef\xbb\xbf" else text).decode("utf-8")
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = _skip_whitespace(text, 0)
    try:
        value, end = _scan(text, start)
    except StopIteration as err:
        raise JSONDecodeError(f"expected a JSON value at character {err.value}") from None
    except Exception:
        # The C scanner builds its error through json.decoder, which CPython 3.11 may fail to
        # import from inside the scanner (SystemError). On this error path the import cost no
        # longer matters: let json itself describe the problem.
        raise JSONDecodeError(_describe_error(text)) from None
    if _skip_whitespace(text, end) != len(text):
        raise JSONDecodeError(f"extra data at character {end}")
    return value


def _describe_error(text: str) -> str:
    import json

    try:
        json.loads(text)
    except ValueError as err:
        return str(err)
    except RecursionError:
        return "nested too deeply"
    return "invalid JSON"


def _skip_whitespace(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


_quote: Callable[[str], str] | None
try:
    from _json import encode_basestring_ascii as _quote
except ImportError:  # pragma: no cover
    _quote = None


def dumps(value: object) -> str:
    """Serialise dicts, lists, strings, numbers, booleans and None, like :func:`json.dumps`
    with ``ensure_ascii`` (the hooks' answers and records need nothing more)."""
    if _quote is None:  # pragma: no cover
        import json

        return json.dumps(value)
    parts: list[str] = []
    _dump(value, parts, _quote)
    return "".join(parts)


def _dump(value: object, parts: list[str], quote: Callable[[str], str]) -> None:
    if isinstance(value, str):
        parts.append(quote(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("NaN and infinities are not JSON")
        parts.append(float.__repr__(value))
    elif isinstance(value, dict):
        parts.append("{")
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"keys must be strings, not {type(key).__name__}")
            parts.append(", " if i else "")
            parts.append(quote(key) + ": ")
            _dump(item, parts, quote)
        parts.append("}")
    elif isinstance(value, list | tuple):
        parts.append("[")
        for i, item in enumerate(value):
            parts.append(", " if i else "")
            _dump(item, parts, quote)
        parts.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON serialisable")
