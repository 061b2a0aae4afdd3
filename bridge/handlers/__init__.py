"""What each Claude Code hook event of a bridge session does (hooks/*.py call these)."""
