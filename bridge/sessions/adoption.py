"""Adopt a Claude Code session the bridge did not start into a thread, and give it back.

An adopted session is a thread's session like any other for the bot: its pane is addressed
with its tmux socket (``bridge.tmux.pane_address``), so typing, reading the screen, the key
gate and interrupt work as for the bridge's own panes; its hooks find the thread by the
session id recorded at adoption (``bridge/state/adoptions.py``). The bot's record of the
thread (``state/<thread>.json``) carries ``adopted``: the pane address, the Claude process
(pid and start time, so a reused pid is never taken for it) and the session id. The pane is
never started, killed or restarted by the bridge: a bot stop or restart leaves it running and
the record brings it back; Release (or ``/stop``) only forgets it.

Blocking and Discord-free: the bot calls these through ``asyncio.to_thread``.
"""

from __future__ import annotations

import glob
import os
import time

from bridge.sessions import machine, machine_codex
from bridge.state import adoptions, locations, runtime, session_record, session_state


class CannotAdopt(RuntimeError):
    """The session cannot be adopted; the text says why and what to do."""


def adopt(
    rt: runtime.Runtime,
    found: machine.FoundSession,
    server: str,
    project: str,
    parent_id: str,
    thread_id: str,
    thread_name: str,
    config: str,
) -> dict:
    """Make ``found`` the session of thread ``thread_id``: the bot's record, the session
    record (its conversation, for ``/status`` and a later resume) and the hooks' route.
    ``config``: the bot's config file; not the bridge home's (``try``, ``run --config``): the
    session's hooks, which read the home's, are routed to it (:func:`adoptions.route`)."""
    if found.session_id is None:
        raise CannotAdopt(CODEX_NO_SESSION_ID if found.agent == "codex" else NO_SESSION_ID)
    adopted = {
        "agent": found.agent,
        "address": found.address,
        "socket": found.socket,
        "pane_id": found.pane_id,
        "where": found.where,
        "pid": found.pid,
        "proc_start": found.proc_start,
        "session_id": found.session_id,
        "adopted_at": time.time(),
    }
    session_state.update(
        rt,
        thread_id,
        server=server,
        project=project,
        parent_id=parent_id,
        thread_id=thread_id,
        thread_name=thread_name,
        window=found.where,
        pane_id=found.address,
        cwd=found.cwd,
        worktree=None,
        wanted="running",
        started_at=time.time(),
        adopted=adopted,
    )
    session_record.write_record(
        rt,
        thread_id,
        {
            "session_id": found.session_id,
            "transcript_path": transcript_of(found),
            "cwd": found.cwd,
            "source": "adopted",
            "pane_id": found.address,
            "channel_id": thread_id,
            "recorded_at": time.time(),
        },
    )
    adoptions.adopt(rt, found.session_id, thread_id, project, parent_id)
    if adoptions.routes_needed(config):
        adoptions.route(found.session_id, config)
    return adopted


def route_live(rt: runtime.Runtime, config: str) -> int:
    """When the bot starts: route the hooks of its adopted sessions that still run to it
    again (its routes went when it stopped). One the bridge home's bot adopted meanwhile is
    its now: released here. How many were routed."""
    if not adoptions.routes_needed(config):
        return 0
    home = locations.home_bot_dirs()
    routed = 0
    for record in session_state.all_records(rt):
        adoption, key = record.get("adopted"), record.get("thread_id")
        if not isinstance(adoption, dict) or not alive(adoption) or not isinstance(key, str):
            continue
        session_id = adoption.get("session_id")
        if not adoptions.is_session_id(session_id):
            continue
        if home is not None and home.state_root != rt.state_root:
            taken = adoptions.lookup(home, session_id)
            if taken is not None and not taken.get("released"):
                release(rt, key)
                continue
        adoptions.route(session_id, config)
        routed += 1
    return routed


NO_SESSION_ID = (
    "Claude Code has not said which conversation this is (it writes "
    "`~/.claude/sessions/<pid>.json` a moment after it starts; 2.1.197 and older never do), "
    "so its hooks could not be told apart: not adopted."
)
CODEX_NO_SESSION_ID = (
    "This Codex does not say which conversation it shows: its TUI holds the conversation's "
    "file open only from its first prompt, and only when it runs the conversation itself (from "
    "0.160 a Codex started by hand has its app-server daemon do that, unless started with "
    "`codex -c features.daemon_auto_start=false`). Its hooks could not be told apart: not "
    "adopted."
)


def transcript_of(found: machine.FoundSession) -> str | None:
    """The session's transcript, where the CLI keeps it (``projects/<dir>/<id>.jsonl``; a
    Codex's: the rollout it holds open)."""
    if found.agent == "codex":
        return machine_codex.rollout_open(found.pid)
    config_dir = machine.claude_config_dir(machine.proc_environ(found.pid))
    pattern = os.path.join(glob.escape(config_dir), "projects", "*", f"{found.session_id}.jsonl")
    matches = glob.glob(pattern)
    return matches[0] if matches else None


def adopted(rt: runtime.Runtime, key: str) -> dict | None:
    """The adoption of session ``key`` (a thread), if it has one."""
    record = session_state.load(rt, key) or {}
    value = record.get("adopted")
    return value if isinstance(value, dict) and value.get("address") else None


def alive(adoption: dict) -> bool:
    """The adopted Claude Code process still runs (same pid, same start): one ``/proc``
    read, no tmux command, so the relay can ask before every message."""
    pid = adoption.get("pid")
    return isinstance(pid, int) and machine.proc_start(pid) == adoption.get("proc_start")


def live_address(rt: runtime.Runtime, key: str) -> str | None:
    adoption = adopted(rt, key)
    return adoption["address"] if adoption is not None and alive(adoption) else None


def release(rt: runtime.Runtime, key: str, ended: bool = False) -> dict | None:
    """Give the session back: its hooks post nowhere, the thread forgets its pane; the pane
    and its Claude Code are not touched. The thread also forgets the conversation (a message
    there starts a new one, never a second Claude Code on the conversation that still runs),
    unless the adopted process has ``ended``: then the thread may resume it in a pane of
    its own. The adoption that was, or None."""
    adoption = adopted(rt, key)
    if adoption is None:
        return None
    if adoptions.is_session_id(adoption.get("session_id")):
        adoptions.release(rt, adoption["session_id"])
        adoptions.unroute(adoption["session_id"])
    session_state.update(rt, key, adopted=None, pane_id=None, wanted="stopped")
    if not ended:
        try:
            os.unlink(session_record.record_path(rt, key))
        except FileNotFoundError:
            pass
    return adoption
