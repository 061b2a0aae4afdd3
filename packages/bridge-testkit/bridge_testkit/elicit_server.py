"""A tiny stdio MCP server whose tools ask the client for input (MCP elicitation), for tests.

Run by Claude Code from a project's ``.mcp.json`` (:func:`mcp_json`). Its tools:

- ``ask_form``: ``elicitation/create`` in form mode with the schema in ``--schema FILE``;
- ``ask_url``: ``elicitation/create`` in url mode (``--url``, with ``--message``);

each then returns, as its result, what came back (``ELICITATION RESULT: {…}``) and appends it
to ``--log FILE`` (one JSON object a line: ``{"tool": …, "result": …}``), so a test asserts
what the server received. Newline-delimited JSON-RPC over stdin/stdout, standard library only
(the CLI announces ``elicitation: {form, url}``; measured with 2.1.332).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

NAME = "elic"
TOOLS = [
    {
        "name": "ask_form",
        "description": "Ask the user to fill in a form",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "ask_url",
        "description": "Send the user to a web page",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


URL, URL_MESSAGE = "https://example.com/auth?step=1", "Sign in to the example service"


def mcp_json(log: Path, schema: Path, url: str = URL, message: str = URL_MESSAGE) -> dict:
    """The ``.mcp.json`` that starts this server (as ``elic``) with this interpreter."""
    args = [
        __file__,
        "--log",
        str(log),
        "--schema",
        str(schema),
        "--url",
        url,
        "--message",
        message,
    ]
    return {"mcpServers": {NAME: {"type": "stdio", "command": sys.executable, "args": args}}}


def received(log: Path) -> list[dict]:
    """What the server received, in order: each elicitation's ``result``."""
    if not log.exists():
        return []
    return [json.loads(line)["result"] for line in log.read_text().splitlines() if line]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--message", default=URL_MESSAGE)
    options = parser.parse_args()
    calls = 0
    while True:
        message = _read()
        method, mid = message.get("method"), message.get("id")
        if method == "initialize":
            version = (message.get("params") or {}).get("protocolVersion", "2025-11-25")
            _send(
                mid,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": NAME, "version": "1"},
                },
            )
        elif method == "tools/list":
            _send(mid, {"tools": TOOLS})
        elif method == "tools/call":
            calls += 1
            tool = (message.get("params") or {}).get("name")
            if tool == "ask_url":
                params = {
                    "mode": "url",
                    "message": options.message,
                    "url": options.url,
                    "elicitationId": f"elic-{calls}",
                }
            else:
                schema = json.loads(Path(options.schema).read_text())
                params = {"message": "Please describe the project", "requestedSchema": schema}
            request_id = f"srv-{calls}"
            _write(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "elicitation/create",
                    "params": params,
                }
            )
            reply = _read()
            while reply.get("id") != request_id:
                reply = _read()
            result = reply.get("result", reply.get("error"))
            with open(options.log, "a") as log:
                log.write(json.dumps({"tool": tool, "result": result}) + "\n")
            text = "ELICITATION RESULT: " + json.dumps(result, sort_keys=True)
            _send(mid, {"content": [{"type": "text", "text": text}]})
        elif mid is not None and method is not None:
            _send(mid, {})


def _read() -> dict:
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def _send(mid: object, result: dict) -> None:
    _write({"jsonrpc": "2.0", "id": mid, "result": result})


def _write(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
