"""Scripted fake Anthropic Messages API (see ``server.FakeAnthropic``)."""

from .messages import last_user_text, side_kind
from .server import COMPACTION_SUMMARY, DEFAULT_TEXT, FakeAnthropic, LoggedRequest
from .turns import (
    Turn,
    echo,
    error,
    near_usage_limit,
    refused_by_auto_mode,
    text,
    thinking,
    tool_use,
    tool_uses,
    unchecked_by_auto_mode,
    usage_limit,
)

__all__ = [
    "COMPACTION_SUMMARY",
    "DEFAULT_TEXT",
    "FakeAnthropic",
    "LoggedRequest",
    "Turn",
    "echo",
    "error",
    "last_user_text",
    "near_usage_limit",
    "refused_by_auto_mode",
    "side_kind",
    "text",
    "thinking",
    "tool_use",
    "tool_uses",
    "unchecked_by_auto_mode",
    "usage_limit",
]
