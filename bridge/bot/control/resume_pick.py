"""``/resume`` with a conversation named: one of the project's past conversations, offered
from its agent's own transcripts (``Agent.conversations``: Claude Code's, or a Codex
project's rollouts) and resumed in this channel's or thread's session (``claude --resume``,
``codex resume <id>``). Without a name, ``/resume`` goes on with the session's last one.

The id comes from Discord: only a conversation the agent's reader finds for this project is
ever resumed, and it is recorded as the session's before the start, which resumes it.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from discord import app_commands

from bridge.agents import agent_for
from bridge.claude import history
from bridge.sessions import adoption, machine, machine_codex, pane_ops
from bridge.state import session_record

if TYPE_CHECKING:
    from bridge.claude.history import Conversation
    from bridge.sessions.manager import SessionManager
    from bridge.sessions.targets import SessionTarget

ANSWER_WITHIN = 2.5  # seconds an autocomplete may take (Discord allows 3)


async def choices(target: SessionTarget, current: str) -> list[app_commands.Choice[str]]:
    """The project's conversations whose first prompt or id holds ``current``, newest first."""
    agent = agent_for(target.agent)
    try:
        found = await asyncio.wait_for(
            asyncio.to_thread(agent.conversations, target.path), ANSWER_WITHIN
        )
    except TimeoutError:
        return []
    wanted = current.strip().lower()
    picked = [c for c in found if wanted in c.first_prompt.lower() or wanted in c.session_id]
    return [app_commands.Choice(name=label(c), value=c.session_id) for c in picked[:25]]


def label(c: Conversation) -> str:
    stamp = time.strftime("%m-%d %H:%M", time.localtime(c.updated))
    return f"{stamp} · {' '.join(c.first_prompt.split())}"[:100]


async def resume(
    sessions: SessionManager, target: SessionTarget, pane_id: str | None, session_id: str
) -> str:
    """Resume conversation ``session_id`` of the project here, ending the session's current
    one first (never a turn that runs, never a session the bridge did not start)."""
    agent = agent_for(target.agent)
    found = await asyncio.to_thread(agent.conversation, target.path, session_id.strip())
    if found is None:
        return "⚠️ No such conversation of this project: pick one from the list."
    if pane_id is not None:
        if sessions.resumable(target) == found.session_id:
            return "Already running: this is the current conversation."
        refused = await _refuse_restart(sessions, target, pane_id, agent.label)
        if refused:
            return refused
    else:
        running = await asyncio.to_thread(running_elsewhere, target.agent, found)
        if running is not None:
            return f"⚠️ That conversation is open in a running {agent.label} (process {running})."
    record = {
        "session_id": found.session_id,
        "transcript_path": found.path,
        "cwd": target.path,
        "project_path": target.project.path,
        "source": "resume",
        "channel_id": target.key,
        "recorded_at": time.time(),
    }
    await asyncio.to_thread(session_record.write_record, sessions.runtime, target.key, record)
    if pane_id is not None:
        await sessions.stop(target.key)
    pane_id = await sessions.ensure_running(target)
    return f"Resumed conversation `{found.session_id}` in `{pane_id}`: “{label(found)}”."


def running_elsewhere(agent: str, found: Conversation) -> int | None:
    """A process that has conversation ``found`` open now: Claude Code's own record of the
    conversations it runs, or a process holding Codex's rollout open."""
    if agent == "codex":
        return machine_codex.running_conversation(found.path)
    return machine.running_conversation(found.session_id, history.config_dir())


async def _refuse_restart(
    sessions: SessionManager, target: SessionTarget, pane_id: str, agent: str
) -> str | None:
    if await asyncio.to_thread(adoption.adopted, sessions.runtime, target.key):
        return f"⚠️ This {agent} was started outside the bridge: `/stop` releases it first."
    keys = sessions.keys(target.key, pane_id)
    await asyncio.to_thread(keys.check, "the restart on another conversation")
    seen = await asyncio.to_thread(pane_ops.glance, sessions.tmux, pane_id, keys.screen)
    if seen.busy:
        return f"⚠️ {agent} is working: wait for its reply, or `/esc` first."
    return None
