"""Reading Responses API requests: what the model "received" from the Codex CLI.

A request's ``input`` is a list of items: ``message`` items (role ``user``, ``developer`` or
``assistant``, content parts ``input_text`` / ``output_text``), ``function_call`` items the
model made earlier and their ``function_call_output`` (``custom_tool_call`` /
``custom_tool_call_output`` for a freeform tool such as ``apply_patch``).
"""

from __future__ import annotations

import json
from typing import Any

Request = dict[str, Any]
Item = dict[str, Any]

# Codex wraps what it adds to a user message (AGENTS.md, the environment) in tags like these;
# the typed prompt is the user message that does not start with one.
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<")


def _text_of(item: Item) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def user_texts(request: Request) -> list[str]:
    """Every user message's text, oldest first, without the context Codex adds."""
    texts = []
    for item in request.get("input") or []:
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            continue
        text = _text_of(item) if item.get("role") == "user" else ""
        if text and not text.lstrip().startswith(CONTEXT_PREFIXES):
            texts.append(text)
    return texts


def last_user_text(request: Request) -> str:
    """The newest typed prompt in ``request`` ("" when there is none)."""
    texts = user_texts(request)
    return texts[-1] if texts else ""


def tool_outputs(request: Request) -> dict[str, str]:
    """The output of each tool call answered in ``request``, by its ``call_id``."""
    outputs = {}
    for item in request.get("input") or []:
        if isinstance(item, dict) and item.get("type") in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            output = item.get("output")
            if isinstance(output, dict):  # {"content": …} or content items
                output = output.get("content", output)
            if isinstance(output, list):
                output = "\n".join(str(part.get("text", "")) for part in output)
            outputs[str(item.get("call_id"))] = str(output)
    return outputs


def last_item(request: Request) -> Item:
    """The last input item (a tool's output right after the call, a user message …)."""
    items = request.get("input") or [{}]
    last = items[-1]
    return last if isinstance(last, dict) else {}


def tool_names(request: Request) -> list[str]:
    """The names of the tools Codex offers the model in ``request``."""
    names = []
    for tool in request.get("tools") or []:
        if isinstance(tool, dict):
            names.append(str(tool.get("name") or tool.get("type")))
    return names


def thread_source(request: Request) -> str:
    """Who started the request's turn, from Codex's ``client_metadata``: ``user`` (a typed
    prompt and the tool calls that follow it) or a side job such as ``thread_title`` (0.171
    asks the model for a title of each new thread, in a request of its own)."""
    metadata = request.get("client_metadata") or {}
    raw = metadata.get("x-codex-turn-metadata") if isinstance(metadata, dict) else None
    try:
        turn = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        turn = {}
    return str(turn.get("thread_source") or "user") if isinstance(turn, dict) else "user"


def side_kind(request: Request) -> str | None:
    """None for a request of the user's thread (it takes a scripted turn), else its kind."""
    source = thread_source(request)
    return None if source == "user" else source
