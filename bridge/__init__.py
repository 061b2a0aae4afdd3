"""discord-bridge: drive interactive Claude Code sessions in tmux from Discord."""

__version__ = "0.1.0"
