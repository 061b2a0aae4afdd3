"""How Claude Code is started: the ``--settings`` layer keeps Claude's own file tools out of
the bridge's config and runtime records (issue 13, "Also")."""

from __future__ import annotations

import json

from bridge.claude import launch
from bridge.config import BridgeConfig
from bridge.sessions.manager import SessionManager
from bridge.sessions.targets import SessionTarget
from bridge.state import runtime

CHANNEL = "100000000000000003"


def settings_of(argv: list[str]) -> dict:
    return json.loads(argv[argv.index("--settings") + 1])


def test_sessions_are_started_with_deny_rules_for_the_bridges_private_files(
    tmp_path, monkeypatch
) -> None:
    home = tmp_path / "bridge-home"
    home.mkdir()
    monkeypatch.setenv(runtime.ENV_HOME, str(home))
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "discord": {"botToken": "tok", "ownerUserId": "100000000000000002"},
                "projects": [
                    {"name": "alpha", "channelId": CHANNEL, "projectPath": str(tmp_path / "p")}
                ],
            }
        ],
    }
    cfg = BridgeConfig(raw, str(tmp_path / "elsewhere" / "bridge.json"), env={})
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    manager = SessionManager(cfg, cfg.servers[0], rt)

    target = SessionTarget.for_project(cfg.servers[0].projects[0])
    permissions = settings_of(manager.launch_argv(target))["permissions"]
    deny = permissions["deny"]
    for tool in ("Read", "Edit"):
        for private in (f"{rt.root}/prompts", f"{rt.root}/state", f"{rt.root}/outbox", str(home)):
            assert f"{tool}(/{private}/**)" in deny
        assert f"{tool}(/{tmp_path}/elsewhere/bridge.json)" in deny
    # Claude still reads its uploads and writes its outputs: nothing above them is denied.
    assert permissions["additionalDirectories"] == [
        f"{rt.root}/uploads/{CHANNEL}",
        f"{rt.root}/outputs/{CHANNEL}",
    ]
    assert not any(rule.endswith((f"{rt.root})", f"{rt.root}/**)")) for rule in deny)
    assert not any("/uploads" in rule or "/outputs" in rule for rule in deny)


def test_deny_rules_name_absolute_paths_the_way_claude_code_reads_them(tmp_path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    rules = launch.deny_rules([str(tmp_path / "link") + "/"])
    assert rules == [
        f"Read(/{tmp_path}/link)",
        f"Read(/{tmp_path}/link/**)",
        f"Edit(/{tmp_path}/link)",
        f"Edit(/{tmp_path}/link/**)",
        f"Read(/{real})",
        f"Read(/{real}/**)",
        f"Edit(/{real})",
        f"Edit(/{real}/**)",
    ]
    assert all(rule.split("(", 1)[1].startswith("//") for rule in rules)


def test_manual_mode_starts_as_default_and_the_agent_view_stays_off(tmp_path, monkeypatch) -> None:
    """``permission: "manual"`` (2.1.332's name) is passed as ``default``, which every tested
    version takes; every pane has the agent view off."""
    monkeypatch.setenv(runtime.ENV_HOME, str(tmp_path / "bridge-home"))
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "discord": {"botToken": "tok", "ownerUserId": "100000000000000002"},
                "projects": [
                    {
                        "name": "alpha",
                        "channelId": CHANNEL,
                        "permission": "manual",
                        "projectPath": str(tmp_path / "p"),
                    }
                ],
            }
        ],
    }
    cfg = BridgeConfig(raw, str(tmp_path / "bridge.json"), env={})
    manager = SessionManager(cfg, cfg.servers[0], runtime.Runtime(str(tmp_path / "rt")).ensure())
    target = SessionTarget.for_project(cfg.servers[0].projects[0])
    argv = manager.launch_argv(target)
    assert argv[argv.index("--permission-mode") + 1] == "default"
    assert manager.pane_env(target)["CLAUDE_CODE_DISABLE_AGENT_VIEW"] == "1"
