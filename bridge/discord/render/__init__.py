"""Pure functions that turn text and requests into Discord message payloads."""
