"""The models Codex offers, from its own catalog: ``codex debug models``.

Measured on 0.171.0 and 0.150.1: it prints ``{"models": [{"slug", "display_name",
"visibility": "list" | "hide", …}]}`` in ~0.8 s, without a model request. Codex's TUI
``/model`` is a picker of the same list ("Select Model and Effort", ↑↓ and Enter), which the
bridge does not drive blind: it restarts Codex on the same conversation with ``--model``
(``codex resume <id> --model <slug>``: the next SessionStart reports that model and the next
request uses it). A model name is checked before it reaches a command line.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass

from bridge import fastjson

CATALOG_TIMEOUT = 10.0  # seconds `codex debug models` may take
KEPT = 3600.0  # seconds a catalog is reused (it changes with Codex's version or its refresh)
# A slug as Codex's catalog has them (gpt-6.2-sol), or a provider's own name: never an option.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,99}")


@dataclass(frozen=True)
class Model:
    slug: str  # what --model takes
    name: str  # what Codex's picker shows


_catalogs: dict[str, tuple[float, list[Model]]] = {}


def valid_name(name: str) -> bool:
    """``name`` may go to ``--model``: letters, digits and ``._:/[]-``, not starting with ``-``."""
    return MODEL_NAME.fullmatch(name) is not None


def catalog(command: str) -> list[Model]:
    """The models Codex's own ``/model`` picker lists (``visibility: "list"``), for the
    ``codex`` at ``command`` (the project's ``codexCommand``, from the config). Blocking;
    [] when it cannot say (an older Codex, an error)."""
    now = time.monotonic()
    kept = _catalogs.get(command)
    if kept is not None and now - kept[0] < KEPT:
        return kept[1]
    try:
        done = subprocess.run(
            [command, "debug", "models"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=CATALOG_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    models = parse_catalog(done.stdout) if done.returncode == 0 else []
    if models:
        _catalogs[command] = (now, models)
    return models


def parse_catalog(raw: bytes) -> list[Model]:
    """The listed models of ``codex debug models``' JSON, in its order; anything of another
    shape, or a slug that is no model name, left out."""
    try:
        data = fastjson.loads(raw)
    except ValueError:
        return []
    entries = data.get("models") if isinstance(data, dict) else None
    models = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("visibility") != "list":
            continue
        slug, name = entry.get("slug"), entry.get("display_name")
        if isinstance(slug, str) and valid_name(slug):
            models.append(Model(slug, name if isinstance(name, str) and name else slug))
    return models
