"""What the bridge knows of OpenAI's Codex CLI (docs/codex.md): the versions it is tested with."""
