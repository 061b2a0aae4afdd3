"""Which coding agent a project or a thread entry runs: ``"agent": "claude"`` (the default) or
``"codex"``, validated with the path of a wrong value, merged like a thread's other settings,
and each agent's own command and arguments."""

from __future__ import annotations

import copy

from bridge import config
from bridge.sessions.targets import SessionTarget

PARENT, THREAD, OTHER = "100000000000000003", "100000000000000004", "100000000000000005"


def raw_config(**project: object) -> dict:
    return {
        "schemaVersion": 2,
        "codexArgs": ["--top"],
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "tok", "ownerUserId": "100000000000000002"},
                "projects": [
                    {
                        "name": "alpha",
                        "channelId": PARENT,
                        "projectPath": "/srv/alpha",
                        "threads": [{"name": "t", "channelId": THREAD}],
                        **project,
                    },
                    {"name": "beta", "channelId": OTHER, "projectPath": "/srv/beta"},
                ],
            }
        ],
    }


def load(raw: dict) -> config.BridgeConfig:
    return config.BridgeConfig(copy.deepcopy(raw), env={})


def test_a_project_runs_claude_code_unless_it_says_codex() -> None:
    alpha, beta = load(raw_config(agent="codex", codexCommand="/opt/codex")).servers[0].projects
    assert (alpha.agent, beta.agent) == ("codex", "claude")
    assert (alpha.codex_command, alpha.codex_args) == ("/opt/codex", ["--top"])
    assert (beta.codex_command, beta.claude_command) == ("codex", "claude")
    assert SessionTarget.for_project(alpha).agent == "codex"


def test_a_thread_takes_its_projects_agent_or_its_own() -> None:
    alpha = load(raw_config(agent="codex")).servers[0].projects[0]
    assert SessionTarget.for_thread(alpha, THREAD, "t", alpha.threads[0]).agent == "codex"
    raw = raw_config(agent="codex", thread={"agent": "claude"})
    alpha = load(raw).servers[0].projects[0]
    assert SessionTarget.for_thread(alpha, THREAD, "t", None).agent == "claude"
    raw = raw_config()
    raw["servers"][0]["projects"][0]["threads"][0]["agent"] = "codex"
    alpha = load(raw).servers[0].projects[0]
    assert SessionTarget.for_thread(alpha, THREAD, "t", alpha.threads[0]).agent == "codex"
    assert SessionTarget.for_project(alpha).agent == "claude"


def test_an_unknown_agent_is_refused_with_its_path() -> None:
    raw = raw_config(agent="gemini", thread={"agent": "Codex"})
    raw["servers"][0]["projects"][0]["threads"][0]["agent"] = 3
    problems = config.validate(raw)
    where = "servers[0].projects[0]"
    assert f"{where}.agent: expected one of claude, codex (got 'gemini')" in problems
    assert f"{where}.thread.agent: expected one of claude, codex (got 'Codex')" in problems
    assert f"{where}.threads[0].agent: expected one of claude, codex (got 3)" in problems


def test_each_agents_command_and_arguments_are_checked() -> None:
    raw = raw_config(codexCommand=5)
    raw["codexArgs"] = "--x"
    problems = config.validate(raw)
    assert any(p.startswith("servers[0].projects[0].codexCommand") for p in problems), problems
    assert any(p.startswith("codexArgs") for p in problems), problems
