"""The hook contract the tests hold the bridge to (``bridge_testkit.hook_contract``): it is the
pinned CLI's, it fails what Claude Code does not send or read, and every hook input in the
test tree is built with ``hook_input`` (checked as it is built) or marked ``not_from_claude``.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from bridge.claude import versions
from bridge_testkit import hook_contract as contract
from bridge_testkit import hook_input, not_from_claude
from bridge_testkit.hook_contract import ContractError, ContractUnavailable, HookContract

REPO = Path(__file__).resolve().parents[2]


def test_the_contract_is_the_one_published_with_the_pinned_cli(
    hook_contract: HookContract,
) -> None:
    assert hook_contract.cli_version == versions.PINNED
    assert hook_contract.sdk_version == versions.agent_sdk_version()
    package = hook_contract_package(hook_contract.sdk_version)
    assert package["claudeCodeVersion"] == versions.PINNED  # the SDK's own word for it
    assert {"PreToolUse", "PermissionRequest", "Stop", "SessionStart"} <= set(hook_contract.events)


def hook_contract_package(sdk_version: str) -> dict:
    path = contract.sdk_dir(sdk_version) / "node_modules" / contract.SDK_PACKAGE
    return json.loads((path / "package.json").read_text())


def test_an_sdk_that_is_not_there_is_named_with_how_to_look_for_it() -> None:
    with pytest.raises(ContractUnavailable) as caught:
        contract._schema("0.0.0-not-published")
    message = str(caught.value)
    assert "@anthropic-ai/claude-agent-sdk@0.0.0-not-published" in message
    assert (
        versions.PINNED in message and "npm view @anthropic-ai/claude-agent-sdk versions" in message
    )


def test_an_sdk_of_another_cli_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(contract, "CACHE", tmp_path)
    sdk = versions.agent_sdk_version()
    package = contract.sdk_dir(sdk) / "node_modules" / contract.SDK_PACKAGE
    package.mkdir(parents=True)
    meta = {"name": contract.SDK_PACKAGE, "version": sdk, "claudeCodeVersion": "2.1.1"}
    (package / "package.json").write_text(json.dumps(meta))
    with pytest.raises(
        ContractUnavailable, match=re.escape("Claude Code 2.1.1, not with the pinned")
    ):
        contract._schema(sdk)


# --- what fails -------------------------------------------------------------------------------


def permission_answer(decision: dict) -> dict:
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


@pytest.mark.parametrize(
    ("event", "output", "named"),
    [
        # a field the contract does not define, at each level
        ("PermissionRequest", permission_answer({"behavior": "allow", "reason": "x"}), "'reason'"),
        ("PermissionRequest", {**permission_answer({"behavior": "allow"}), "note": 1}, "'note'"),
        (
            "PreToolUse",
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "ask",
                    "why": "x",
                }
            },
            "'why'",
        ),
        # a value outside an enum, deep in a union
        (
            "PermissionRequest",
            permission_answer(
                {
                    "behavior": "allow",
                    "updatedPermissions": [
                        {"type": "setMode", "mode": "manual", "destination": "session"}
                    ],
                }
            ),
            "'manual'",
        ),
        ("PermissionRequest", permission_answer({"behavior": "deny", "message": 3}), "message"),
        # another event's output, or one the event has none of
        ("Stop", {"hookSpecificOutput": {"hookEventName": "PreToolUse"}}, "in a Stop hook"),
        ("SessionEnd", {"hookSpecificOutput": {"hookEventName": "SessionEnd"}}, "no hookSpecific"),
        ("Stop", [], "an object"),
    ],
)
def test_an_output_outside_the_contract_fails_naming_what(
    hook_contract: HookContract, event: str, output: object, named: str
) -> None:
    with pytest.raises(ContractError, match=re.escape(named)):
        hook_contract.check_output(event, output)


def test_outputs_in_the_contract_pass(hook_contract: HookContract) -> None:
    hook_contract.check_output("Stop", {})
    hook_contract.check_output("Stop", {"decision": "block", "reason": "tests fail"})
    hook_contract.check_output("PermissionRequest", permission_answer({"behavior": "deny"}))


@pytest.mark.parametrize(
    ("event", "fields", "named"),
    [
        (
            "PermissionRequest",
            {"tool_name": "Bash", "tool_input": {}, "tool_use_id": "t"},
            "'tool_use_id' was unexpected",
        ),  # PreToolUse has one, PermissionRequest not
        ("PreToolUse", {"tool_input": {}}, "'tool_name' is a required property"),
        ("Stop", {"tool_name": "Read"}, "'tool_name' was unexpected"),
        ("StopFailure", {"error": "429"}, "'429' is not one of"),
        ("SessionStart", {"source": "reboot"}, "'reboot' is not one of"),
        ("NoSuchEvent", {}, "none of Claude Code's events"),
    ],
)
def test_a_hook_input_claude_code_does_not_send_cannot_be_built(
    event: str, fields: dict, named: str
) -> None:
    with pytest.raises(ContractError, match=re.escape(named)):
        hook_input(event, **fields)


def test_a_hook_input_is_what_claude_code_sends(tmp_path: Path) -> None:
    built = hook_input("PreToolUse", cwd=tmp_path, tool_name="Bash", tool_input={"command": "ls"})
    # the fields every event carries, in Claude Code's order, then the event's own
    assert list(built) == [
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "tool_use_id",
        "tool_name",
        "tool_input",
    ]
    assert (built["session_id"], built["cwd"]) == (contract.SESSION, str(tmp_path))
    assert (built["tool_name"], built["tool_input"]) == ("Bash", {"command": "ls"})
    contract.pinned().check_input(json.loads(json.dumps(built)))  # plain JSON
    broken = b'{"tool_name": 7}'
    assert not_from_claude(broken) is broken  # only a mark


# --- every hook input in the test tree --------------------------------------------------------

SCANNED = ("tests", "bench", "packages")
BUILDER = REPO / "packages" / "bridge-testkit" / "bridge_testkit" / "hook_contract.py"


def unchecked_hook_inputs(source: str) -> list[int]:
    """Lines of ``source`` that make a hook input by hand: a dict with a ``hook_event_name``
    key (a literal, ``dict(hook_event_name=...)``, or ``x["hook_event_name"] = ...``) or a
    string that is such a JSON object, outside a ``not_from_claude(...)`` call."""
    found: list[int] = []

    def visit(node: ast.AST, exempt: bool) -> None:
        exempt = exempt or called(node) == "not_from_claude"
        if not exempt and makes_hook_input(node):
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, exempt)

    visit(ast.parse(source), False)
    return sorted(found)


def called(node: ast.AST) -> str | None:
    """The name a call calls (``f(...)``, ``module.f(...)``); None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def makes_hook_input(node: ast.AST) -> bool:
    key = "hook_event_name"
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == key for k in node.keys)
    if isinstance(node, ast.Call):
        return called(node) == "dict" and any(k.arg == key for k in node.keywords)
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        return isinstance(node.slice, ast.Constant) and node.slice.value == key
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return key in str(node.value) and is_json_object(node.value)
    return False


