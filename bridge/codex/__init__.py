"""What the bridge knows of OpenAI's Codex CLI (docs/codex.md): its screen, its launch, its
hooks file, the versions it is tested with."""
