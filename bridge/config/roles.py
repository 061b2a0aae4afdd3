"""``roles``: what members with a Discord role may do, on a server and on one project.

A server's ``roles`` and a project's map a role id to the actions it grants::

    "roles": {"111111111111111111": ["drive"], "222222222222222222": ["approve"]}

*watch* sees (the read-only commands: ``/status``, ``/diff``, ``/usage`` …), *drive* types
messages and runs or stops things, *approve* answers what Claude Code asks (permission
prompts, plans, questions) and merges a thread's work. *drive* and *approve* each include
*watch*; neither includes the other. A project's roles add to the server's there, so a
project can have approvers of its own. The owner and ``allowedUserIds`` may do everything.
"""

from __future__ import annotations

WATCH, DRIVE, APPROVE = "watch", "drive", "approve"
ACTIONS = (WATCH, DRIVE, APPROVE)

Roles = dict[str, frozenset[str]]  # role id → the actions it grants


def parse_roles(raw: object) -> Roles:
    """The validated ``roles`` object as role id → actions (``{}`` when absent)."""
    if not isinstance(raw, dict):
        return {}
    return {str(role): frozenset(actions) for role, actions in raw.items()}


def granted_by(roles: Roles, role_ids: list[str], action: str) -> str | None:
    """The first of ``role_ids`` whose entry grants ``action`` (*watch*: any entry)."""
    for role in role_ids:
        actions = roles.get(role)
        if actions is not None and (action in actions or action == WATCH):
            return role
    return None


def check_roles(obj: dict, where: str, problems: list[str]) -> None:
    """Every problem of ``obj["roles"]`` (absent is fine), each with its JSON path."""
    raw = obj.get("roles")
    if raw is None:
        return
    hint = 'like {"<role id>": ["drive", "approve"]}'
    if not isinstance(raw, dict):
        problems.append(f"{where}.roles: expected an object {hint}")
        return
    for role, actions in raw.items():
        if not (role.isascii() and role.isdigit() and 15 <= len(role) <= 21):
            problems.append(
                f"{where}.roles: {role!r} is not a role id (a snowflake string of digits: "
                "Server Settings → Roles → ⋯ → Copy Role ID)"
            )
        elif not isinstance(actions, list) or not actions:
            problems.append(
                f"{where}.roles.{role}: expected a non-empty array of actions "
                "(watch, drive, approve)"
            )
        else:
            wrong = [a for a in actions if a not in ACTIONS]
            if wrong:
                problems.append(
                    f"{where}.roles.{role}: unknown action {wrong[0]!r} "
                    "(use watch, drive or approve)"
                )
