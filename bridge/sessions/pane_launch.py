"""How a session's pane is started: the agent's command line (model, permission mode, resume,
the upload and output folders, the paths its file tools may not touch) and the env vars on
the pane that tell every hook where to post.

Its own module because it is what a start hands tmux, apart from which session starts when
(``manager``); its functions read nothing but their arguments and the bot's environment.
"""

from __future__ import annotations

import os

from bridge.agents import Launch, agent_for
from bridge.claude.launch import ENV_CHANNEL, ENV_THREAD
from bridge.config import ENV_TMUX_SOCKET
from bridge.sessions.targets import SessionTarget
from bridge.state import runtime


def launch_argv(
    rt: runtime.Runtime,
    config_path: str,
    upload_limit: int,
    target: SessionTarget,
    resume: str | None = None,
) -> list[str]:
    agent = agent_for(target.agent)
    command, extra_args = agent.command(target.project)
    return agent.argv(
        Launch(
            command,
            target.model,
            target.permission,
            resume,
            rt.channel_dir("uploads", target.key),
            rt.channel_dir("outputs", target.key),
            upload_limit,
            extra_args,
            private_paths(rt, config_path),
            target.project.claude_nice,
        )
    )


def private_paths(rt: runtime.Runtime, config_path: str) -> list[str]:
    """What Claude's own file tools may not touch: the config (bot tokens) and the bridge
    home, and every runtime and state folder but uploads/ and outputs/ (decision files,
    prompts, records, logs, the outbox)."""
    keep = ("uploads", "outputs")
    paths = [config_path, runtime.bridge_home()]
    return paths + [rt.path(name) for name in runtime.SUBDIRS if name not in keep]


def pane_env(rt: runtime.Runtime, config_path: str, target: SessionTarget) -> dict[str, str]:
    """Env vars on the pane: they reach every hook of that Claude Code session. A thread's
    session carries its parent channel and its thread, so its hooks post to the thread."""
    env = {
        **agent_for(target.agent).pane_env,
        ENV_CHANNEL: target.project.channel_id,
        runtime.ENV_CONFIG: config_path,
        runtime.ENV_HOME: runtime.bridge_home(),
        runtime.ENV_RUNTIME_DIR: rt.root,
        runtime.ENV_STATE_DIR: rt.state_root,
        "DISCORD_BRIDGE_OUTPUT_DIR": rt.path("outputs", target.key),
    }
    if target.thread_id is not None:
        env[ENV_THREAD] = target.thread_id
    # Not DISCORD_BRIDGE_API_BASE: hooks take the endpoints from the config file only.
    for name in (ENV_TMUX_SOCKET, "DISCORD_BRIDGE_RETRY_SECONDS"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env
