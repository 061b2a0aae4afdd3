"""The one table of what the bridge registers with Claude Code: event → script → handler.

``hooks install`` writes settings.json from it; each ``hooks/<script>`` calls the handler named
here (a unit test holds them to it). Kept import-free: the statusLine command reads its
constants on every screen refresh.
"""

MARK = "# discord-bridge"  # ends every command the bridge installs: how uninstall finds them
STATUS_LINE_SCRIPT = "status_line.py"
PREVIOUS_FLAG = "--previous"  # the user's own statusLine, saved inside the bridge's command
PROMPT_TIMEOUT_MARGIN = 60  # the PermissionRequest hook times out itself, then exits first


class Hook:
    """One registered event. ``timeout`` 0: computed from the config (a hook that waits for
    the owner: ``settings.prompt_hook_timeout``). ``nice``: the hook runs at that niceness
    (``nice -n``), behind what the user waits for."""

    __slots__ = ("event", "function", "module", "nice", "script", "timeout")

    def __init__(self, event: str, script: str, handler: str, timeout: int, nice: int = 0) -> None:
        self.event = event
        self.script = script
        self.module, _, self.function = handler.partition(":")
        self.timeout = timeout
        self.nice = nice


# Stop may retry Discord for ~20 s and upload files; PermissionRequest, Elicitation and
# PermissionDenied wait for the user (their timeout is set above the config's prompt timeout
# and retry wait); the rest only touch local files.
_EVENTS = "bridge.handlers.events"
HOOKS: dict[str, Hook] = {
    hook.event: hook
    for hook in (
        Hook("Stop", "stop.py", f"{_EVENTS}:on_turn_end", 60),
        Hook("StopFailure", "stop_failure.py", f"{_EVENTS}:on_turn_failed", 10),
        Hook(
            "SessionStart", "session_start.py", "bridge.handlers.session_start:on_session_start", 10
        ),
        Hook("PreToolUse", "pre_tool_use.py", f"{_EVENTS}:on_tool_start", 10),
        Hook(
            "PermissionRequest",
            "permission_request.py",
            "bridge.handlers.permission:on_permission_request",
            0,
        ),
        Hook("Elicitation", "elicitation.py", "bridge.handlers.elicitation:on_elicitation", 0),
        Hook(
            "PermissionDenied",
            "permission_denied.py",
            "bridge.handlers.denied:on_permission_denied",
            0,
        ),
        Hook("PostToolUse", "session_event.py", f"{_EVENTS}:on_prompt_or_tool_done", 10),
        Hook("PostToolUseFailure", "session_event.py", f"{_EVENTS}:on_prompt_or_tool_done", 10),
        Hook("UserPromptSubmit", "session_event.py", f"{_EVENTS}:on_prompt_or_tool_done", 10),
        Hook("MessageDisplay", "message_display.py", f"{_EVENTS}:on_message_display", 5, nice=10),
        Hook("Notification", "notification.py", f"{_EVENTS}:on_notification", 30),
    )
}

# What the bridge registers with Codex (``bridge/codex/hooks_file.py``): its stdin has Claude
# Code's shape, so the same scripts serve it, for the events it has (no StopFailure up to
# 0.171.0: a usage limit shows on its screen only, docs/codex.md); and ``Interrupt``, Codex's
# own (Esc ends a turn with no Stop), capped at 3 s by Codex.
CODEX_HOOKS: dict[str, Hook] = {
    **{
        event: HOOKS[event]
        for event in (
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PermissionRequest",
            "PostToolUse",
            "Stop",
        )
    },
    "Interrupt": Hook("Interrupt", "interrupt.py", f"{_EVENTS}:on_turn_interrupted", 3),
}
