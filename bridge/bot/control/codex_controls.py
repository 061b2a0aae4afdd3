"""What the session commands do where Codex differs from Claude Code.

``/status`` shows the model Codex's own SessionStart reported and says it has no mode the
bridge switches; ``/mode`` says so and presses nothing; ``/model`` restarts Codex on the same
conversation with ``--model`` (``bridge/codex/models.py``: its TUI's ``/model`` is a picker
the bridge does not drive blind), offering the names of Codex's own catalog. The rest
(``/stop``, ``/esc``, ``/peek``, ``/new``, ``/resume``, ``/keys``) is agent-independent.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from discord import app_commands

from bridge.codex import models
from bridge.sessions import adoption, pane_ops
from bridge.state import session_record, session_state

if TYPE_CHECKING:
    from bridge.sessions.manager import SessionManager
    from bridge.sessions.targets import SessionTarget

CODEX = "codex"
NO_MODES = (
    "Codex has no permission modes the bridge can switch; its approval policy comes from its "
    "config or `codexArgs`."
)
MODE_LINE = "mode: none: Codex's approvals come from its config or `codexArgs`"
BAD_NAME = "⚠️ A model name is letters, digits and - _ . : [ ] /, starting with a letter or digit."
ADOPTED = (
    "⚠️ This Codex was started outside the bridge, which does not restart it: its own "
    "`/model` picker changes the model at its terminal."
)
BUSY = (
    "⚠️ Codex is working: the model changes with a restart of Codex, which would end this "
    "turn. Wait for its reply, or `/esc` first."
)
ANSWER_WITHIN = 2.5  # seconds an autocomplete may take (Discord allows 3)


def is_codex(target: SessionTarget) -> bool:
    return target.agent == CODEX


def model_line(sessions: SessionManager, target: SessionTarget, record: dict) -> str:
    """The model Codex reported at its last start (SessionStart's ``model``), else the one
    chosen (``/model``, the config), else Codex's default."""
    started = session_record.read_record(sessions.runtime, target.key) or {}
    reported = started.get("model")
    chosen = record.get("model") or target.model
    shown = reported if isinstance(reported, str) and models.valid_name(reported) else chosen
    return f"model: {shown or 'Codex’s default'}"


async def switch_model(
    sessions: SessionManager, target: SessionTarget, pane_id: str, name: str
) -> str:
    """Restart Codex with ``--model name``, resuming its conversation; recorded, so later
    starts keep it. Never while a turn runs or a prompt is open, never an adopted Codex."""
    name = name.strip()
    if not models.valid_name(name):
        return BAD_NAME
    if await asyncio.to_thread(adoption.adopted, sessions.runtime, target.key):
        return ADOPTED
    keys = sessions.keys(target.key, pane_id)
    await asyncio.to_thread(keys.check, "the restart with another model")
    seen = await asyncio.to_thread(pane_ops.glance, sessions.tmux, pane_id, keys.screen)
    if seen.busy:
        return BUSY
    await asyncio.to_thread(session_state.update, sessions.runtime, target.key, model=name)
    conversation = sessions.resumable(target)
    await sessions.stop(target.key)
    pane_id = await sessions.ensure_running(target)
    how = f"conversation `{conversation}` resumed" if conversation else "a new conversation"
    return f"Model set to **{name}**: Codex restarted with `--model {name}` ({how}, `{pane_id}`)."


async def model_choices(target: SessionTarget, current: str) -> list[app_commands.Choice[str]]:
    """Codex's catalog (its picker's list) whose slug or name holds ``current``; none when
    Codex cannot say in time (the user names one)."""
    try:
        found = await asyncio.wait_for(
            asyncio.to_thread(models.catalog, target.project.codex_command), ANSWER_WITHIN
        )
    except TimeoutError:
        return []  # the catalog is kept once it comes: the next keystroke has it
    wanted = current.strip().lower()
    picked = [m for m in found if wanted in m.slug.lower() or wanted in m.name.lower()]
    return [app_commands.Choice(name=f"{m.name} ({m.slug})", value=m.slug) for m in picked[:25]]
