"""The config file's defaults, choices and error type, shared by its model and validation."""

from __future__ import annotations

import os

DEFAULT_API_BASE = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg/"
DEFAULT_TMUX_SESSION = "discord-bridge"
TMUX_CONTROL_MODE = True  # tmux.controlMode: one persistent `tmux -C` for the frequent commands
CLAUDE_NICE = 5  # niceness Claude Code starts with (claudeNice): the bot's relays go first
DEFAULT_DOWNLOAD_LIMIT = 50 * 1024 * 1024  # bytes accepted from one Discord attachment
DEFAULT_UPLOAD_LIMIT = 10 * 1024 * 1024  # Discord's default per-file upload limit
PERMISSION_MODES = (
    "default",
    "manual",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "auto",
    "dontAsk",
)
# Claude Code 2.1.332 calls the mode that asks before edits "manual" (footer, --help); hooks and
# settings say "default", which every tested version's --permission-mode takes (2.1.197 knows
# only "default"; 2.1.332 keeps it as a hidden alias, measured).
MODE_ALIASES = {"manual": "default"}
ISOLATION_MODES = ("none", "worktree")
# The coding agent CLI a project (or a thread entry) runs: Claude Code, or OpenAI's Codex CLI.
AGENTS = ("claude", "codex")
DEFAULT_AGENT = "claude"
DEFAULT_PROMPT_TIMEOUT = 900.0  # seconds a Discord prompt waits before its timeout outcome
# Seconds a call auto mode refused waits for **Let Claude try again** (the turn waits too);
# 0: the notice alone, no button, no wait.
DEFAULT_RETRY_WAIT = 60.0
MAX_RETRY_WAIT = 3600.0
PROMPT_TIMEOUT_OUTCOMES = ("deny", "terminal")  # deny with a message / leave it to the terminal
DEFAULT_QUEUE_PREFIX = ">>"  # a message starting with it waits for the running turn to end
DEFAULT_STALL_MINUTES = 10.0  # a turn with no progress this long gets "Still working?"
# A message sent while the bot was away and younger than this is typed when it is back;
# an older one waits for Send now / Drop (bot/turn/catchup.py).
DEFAULT_CATCH_UP_MINUTES = 10.0
ACTIVE_CLIENT_SECONDS = 60.0  # a tmux client this recently active: the owner is at the desk
DEFAULT_ATTACH_AFTER = 4  # a reply longer than this many messages is attached as a .md file
VOICE_ENGINES = ("faster-whisper", "pocketsphinx")  # speech-to-text for voice messages
DEFAULT_VOICE_ENGINE = "faster-whisper"
DEFAULT_VOICE_MODEL = "base"  # faster-whisper's model size (or a local model directory)
DEFAULT_VOICE_MAX_SECONDS = 300.0  # longer voice messages are refused
# voice.replies: when a reply also comes back as a voice message (bot/voice/replies.py).
VOICE_REPLIES = ("voice", "always", "never")  # "voice": after a prompt that came as voice
DEFAULT_VOICE_REPLIES = "voice"
DEFAULT_VOICE_MAX_REPLY_SECONDS = 60.0  # a longer reply is cut to its first paragraphs
# limits: what the bridge does when a session hits a Claude.ai usage limit (bot/away/watch.py).
DEFAULT_CONTINUE_PROMPT = "continue"  # typed into the session at the reset
# Seconds after the reset before the bridge types it: Claude Code 2.1.332 continues by itself
# ~80 s after the reset when its window stays open (measured); the bridge goes first, and a
# reset clock a little ahead of Anthropic's does not meet the limit again.
DEFAULT_RESUME_MARGIN = 30.0
DEFAULT_BUDGET_CONTINUE = 5.0  # dollars **Continue** adds to a budget that was reached
MAX_VOICE_SECONDS = 3600.0
# metrics: the operator's endpoint (bot/operations/), off unless the config turns it on
DEFAULT_METRICS_HOST = "127.0.0.1"  # loopback: this machine only
DEFAULT_METRICS_PORT = 9464  # Prometheus' registry of default ports: free for exporters
# An outbox entry older than this makes /health say the outbox is stuck (the drain retries
# every minute at most; five missed rounds is more than a blip).
DEFAULT_OUTBOX_STUCK_SECONDS = 300.0
METRICS_KEYS = ("enabled", "host", "port", "outboxStuckSeconds")
# Not in tmux session, socket and window names: tmux reads ':' and '.' in targets, ';' as a
# command separator and '#' as the start of a format ('#(cmd)' runs a shell command).
FORBIDDEN = ":.;#'\"\\\t\n"

ENV_API_BASE = "DISCORD_BRIDGE_API_BASE"
ENV_GATEWAY_URL = "DISCORD_BRIDGE_GATEWAY_URL"
ENV_TMUX_SOCKET = "DISCORD_BRIDGE_TMUX_SOCKET"


class ConfigError(ValueError):
    """The config file cannot be used; ``problems`` lists each ``path: what and how to fix``."""

    def __init__(self, problems: list[str], path: str = "") -> None:
        self.problems = problems
        self.path = path
        where = f"{path}: " if path else ""
        super().__init__(where + "invalid config:\n  " + "\n  ".join(problems))


def norm_path(path: str) -> str:
    return os.path.normpath(os.path.expanduser(path))


def contains(parent: str, child: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")
