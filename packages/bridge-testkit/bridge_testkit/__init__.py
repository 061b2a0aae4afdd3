"""The discord-bridge end-to-end rig, shared by tests/ and bench/.

``BridgeRig`` wires the Discord emulator (``discord_emulator``), the fake Anthropic API
(``fake_anthropic``), the real Claude Code CLI in a private tmux server, the bot run as
``python -m bridge.cli run`` and the hooks installed into a throwaway HOME. tests/conftest.py
builds one per test (the ``rig`` fixture); ``bench_rig`` builds one for a benchmark script.
``hook_input`` builds the JSON Claude Code sends a hook, checked against its published types
(``hook_contract``).
"""

from .bench import bench_rig, percentile
from .hook_contract import hook_input, not_from_claude
from .questions import FORM, QUESTIONS
from .rig import REPO, STATUS_MARKS, TMUX_SESSION, BridgeRig, is_status, paths_under, wait_until

__all__ = [
    "FORM",
    "QUESTIONS",
    "REPO",
    "STATUS_MARKS",
    "TMUX_SESSION",
    "BridgeRig",
    "bench_rig",
    "hook_input",
    "is_status",
    "not_from_claude",
    "paths_under",
    "percentile",
    "wait_until",
]
