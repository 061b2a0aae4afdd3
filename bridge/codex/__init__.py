"""What we know of OpenAI's Codex CLI (its ``codex`` TUI), as ``bridge/claude/`` knows Claude
Code."""
