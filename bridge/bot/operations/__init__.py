"""The operator's side of the bot: metrics and health over HTTP (opt-in)."""
