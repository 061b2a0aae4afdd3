"""What the bridge knows of Claude Code: its settings file, hooks, screen, transcript."""
