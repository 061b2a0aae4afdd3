"""``roles``: what a role grants, on the server and on one project, and every mistake named
with its path and the fix."""

from __future__ import annotations

import copy

from bridge import config
from tests.unit.config.test_config import GOOD

OWNER, FRIEND, MEMBER = "100000000000000002", "100000000000000006", "100000000000000007"
JUNIOR, SENIOR, VIEWER = "200000000000000001", "200000000000000002", "200000000000000003"


def configured(server_roles: object = None, project_roles: object = None) -> dict:
    raw = copy.deepcopy(GOOD)
    server = raw["servers"][0]
    server["discord"]["allowedUserIds"] = [FRIEND]
    if server_roles is not None:
        server["roles"] = server_roles
    if project_roles is not None:
        server["projects"][0]["roles"] = project_roles
    return raw


def test_a_projects_approvers_differ_from_the_servers_drivers() -> None:
    raw = configured({JUNIOR: ["drive"], VIEWER: ["watch"]}, {SENIOR: ["approve"]})
    server = config.BridgeConfig(raw, env={}).servers[0]
    alpha, beta = server.projects
    assert server.grant(MEMBER, [JUNIOR], "drive", alpha) == f"role {JUNIOR}"
    assert server.grant(MEMBER, [JUNIOR], "watch", beta) == f"role {JUNIOR}"
    assert server.grant(MEMBER, [JUNIOR], "approve", alpha) is None
    assert server.grant(MEMBER, [SENIOR], "approve", alpha) == f"role {SENIOR}"
    assert server.grant(MEMBER, [SENIOR], "approve", beta) is None  # alpha's only
    assert server.grant(MEMBER, [SENIOR], "drive", alpha) is None
    assert server.grant(MEMBER, [VIEWER], "watch", alpha) == f"role {VIEWER}"
    assert server.grant(MEMBER, [VIEWER], "drive", alpha) is None
    assert server.grant(MEMBER, [JUNIOR, SENIOR], "approve", alpha) == f"role {SENIOR}"
    assert server.grant(MEMBER, [], "watch", alpha) is None


def test_the_owner_and_allowed_users_keep_every_right() -> None:
    server = config.BridgeConfig(configured(), env={}).servers[0]
    for action in ("watch", "drive", "approve"):
        assert server.grant(OWNER, [], action, server.projects[0]) == "owner"
        assert server.grant(FRIEND, [], action, None) == "allowedUserIds"
        assert server.grant(MEMBER, [], action, None) is None


def test_every_roles_mistake_is_named_with_its_path() -> None:
    raw = configured({"juniors": ["drive"], JUNIOR: ["drive", "merge"]}, {SENIOR: []})
    assert config.validate(raw) == [
        "servers[0].roles: 'juniors' is not a role id (a snowflake string of digits: "
        "Server Settings → Roles → ⋯ → Copy Role ID)",
        f"servers[0].roles.{JUNIOR}: unknown action 'merge' (use watch, drive or approve)",
        f"servers[0].projects[0].roles.{SENIOR}: expected a non-empty array of "
        "actions (watch, drive, approve)",
    ]
    assert config.validate(configured(["drive"])) == [
        'servers[0].roles: expected an object like {"<role id>": ["drive", "approve"]}'
    ]
