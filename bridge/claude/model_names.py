"""One name for a model wherever the bridge shows it (``/status``, the panel, a reply's footer,
``/usage``): Claude Code's own display name ("Opus 5.5"), never its id ("claude-opus-5-5") or
"default model" beside it. The statusLine gives the display name of the model that is running;
an id or alias from the config or ``/model`` is named the same way until it does."""

FAMILIES = ("opus", "sonnet", "haiku")
ONE_MILLION = "[1m]"  # Claude Code's suffix for the 1M-token context window


def display_name(model: object) -> str:
    """``claude-opus-5-5`` → ``Opus 5.5``, ``claude-sonnet-4-5-20250929`` → ``Sonnet 4.5``,
    ``opus`` → ``Opus``, ``claude-opus-5-5[1m]`` → ``Opus 5.5 (1M context)``; a name of any
    other shape as it is given ("" for none)."""
    model = model.strip() if isinstance(model, str) else ""
    base = model[: -len(ONE_MILLION)] if model.lower().endswith(ONE_MILLION) else model
    parts = base.lower().split("-")
    if parts[0] == "claude":
        parts = parts[1:]
    families = [part for part in parts if part in FAMILIES]
    if len(families) != 1:
        return model
    numbers = [part for part in parts if part != families[0] and not _is_date(part)]
    if not all(part.isdigit() and len(part) <= 2 for part in numbers):
        return model
    name = " ".join([families[0].capitalize(), ".".join(numbers)]).strip()
    return name + (" (1M context)" if base != model else "")


def session_model(chosen: str | None, live: dict) -> str:
    """The model a session runs, as shown to the owner: ``chosen`` is the name set for it
    (``/model``, else the config; None for Claude Code's default), ``live`` what its
    statusLine last saw (``model_name``, ``model_id``). The statusLine's name wins when it
    is the chosen model (an alias such as ``opus`` names a family); until it has seen the
    choice, the choice."""
    seen = _text(live.get("model_name")) or display_name(_text(live.get("model_id")))
    if chosen and chosen != "default":
        name = display_name(chosen)
        return seen if seen and (seen == name or seen.startswith(name + " ")) else name
    return f"{seen} (default)" if seen else "Claude Code's default"


def _is_date(part: str) -> bool:
    return len(part) == 8 and part.isdigit()


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
