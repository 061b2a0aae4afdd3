"""The compact session summary: model, context used, cost and rate-limit usage.

One line built from the record the statusLine command caches (see ``bridge.handlers.status_line``):
``Opus 5.5 · ctx 12% · $0.43 · 5h 23%``. The Stop hook ends a reply with it as Discord
subtext (``-# …``); the statusLine command prints it in the terminal when the user had no
statusLine of their own. Imported by both hooks: nothing beyond the model's display name.
"""

from __future__ import annotations

from bridge.claude.model_names import display_name

SEPARATOR = " · "
_MAX_NAME = 60
# rate_limits windows as the CLI names them -> short labels
_WINDOWS = {
    "five_hour": "5h",
    "seven_day": "7d",
    "seven_day_opus": "7d Opus",
    "seven_day_sonnet": "7d Sonnet",
}


def summary(record: dict) -> str:
    """``Opus 5.5 · ctx 12% · $0.43 · 5h 23% · 7d 41%``; parts without data are left out."""
    parts = []
    name = _text(record.get("model_name")) or display_name(_text(record.get("model_id")))
    if name:
        parts.append(name)
    context = record.get("context_percent")
    if _is_number(context):
        parts.append(f"ctx {context:.0f}%")
    cost = record.get("cost_usd")
    if _is_number(cost):
        parts.append(f"${cost:.2f}")
    limits = record.get("rate_limits")
    for window, used in limits.items() if isinstance(limits, dict) else ():
        if _is_number(used):
            label = _WINDOWS.get(window) or _text(str(window).replace("_", " "))
            parts.append(f"{label} {used:.0f}%")
    return SEPARATOR.join(parts)


def footer_line(record: dict) -> str:
    """The summary as Discord subtext, or ``""`` when there is nothing to say."""
    text = summary(record)
    return f"-# {text}" if text else ""


def _is_number(value: object) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return -1e12 < value < 1e12  # also false for NaN and infinities


def _text(value: object) -> str:
    """A name safe on one subtext line: no line breaks or control characters, bounded."""
    if not isinstance(value, str):
        return ""
    clean = "".join(ch if ch.isprintable() else " " for ch in value).strip()
    return clean if len(clean) <= _MAX_NAME else clean[: _MAX_NAME - 1] + "…"