def is_json_object(text: str | bytes) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False  # a deliberately broken one: no shape to check


def test_the_scan_finds_a_hook_input_made_by_hand() -> None:
    source = """
a = {"session_id": "s", "hook_event_name": "Stop"}
b = {**a, "hook_event_name": "StopFailure"}
c = dict(hook_event_name="Stop")
a["hook_event_name"] = "UserPromptSubmit"
d = b'{"hook_event_name": "Stop", "cwd": "/"}'
fine = not_from_claude({"hook_event_name": "PreToolUse", "tool_name": 7})
fine = hook_input("Stop")
fine = b'{"hook_event_name": "Stop", '
fine = event.get("hook_event_name")
"""
    assert unchecked_hook_inputs(source) == [2, 3, 4, 5, 6]


def test_every_hook_input_the_tests_feed_is_checked_against_the_contract() -> None:
    """A hook input made by hand escapes the contract: build it with ``hook_input`` (or, to
    show the bridge survives a shape Claude Code never sends, wrap it in
    ``not_from_claude``)."""
    found = []
    for folder in SCANNED:
        for path in sorted((REPO / folder).rglob("*.py")):
            if path == BUILDER or ".venv" in path.parts or "node_modules" in path.parts:
                continue
            lines = unchecked_hook_inputs(path.read_text())
            found += [f"{path.relative_to(REPO)}:{line}" for line in lines]
    assert not found, "hook inputs made by hand:\n" + "\n".join(found)
