"""Config validation: a user sees every problem with its JSON path and the fix."""

from __future__ import annotations

import copy
import json
import os

import pytest

from bridge import config

GOOD = {
    "schemaVersion": 2,
    "servers": [
        {
            "name": "main",
            "discord": {"botToken": "tok", "ownerUserId": "100000000000000002"},
            "tmux": {"session": "bridge"},
            "permissionTools": ["Bash"],
            "generalChannelId": "100000000000000009",
            "projects": [
                {
                    "name": "alpha",
                    "channelId": "100000000000000003",
                    "projectPath": "/srv/alpha",
                    "model": "sonnet",
                    "startup": True,
                    "thread": {"isolation": "worktree"},
                    "threads": [{"name": "t", "channelId": "100000000000000004"}],
                },
                {"name": "beta", "channelId": "100000000000000005", "projectPath": "/srv/beta"},
            ],
        }
    ],
    "someFutureKey": {"kept": True},
}


def problems_of(mutate) -> list[str]:
    raw = copy.deepcopy(GOOD)
    mutate(raw)
    return config.validate(raw)


def test_gnsrtk_schema_v2_file_is_accepted_unchanged() -> None:
    cfg = config.BridgeConfig(copy.deepcopy(GOOD), env={})
    server = cfg.servers[0]
    assert [p.name for p in server.projects] == ["alpha", "beta"]
    assert server.tmux_session == "bridge"
    assert server.api_base == config.DEFAULT_API_BASE
    assert server.may_act("100000000000000002") and not server.may_act("100000000000000007")


def test_snowflake_error_names_path_and_fix() -> None:
    problems = problems_of(lambda r: r["servers"][0]["projects"].__getitem__(1).update(channelId=5))
    assert problems == [
        "servers[0].projects[1].channelId: expected a snowflake string of digits (got 5); "
        "copy the id with Discord's developer mode and quote it"
    ]


def test_duplicate_channel_ids_are_caught() -> None:
    def dup(raw: dict) -> None:
        raw["servers"][0]["projects"][1]["channelId"] = "100000000000000004"

    (problem,) = problems_of(dup)
    assert problem.startswith("servers[0].projects[1].channelId: channel 100000000000000004")
    assert "threads[0]" in problem


@pytest.mark.parametrize("path", ["/srv/alpha", "/srv/alpha/", "/srv/./alpha"])
def test_identical_project_paths_are_caught(path: str) -> None:
    (problem,) = problems_of(lambda r: r["servers"][0]["projects"][1].update(projectPath=path))
    assert problem.startswith("servers[0].projects[1].projectPath: /srv/alpha is also ")
    assert "servers[0].projects[0].projectPath" in problem


def test_nested_projects_are_allowed_and_the_longest_prefix_wins() -> None:
    # gnsrtk's own example: a "global" project at the home directory and projects inside it.
    def nest(raw: dict) -> None:
        raw["servers"][0]["projects"][1]["projectPath"] = "/srv"
        raw["servers"][0]["projects"].append(
            {"name": "deep", "channelId": "100000000000000006", "projectPath": "/srv/alpha/deep"}
        )

    raw = copy.deepcopy(GOOD)
    nest(raw)
    assert config.validate(raw) == []
    cfg = config.BridgeConfig(raw, env={})
    assert cfg.project_for_cwd("/srv/alpha/src").name == "alpha"
    assert cfg.project_for_cwd("/srv/alpha/deep/x").name == "deep"
    assert cfg.project_for_cwd("/srv/alphabet").name == "beta"
    assert cfg.project_for_cwd("/srv").name == "beta"
    assert cfg.project_for_cwd("/elsewhere") is None


def test_schema_version_1_is_read_as_its_v2_equivalent() -> None:
    server = copy.deepcopy(GOOD["servers"][0])
    del server["name"]
    v1 = {"schemaVersion": 1, **server, "someFutureKey": {"kept": True}}
    cfg = config.BridgeConfig(copy.deepcopy(v1), env={})
    assert cfg.raw == {"schemaVersion": 2, "servers": [server], "someFutureKey": {"kept": True}}
    (only,) = cfg.servers
    assert [p.name for p in only.projects] == ["alpha", "beta"]
    assert only.tmux_session == "bridge" and only.permission_tools == ["Bash"]
    assert only.general_channel_id == "100000000000000009"
    # A v1 file with a mistake names it like any other.
    v1["projects"][0]["channelId"] = 5
    with pytest.raises(config.ConfigError, match=r"servers\[0\]\.projects\[0\]\.channelId"):
        config.BridgeConfig(v1, env={})


def test_sibling_paths_with_common_prefix_do_not_overlap() -> None:
    assert (
        problems_of(lambda r: r["servers"][0]["projects"][1].update(projectPath="/srv/alphabet"))
        == []
    )


def test_many_problems_reported_at_once() -> None:
    def break_many(raw: dict) -> None:
        raw["schemaVersion"] = 1
        raw["servers"][0]["discord"]["botToken"] = ""
        raw["servers"][0]["projects"][0]["projectPath"] = "relative/path"
        raw["servers"][0]["projects"][0]["thread"]["isolation"] = "docker"

    problems = problems_of(break_many)
    assert len(problems) == 4
    assert any(p.startswith("schemaVersion:") for p in problems)
    assert any(
        "projects[0].thread.isolation: expected one of none, worktree" in p for p in problems
    )


def test_env_overrides_api_base_and_socket() -> None:
    env = {config.ENV_API_BASE: "http://127.0.0.1:9/api/v10/", config.ENV_TMUX_SOCKET: "sock"}
    server = config.BridgeConfig(copy.deepcopy(GOOD), env=env).servers[0]
    assert server.api_base == "http://127.0.0.1:9/api/v10"
    assert server.tmux_socket == "sock"


