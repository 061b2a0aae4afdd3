"""What holding request bodies to Discord's OpenAPI spec costs the emulator, per request.

The bodies are the bridge's own (its permission prompt with buttons, its question prompt with
selects, a reply, a prompt closed by a click) and discord.py's (an upload's payload_json, a
follow-up), each validated as the emulator validates it (``contract.check``: the error tree
included). Printed: loading the spec and compiling an operation's validator (once per
emulator process), then the median cost per body, as compiled (unions picked by ``type``)
and read literally (the spec's oneOfs as written), which is why the emulator picks them.

    .venv/bin/python bench/openapi_validation.py [--runs 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from bridge.discord.render import decisions
from bridge.state.decisions import Request
from discord_emulator import contract

MESSAGES = "POST /channels/{channel_id}/messages"
CALLBACK = "POST /interactions/{interaction_id}/{interaction_token}/callback"
FOLLOWUP = "POST /webhooks/{webhook_id}/{webhook_token}"


def bodies() -> list[tuple[str, str, Any]]:
    permission = Request.from_dict(
        {
            "id": "abc123def456",
            "kind": "permission",
            "tool_name": "Bash",
            "tool_input": {"command": "npm test", "description": "Run the tests"},
            "permission_suggestions": [
                {
                    "type": "addRules",
                    "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                    "behavior": "allow",
                    "destination": "localSettings",
                },
                {
                    "type": "addDirectories",
                    "directories": ["/home/dev/app"],
                    "destination": "session",
                },
            ],
            "timeout": 900,
        }
    )
    question = Request.from_dict(
        {
            "id": "abc123def457",
            "kind": "question",
            "tool_name": "AskUserQuestion",
            "tool_input": {
                "questions": [
                    {
                        "question": "Which features?",
                        "header": "Features",
                        "multiSelect": True,
                        "options": [{"label": x, "description": f"The {x} part"} for x in "ABCD"],
                    },
                    {
                        "question": "Which database?",
                        "header": "DB",
                        "multiSelect": False,
                        "options": [{"label": "Postgres"}, {"label": "SQLite"}],
                    },
                ]
            },
        }
    )
    assert permission is not None and question is not None
    prompt = decisions.permission_prompt(permission)
    asked = decisions.question_prompt(question)
    reply = {
        "content": "Done: the tests pass.\n```\n12 passed\n```",
        "allowed_mentions": {"parse": []},
        "nonce": "outbox-1",
        "enforce_nonce": True,
    }
    closed = {"type": 7, "data": {"content": prompt["content"] + "\n✅ Allowed", "components": []}}
    upload = {"content": "", "attachments": [{"id": 0, "filename": "plan.md"}]}
    followup = {"content": "done thinking", "flags": 64, "allowed_mentions": {"parse": []}}
    return [
        ("a reply", MESSAGES, reply),
        ("permission prompt (buttons)", MESSAGES, prompt),
        ("question prompt (selects)", MESSAGES, asked),
        ("upload's payload_json", MESSAGES, upload),
        ("prompt closed by a click", CALLBACK, closed),
        ("follow-up", FOLLOWUP, followup),
    ]


def literal_validator(route: str) -> Any:
    """The operation's validator over the spec as written (relaxations only)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    spec = json.loads(contract.SPEC_PATH.read_text(encoding="utf-8"))
    spec["components"]["schemas"].update(contract.RELAXATIONS)
    registry = Registry().with_resource(
        contract.SPEC_URI, Resource(contents=spec, specification=DRAFT202012)
    )
    pointer = contract._operations()[contract.operation_of(route)]
    return Draft202012Validator({"$ref": f"{contract.SPEC_URI}#{pointer}"}, registry=registry)


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    runs = parser.parse_args().runs
    cases = bodies()
    start = time.perf_counter()
    contract._registry()
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    contract._validator(contract.operation_of(MESSAGES))
    compiled = time.perf_counter() - start
    print(
        f"spec loaded in {loaded * 1000:.0f} ms; an operation compiled in {compiled * 1000:.0f} ms"
    )
    literal = {route: literal_validator(route) for route in {route for _, route, _ in cases}}
    print(f"{'body':<30} {'bytes':>6} {'compiled ms':>12} {'literal ms':>11}")
    for name, route, body in cases:
        assert not contract.check(route, body).tree, (name, contract.check(route, body).tree)
        validator = literal[route]
        ours = median_ms(lambda r=route, b=body: contract.check(r, b), runs)
        theirs = median_ms(lambda v=validator, b=body: list(v.iter_errors(b)), max(runs // 3, 5))
        size = len(json.dumps(body))
        print(f"{name:<30} {size:>6} {ours:>12.2f} {theirs:>11.2f}")


if __name__ == "__main__":
    main()
