"""Claude Code's hook contract as Anthropic publishes it, for the tests to hold the bridge to.

The Agent SDK (``@anthropic-ai/claude-agent-sdk``) is released with every Claude Code CLI and
ships its hook types in ``sdk.d.ts``: ``HookInput`` (one type per event: what the CLI sends a
hook on stdin), ``SyncHookJSONOutput`` (what a hook may print back) and the ``hookSpecificOutput``
of each event. scripts/test.sh installs the SDK of the pinned CLI
(:func:`bridge.claude.versions.agent_sdk_version`) and a JSON Schema generator from npm under
``.cache``; :func:`pinned` turns those two types into JSON Schema once per SDK and generator
version (about 2 s of CPU; kept beside the SDK, never committed) and checks JSON against it.

Strict where the types are closed: an object type without an index signature becomes
``additionalProperties: false`` (the generator's default), so a field the contract does not
define fails as surely as a missing required one or a wrong enum value.

Tests build every hook input with :func:`hook_input` (checked as it is built) and mark the few
they feed on purpose in a shape Claude Code never sends with :func:`not_from_claude`; a unit
test scans the test tree for any other (tests/unit/test_hook_contract.py).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from bridge.claude import versions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

SDK_PACKAGE = "@anthropic-ai/claude-agent-sdk"
# Measured on the SDK's sdk.d.ts (0.3.330): ts-json-schema-generator takes both types in one
# run (1.9 s CPU), merges the `BaseHookInput & {...}` intersections into one closed object and
# makes unions anyOf and Record<string, unknown> an open object; typescript-json-schema did as
# well but one type per run (1.7 s CPU each) and through ts-node (46 packages against 16).
GENERATOR = "ts-json-schema-generator"
GENERATOR_VERSION = "2.10.0"
TYPES = ("HookInput", "SyncHookJSONOutput")
CACHE = Path(__file__).resolve().parents[3] / ".cache"  # the checkout's (scripts/test.sh)
SESSION = "cbe55835-1c2d-4e5f-8a9b-0123456789ab"  # a session id as Claude Code makes them


class ContractUnavailable(RuntimeError):
    """The SDK of the pinned CLI (or the generator) is not installed, or gave no schema."""


class ContractError(AssertionError):
    """JSON a hook reads or prints that Claude Code's published contract does not allow."""


def sdk_dir(sdk_version: str | None = None) -> Path:
    """Where scripts/test.sh installs the SDK of this version (the pinned CLI's by default)."""
    return CACHE / f"claude-agent-sdk-{sdk_version or versions.agent_sdk_version()}"


def generator_dir() -> Path:
    return CACHE / f"{GENERATOR}-{GENERATOR_VERSION}"


class HookContract:
    """The hook types of one SDK release as JSON Schema (draft 7, one ``definitions`` table)."""

    def __init__(self, schema: dict, sdk_version: str, cli_version: str) -> None:
        from jsonschema import Draft7Validator

        self.definitions: dict = schema["definitions"]
        self.sdk_version = sdk_version
        self.cli_version = cli_version
        self._validator = functools.cache(
            lambda name: Draft7Validator({"$ref": f"#/definitions/{name}", **schema})
        )
        inputs = [ref["$ref"].rsplit("/", 1)[1] for ref in self.definitions["HookInput"]["anyOf"]]
        self.events = tuple(self._event_name(self.definitions[name]) for name in inputs)

    def _event_name(self, definition: dict) -> str:
        if "anyOf" in definition:  # (Base & {...}) | (Base & {...}): the same event name
            definition = definition["anyOf"][0]
        return definition["properties"]["hook_event_name"]["const"]

    def about(self) -> str:
        return f"Claude Code {self.cli_version}'s hook types ({SDK_PACKAGE}@{self.sdk_version})"

    def input_errors(self, event: object) -> list[str]:
        """What is wrong with ``event`` as a hook's stdin; empty when Claude Code sends it so."""
        if not isinstance(event, dict):
            return [f"a hook input is a JSON object, not {type(event).__name__}"]
        name = event.get("hook_event_name")
        if name not in self.events:
            return [f"hook_event_name {name!r} is none of Claude Code's events {self.events}"]
        return self._errors(f"{name}HookInput", event, "")

    def output_errors(self, event: str, output: object) -> list[str]:
        """What is wrong with ``output`` as the JSON a hook for ``event`` prints."""
        if not isinstance(output, dict):
            return [f"a hook's JSON output is an object, not {type(output).__name__}"]
        common = {key: value for key, value in output.items() if key != "hookSpecificOutput"}
        errors = self._errors("SyncHookJSONOutput", common, "")
        if "hookSpecificOutput" not in output:
            return errors
        specific = output["hookSpecificOutput"]
        named = specific.get("hookEventName") if isinstance(specific, dict) else None
        if named != event:
            return [*errors, f"hookSpecificOutput.hookEventName is {named!r} in a {event} hook"]
        if f"{event}HookSpecificOutput" not in self.definitions:
            return [*errors, f"Claude Code reads no hookSpecificOutput from a {event} hook"]
        return errors + self._errors(f"{event}HookSpecificOutput", specific, "hookSpecificOutput")

    def _errors(self, definition: str, instance: dict, prefix: str) -> list[str]:
        found = []
        for error in self._validator(definition).iter_errors(instance):
            for leaf in _explained(error):
                path = [prefix, *leaf.absolute_path]
                where = ".".join(str(part) for part in path if part != "")
                found.append(f"{where or '(top level)'}: {leaf.message} [{definition}]")
        return found

    def check_input(self, event: object) -> None:
        errors = self.input_errors(event)
        if errors:
            raise ContractError(self._report("hook input", event, errors))

    def check_output(self, event: str, output: object) -> None:
        errors = self.output_errors(event, output)
        if errors:
            raise ContractError(self._report(f"{event} hook output", output, errors))

    def _report(self, what: str, instance: object, errors: list[str]) -> str:
        shown = json.dumps(instance, ensure_ascii=False)
        shown = shown if len(shown) <= 600 else shown[:600] + "…"
        lines = "\n  ".join(errors)
        return f"{what} not in {self.about()}:\n  {lines}\n{shown}"


