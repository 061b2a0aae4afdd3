"""Scripted fake OpenAI Responses API for the Codex CLI (see ``server.FakeOpenAI``)."""

from .inputs import (
    last_item,
    last_user_text,
    side_kind,
    thread_source,
    tool_names,
    tool_outputs,
    user_texts,
)
from .server import DEFAULT_TEXT, MODEL, FakeOpenAI, LoggedRequest
from .turns import (
    Turn,
    add_file,
    apply_patch,
    echo,
    error,
    exec_command,
    failed,
    text,
    usage_limit,
)

__all__ = [
    "DEFAULT_TEXT",
    "MODEL",
    "FakeOpenAI",
    "LoggedRequest",
    "Turn",
    "add_file",
    "apply_patch",
    "echo",
    "error",
    "exec_command",
    "failed",
    "last_item",
    "last_user_text",
    "side_kind",
    "text",
    "thread_source",
    "tool_names",
    "tool_outputs",
    "usage_limit",
    "user_texts",
]
