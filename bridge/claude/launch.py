"""How Claude Code is started for a bridge session: its command line and its pane's marker env.

Hooks find their session's channel from the env vars set here (``ENV_CHANNEL``, ``ENV_THREAD``);
the appended system prompt tells Claude where attachments arrive and how to send files back.
"""

from __future__ import annotations

import os

from bridge import fastjson
from bridge.config.defaults import MODE_ALIASES
from bridge.sizes import format_size
from bridge.state.runtime import ENV_CHANNEL, ENV_THREAD  # noqa: F401 - the panes' markers

# Set on every pane the bridge starts. 2.1.332 (measured): ← on an empty input
# box moves the session into a daemon's agent view, under a new session id, outliving the tmux
# window, and that view's own box takes typed text as a new background task. Off, ← does
# nothing there. (Claude Code also reads it from settings: "disableAgentView".)
PANE_ENV = {"CLAUDE_CODE_DISABLE_AGENT_VIEW": "1"}

SYSTEM_PROMPT = """\
You are being driven from Discord through discord-bridge: the user reads your final replies \
in a Discord channel, often on a phone.
- Files the user attaches in Discord are saved under {uploads} and their paths appear in the \
prompt as "Attached file: /path".
- To send a file to the user, save it inside {outputs} and put the marker \
[DISCORD_ATTACH: <name relative to that folder>] on its own line in your reply, e.g. \
[DISCORD_ATTACH: report.txt]. Up to {limit} per file; the marker is removed from the text."""


def claude_argv(
    command: str,
    model: str | None,
    permission: str | None,
    resume: str | None,
    uploads: str,
    outputs: str,
    upload_limit: int,
    extra_args: list[str],
    private: list[str] | tuple[str, ...] = (),
    nice: int = 0,
) -> list[str]:
    """``claude`` with the session's model, permission mode, conversation to resume, access to
    its uploads/outputs folders and the bridge's system prompt, then the user's own args.

    ``private``: directories and files Claude's own file tools must not touch (the bridge's
    config, its decision files and records), denied in the same settings layer.

    ``nice`` > 0 starts it through ``nice -n``: with many sessions busy, Claude Code's
    rendering then yields the CPU to the bot typing and reacting (its hooks inherit the
    niceness, and compete with Claude Code as before)."""
    argv = ["nice", "-n", str(nice), command] if nice > 0 else [command]
    if model:
        argv += ["--model", model]
    if permission:
        argv += ["--permission-mode", MODE_ALIASES.get(permission, permission)]
    if resume:
        argv += ["--resume", resume]
    # Not --add-dir: for a directory it has not seen, that raises a trust dialog whose
    # default answer exits Claude Code. additionalDirectories in a session settings layer
    # grants the same access without asking.
    permissions: dict = {"additionalDirectories": [uploads, outputs]}
    if private:
        permissions["deny"] = deny_rules(private)
    argv += ["--settings", fastjson.dumps({"permissions": permissions})]
    limit = format_size(upload_limit)
    prompt = SYSTEM_PROMPT.format(uploads=uploads, outputs=outputs, limit=limit)
    argv += ["--append-system-prompt", prompt]
    return argv + extra_args


def lower_cpu_group(pid: int, nice: int) -> bool:
    """Give the autogroup of ``pid`` (a pane's process: tmux starts each pane in a session of
    its own) the niceness ``nice``. Where the kernel groups processes by session
    (``/proc/sys/kernel/sched_autogroup_enabled``, on by default on most distributions) the
    scheduler shares the CPU between groups first, so ``nice -n`` on Claude Code alone left
    20 busy sessions 20 full shares against the bot's one (measured: the bot's typing waited
    as before). Raising a group's niceness needs no privilege. False where there are no
    autogroups (or the write is refused): ``nice -n`` then does the job alone."""
    try:
        fd = os.open(f"/proc/{int(pid)}/autogroup", os.O_WRONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        os.write(fd, str(int(nice)).encode())
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def deny_rules(paths: list[str] | tuple[str, ...]) -> list[str]:
    """``Read(…)`` and ``Edit(…)`` deny rules for each path and everything below it.

    Claude Code's path rules take an absolute path as ``//path``; ``Edit`` rules cover every
    built-in tool that writes files (Edit, Write, NotebookEdit), and a path-scoped ``Write(…)``
    rule is not consulted, so there is none. A deny rule wins over ``additionalDirectories``
    and over every permission mode. Bash is not covered: see the README's Security section."""
    import os

    rules: list[str] = []
    for path in paths:
        for variant in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
            pattern = "/" + variant.rstrip("/")
            for tool in ("Read", "Edit"):
                rules += [f"{tool}({pattern})", f"{tool}({pattern}/**)"]
    return rules
