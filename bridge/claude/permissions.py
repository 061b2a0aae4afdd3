"""Claude Code's permission suggestions: where an "always allow" rule is saved, and how.

A PermissionRequest event carries ``permission_suggestions`` (rules to add, directories, a
mode switch). Answering "always" returns one of them as an ``updatedPermissions`` entry whose
``destination`` says which settings file keeps it; the scope codes below name those
destinations compactly (they travel in Discord custom_ids).
"""

from __future__ import annotations

SCOPES = {  # scope code -> Claude Code's settings destination
    "s": "session",
    "l": "localSettings",  # .claude/settings.local.json: this project, just me
    "p": "projectSettings",  # .claude/settings.json: this project, shared
    "u": "userSettings",  # ~/.claude/settings.json: all projects
}
SCOPE_ORDER = "slpu"


def next_scope(scope: str) -> str:
    return SCOPE_ORDER[(SCOPE_ORDER.index(scope) + 1) % len(SCOPE_ORDER)]


def applied_suggestion(suggestion: dict, scope: str) -> dict:
    """The ``updatedPermissions`` entry for a suggestion at the chosen scope."""
    entry = dict(suggestion)
    if is_scoped(suggestion):
        entry["destination"] = SCOPES[scope]
    return entry


def is_scoped(suggestion: dict) -> bool:
    return suggestion.get("type") != "setMode"  # a mode switch only makes sense for the session


def rule_text(rule: dict) -> str:
    """``Bash(npm test:*)``: a rule as Claude Code writes it in settings."""
    content = rule.get("ruleContent")
    return f"{rule.get('toolName')}({content})" if content else str(rule.get("toolName"))
