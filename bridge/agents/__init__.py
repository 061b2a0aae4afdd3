"""The one seam between the bridge and the coding agent CLIs it drives.

A project (or a thread entry) names its agent in the config (``"agent"``: ``"claude"``, the
default, or ``"codex"``); :func:`agent_for` gives the :class:`~bridge.agents.base.Agent` that
knows that CLI: its command line, its screen, its hook file, its versions. Claude Code is
``bridge/claude/`` behind it, Codex ``bridge/codex/``.
"""

from __future__ import annotations

from bridge.agents.base import Agent, Launch, Screen
from bridge.agents.claude import ClaudeCode
from bridge.agents.codex import Codex
from bridge.config import AGENTS, DEFAULT_AGENT

__all__ = ["AGENTS", "Agent", "Launch", "Screen", "agent_for"]

_REGISTRY: dict[str, Agent] = {agent.name: agent for agent in (ClaudeCode(), Codex())}
assert tuple(_REGISTRY) == AGENTS, "the config's choices and the registry must agree"


def agent_for(name: str | None) -> Agent:
    """The agent a config names (None: the default, Claude Code). A name the config's
    validation would refuse raises ``ValueError``: nothing unchecked picks a program."""
    agent = _REGISTRY.get(name or DEFAULT_AGENT)
    if agent is None:
        raise ValueError(f"unknown agent {name!r}: expected one of {', '.join(AGENTS)}")
    return agent