def _explained(error: ValidationError) -> list[ValidationError]:
    """The errors that say why ``error`` failed: for a union (``anyOf``) those of the branch
    meant, the one whose tag (``behavior``, ``type``, ``hookEventName``...) matches; among
    several, the one with the fewest errors."""
    if not error.context:
        return [error]
    branches: dict[object, list] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    meant = [
        errors
        for errors in branches.values()
        if not any(e.validator == "const" and len(e.relative_path) <= 1 for e in errors)
    ] or list(branches.values())
    return [leaf for sub in min(meant, key=len) for leaf in _explained(sub)]


@functools.cache
def pinned() -> HookContract:
    """The contract of the pinned CLI, generated on first use and kept beside its SDK."""
    sdk_version = versions.agent_sdk_version()
    return HookContract(_schema(sdk_version), sdk_version, versions.PINNED)


def _schema(sdk_version: str) -> dict:
    package = sdk_dir(sdk_version) / "node_modules" / SDK_PACKAGE
    where = (
        f"./scripts/test.sh installs it into {sdk_dir(sdk_version)}; when npm has no such "
        f"version (npm view {SDK_PACKAGE} versions), Claude Code {versions.PINNED} has no "
        f"published hook contract yet"
    )
    try:
        meta = json.loads((package / "package.json").read_text())
    except (OSError, ValueError) as err:
        raise ContractUnavailable(
            f"{SDK_PACKAGE}@{sdk_version}, the hook types of the pinned Claude Code "
            f"{versions.PINNED}, is not installed ({err.__class__.__name__}): {where}"
        ) from None
    if meta.get("version") != sdk_version or meta.get("claudeCodeVersion") != versions.PINNED:
        raise ContractUnavailable(
            f"{package} is {meta.get('version')}, published with Claude Code "
            f"{meta.get('claudeCodeVersion')}, not with the pinned {versions.PINNED}: there is "
            f"no {SDK_PACKAGE} for it under the number versions.agent_sdk_version gives"
        )
    cached = sdk_dir(sdk_version) / f"hook-contract.{GENERATOR}-{GENERATOR_VERSION}.json"
    if not cached.exists():
        _generate(package / "sdk.d.ts", cached)
    return json.loads(cached.read_text())


def _generate(types: Path, target: Path) -> None:
    command = generator_dir() / "node_modules" / ".bin" / GENERATOR
    if not command.exists() or shutil.which("node") is None:
        raise ContractUnavailable(
            f"{GENERATOR} {GENERATOR_VERSION} (and node) are needed to read {types}: "
            f"./scripts/test.sh installs it under {generator_dir()}"
        )
    # --no-type-check: the SDK's imports of @anthropic-ai/sdk, the MCP SDK and zod (peer
    # dependencies, not installed) are not part of the hook types, so they need not resolve.
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        out = Path(scratch) / target.name
        done = subprocess.run(
            [
                str(command),
                "--path",
                str(types),
                "--type",
                *TYPES,
                "--no-type-check",
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0 or not out.exists():
            raise ContractUnavailable(f"{GENERATOR} failed on {types}:\n{done.stderr[-2000:]}")
        os.replace(out, target)  # whole or not at all: another session may read it meanwhile


# --- the hook inputs the tests feed -----------------------------------------------------------

# The fields of an event that no test is about (ids, flags), as Claude Code fills them; what a
# test is about (the tool, its input, the prompt, the message) it gives itself.
_BOOKKEEPING: dict[str, dict] = {
    "PreToolUse": {"tool_use_id": "toolu_fake_1"},
    "PostToolUse": {
        "tool_use_id": "toolu_fake_1",
        "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
    },
    "PostToolUseFailure": {"tool_use_id": "toolu_fake_1", "error": "Exit code 1"},
    "Stop": {"stop_hook_active": False},
    "SessionStart": {"source": "startup"},
    "MessageDisplay": {"turn_id": "9af23cbb-0000-4000-8000-000000000001", "index": 0},
}


def hook_input(event: str, **fields: object) -> dict:
    """The JSON Claude Code sends the hooks of ``event``: the fields every event carries (a
    session id, a transcript path, ``cwd`` "/" unless given), the event's bookkeeping fields,
    then ``fields`` (paths may be ``Path``). Checked against the pinned CLI's contract as it
    is built, so a test cannot feed a shape Claude Code does not produce."""
    given = {key: os.fspath(v) if isinstance(v, os.PathLike) else v for key, v in fields.items()}
    event_input = {
        "session_id": SESSION,
        "transcript_path": "/nonexistent/session.jsonl",
        "cwd": "/",
        "hook_event_name": event,
        **_BOOKKEEPING.get(event, {}),
        **given,
    }
    pinned().check_input(event_input)
    return event_input


def not_from_claude(event: dict) -> dict:
    """``event`` unchanged: marks a hook input a test feeds on purpose in a shape Claude Code
    does not send (a wrong type, a missing field), to show the bridge survives it."""
    return event
