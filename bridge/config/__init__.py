"""Load, validate and save ``config.json`` (schemaVersion 2, compatible with gnsrtk/discord-bridge).

The bot and every hook validate the file the same way. Errors name the JSON path and the fix.
Writes are atomic and keep every key the bridge does not know. On the hooks' fast path: no
``json``, ``re``, ``dataclasses`` or ``typing`` at run time.

``defaults`` (constants, :class:`ConfigError`), ``validate``, ``model`` (the objects) and
``files`` (load / save / threads); everything callers use is re-exported here.
"""

from bridge.config.defaults import (
    AGENTS,
    DEFAULT_AGENT,
    DEFAULT_API_BASE,
    DEFAULT_ATTACH_AFTER,
    DEFAULT_DOWNLOAD_LIMIT,
    DEFAULT_GATEWAY_URL,
    DEFAULT_PROMPT_TIMEOUT,
    DEFAULT_RETRY_WAIT,
    DEFAULT_TMUX_SESSION,
    DEFAULT_UPLOAD_LIMIT,
    ENV_API_BASE,
    ENV_GATEWAY_URL,
    ENV_TMUX_SOCKET,
    FORBIDDEN,
    ISOLATION_MODES,
    MODE_ALIASES,
    PERMISSION_MODES,
    PROMPT_TIMEOUT_OUTCOMES,
    ConfigError,
    contains,
    norm_path,
)
from bridge.config.files import (
    THREAD_KEYS,
    append_thread,
    find_channel,
    load,
    remember_thread,
    save_raw,
    thread_settings,
)
from bridge.config.model import BridgeConfig, Project, Server, ThreadEntry
from bridge.config.validate import validate

__all__ = [
    "AGENTS",
    "DEFAULT_AGENT",
    "DEFAULT_API_BASE",
    "DEFAULT_ATTACH_AFTER",
    "DEFAULT_DOWNLOAD_LIMIT",
    "DEFAULT_GATEWAY_URL",
    "DEFAULT_PROMPT_TIMEOUT",
    "DEFAULT_RETRY_WAIT",
    "DEFAULT_TMUX_SESSION",
    "DEFAULT_UPLOAD_LIMIT",
    "ENV_API_BASE",
    "ENV_GATEWAY_URL",
    "ENV_TMUX_SOCKET",
    "FORBIDDEN",
    "ISOLATION_MODES",
    "MODE_ALIASES",
    "PERMISSION_MODES",
    "PROMPT_TIMEOUT_OUTCOMES",
    "THREAD_KEYS",
    "BridgeConfig",
    "ConfigError",
    "Project",
    "Server",
    "ThreadEntry",
    "append_thread",
    "contains",
    "find_channel",
    "load",
    "norm_path",
    "remember_thread",
    "save_raw",
    "thread_settings",
    "validate",
]