def test_hooks_post_directly_unless_the_config_says_the_api_goes_with_the_bot() -> None:
    assert config.BridgeConfig(copy.deepcopy(GOOD), env={}).servers[0].hooks_post_directly

    def bot_only(raw: dict) -> None:
        raw["servers"][0]["discord"]["hooksPostDirectly"] = False

    raw = copy.deepcopy(GOOD)
    bot_only(raw)
    assert not config.BridgeConfig(raw, env={}).servers[0].hooks_post_directly
    assert problems_of(bot_only) == []
    wrong = problems_of(lambda raw: raw["servers"][0]["discord"].update(hooksPostDirectly="no"))
    assert wrong == ["servers[0].discord.hooksPostDirectly: expected true or false"]


def test_project_for_cwd_takes_longest_containing_path() -> None:
    cfg = config.BridgeConfig(copy.deepcopy(GOOD), env={})
    assert cfg.project_for_cwd("/srv/alpha").name == "alpha"
    assert cfg.project_for_cwd("/srv/alpha/src/deep").name == "alpha"
    assert cfg.project_for_cwd("/srv/alphabet") is None
    assert cfg.project_for_cwd("/") is None


def test_load_reports_bad_json_and_missing_file(tmp_path) -> None:
    with pytest.raises(config.ConfigError, match="file not found"):
        config.load(str(tmp_path / "nope.json"))
    bad = tmp_path / "config.json"
    bad.write_text("{ not json")
    with pytest.raises(config.ConfigError, match="not valid JSON"):
        config.load(str(bad))


def test_save_is_atomic_private_and_keeps_unknown_keys(tmp_path) -> None:
    path = tmp_path / "config.json"
    raw = copy.deepcopy(GOOD)
    raw["servers"][0]["projects"][0]["threads"].append(
        {"name": "new", "channelId": "100000000000000006"}
    )
    config.save_raw(str(path), raw)
    assert json.loads(path.read_text()) == raw
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert [p for p in os.listdir(tmp_path) if p != "config.json"] == []


def test_save_refuses_invalid_config(tmp_path) -> None:
    raw = copy.deepcopy(GOOD)
    raw["servers"] = []
    with pytest.raises(config.ConfigError):
        config.save_raw(str(tmp_path / "c.json"), raw)
    assert not (tmp_path / "c.json").exists()


def test_example_config_is_valid() -> None:
    here = os.path.dirname(__file__)
    with open(os.path.join(here, "..", "..", "..", "config.example.json")) as handle:
        assert config.validate(json.load(handle)) == []


def test_prompt_reply_and_notification_settings_have_defaults_and_are_checked() -> None:
    cfg = config.BridgeConfig(copy.deepcopy(GOOD), env={})
    assert cfg.prompt_timeout == 900 and cfg.prompt_timeout_outcome == "deny"
    assert cfg.footer and cfg.mention_owner and cfg.attach_after == config.DEFAULT_ATTACH_AFTER
    assert cfg.servers[0].projects[0].progress
    problems = problems_of(
        lambda r: r.update(
            prompts={"timeoutSeconds": 3, "onTimeout": "allow"},
            replies={"footer": "yes", "attachAfterMessages": 0},
            notifications=[],
        )
    )
    assert problems == [
        "notifications: expected an object (mentionOwner, whenAttached, activeWithinSeconds)",
        "prompts.timeoutSeconds: expected seconds between 10 and 86400",
        "prompts.onTimeout: expected one of deny, terminal (got 'allow')",
        "replies.footer: expected true or false",
        "replies.attachAfterMessages: expected a whole number of messages ≥ 1",
    ]


@pytest.mark.parametrize(
    ("where", "mutate"),
    [
        ("servers[0].tmux.session", lambda r: r["servers"][0]["tmux"].update(session="b#(id)")),
        (
            "servers[0].projects[1].name",
            lambda r: r["servers"][0]["projects"][1].update(name="b#{x}"),
        ),
    ],
)
def test_a_hash_in_a_tmux_name_is_refused_naming_the_key(where, mutate) -> None:
    """tmux expands ``#(cmd)`` / ``#{…}`` in session and window names as formats."""
    (problem,) = problems_of(mutate)
    assert problem.startswith(f"{where}: expected a non-empty name without") and "#" in problem


def test_claude_nice_defaults_to_5_is_inherited_and_checked() -> None:
    from bridge.claude.launch import claude_argv

    raw = copy.deepcopy(GOOD)
    alpha, beta = config.BridgeConfig(copy.deepcopy(raw), env={}).servers[0].projects
    assert alpha.claude_nice == beta.claude_nice == 5
    raw["claudeNice"] = 10
    raw["servers"][0]["projects"][0]["claudeNice"] = 0
    alpha, beta = config.BridgeConfig(raw, env={}).servers[0].projects
    assert (alpha.claude_nice, beta.claude_nice) == (0, 10)
    argv = claude_argv("claude", None, None, None, "/u", "/o", 10, ["--x"], nice=beta.claude_nice)
    assert argv[:4] == ["nice", "-n", "10", "claude"] and argv[-1] == "--x"
    assert claude_argv("claude", None, None, None, "/u", "/o", 10, [], nice=0)[0] == "claude"
    for bad in (-1, 20, "5", True):
        found = problems_of(lambda r, bad=bad: r["servers"][0].update(claudeNice=bad))
        assert found == ["servers[0].claudeNice: expected a niceness from 0 to 19 (a number)"]
