"""How Codex is started for a bridge session: its command line (the pane's marker env is the
bridge's, as for Claude Code).

``features.daemon_auto_start=false``: else the TUI starts an app-server daemon of its own
(measured on 0.171.0: ``~/.codex/packages/app-server-daemon/…/codex app-server``),
re-parented to init and still running after its tmux window is gone. Not ``--no-daemon``,
which 0.150.1 (the oldest tested) refuses; it starts with the setting, which it does not
know. The bridge's instructions (where attachments arrive, how to send files back) go in as
``developer_instructions``; the outputs folder is made writable with ``--add-dir`` (reading
the uploads needs nothing: Codex's sandbox reads everywhere).
"""

from __future__ import annotations

import re

from bridge import fastjson
from bridge.claude.launch import SYSTEM_PROMPT
from bridge.claude.start_failure import Wording
from bridge.sizes import format_size

# What the bridge tells the model, the same for either agent (Claude Code's system prompt).
INSTRUCTIONS = SYSTEM_PROMPT
# A Codex session id (measured: 01a22656-bb46-7c93-b002-84fc9a347e53, a UUID v7): what a
# transcript, a record or a pane says goes to ``codex resume`` only in this shape.
SESSION_ID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def is_session_id(value: object) -> bool:
    return isinstance(value, str) and SESSION_ID.fullmatch(value) is not None


def codex_argv(
    command: str,
    model: str | None,
    resume: str | None,
    uploads: str,
    outputs: str,
    upload_limit: int,
    extra_args: list[str],
    nice: int = 0,
) -> list[str]:
    """``codex`` (``codex resume <id>`` to go on with a session) with the session's model,
    the bridge's instructions and its outputs folder writable, then the user's own args.
    ``nice`` > 0 starts it through ``nice -n``, as Claude Code is."""
    argv = ["nice", "-n", str(nice), command] if nice > 0 else [command]
    if resume:
        if not is_session_id(resume):
            raise ValueError(f"not a Codex session id: {resume!r}")
        argv += ["resume", resume]
    argv += ["-c", "features.daemon_auto_start=false"]
    if model:
        argv += ["--model", model]
    argv += ["--add-dir", outputs]
    text = INSTRUCTIONS.format(uploads=uploads, outputs=outputs, limit=format_size(upload_limit))
    # -c takes a TOML value: a JSON string is a valid TOML basic string
    argv += ["-c", f"developer_instructions={fastjson.dumps(text)}"]
    return argv + extra_args


# How a Codex that did not start is named, and what to fix (``bridge/claude/start_failure.py``
# reads the dead pane). An option it refuses, measured on 0.171.0: ``error: unexpected
# argument '--bogus' found``.
START_WORDING = Wording(
    "Codex",
    "codexCommand",
    "codexArgs",
    "codex",
    "npm install -g @openai/codex",
    r"^error: (unexpected argument|invalid value|unknown option)",
    " and `model`",
    "`discord-bridge selftest --codex <command>` checks Codex with the bridge, offline",
)
