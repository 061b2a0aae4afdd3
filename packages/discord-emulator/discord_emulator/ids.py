"""Deterministic snowflake ids and the seeded world (guild, users, channels)."""

from __future__ import annotations

import hashlib

# Discord's epoch (2015-01-01) in ms; ids encode ms since then in their top bits.
DISCORD_EPOCH_MS = 1420070400000
# A fixed "now" so that every fresh emulator hands out the same ids.
BASE_MS = 1735689600000 - DISCORD_EPOCH_MS  # 2025-01-01


class Snowflakes:
    """Hands out increasing snowflake strings; the sequence depends only on the seed."""

    def __init__(self, seed: int = 0) -> None:
        self._ms = BASE_MS + seed * 1000
        self._inc = 0

    def next(self) -> str:
        # One ms per id keeps ids ordered and their timestamps plausible.
        self._ms += 1
        self._inc = (self._inc + 1) % 4096
        return str((self._ms << 22) | self._inc)


def snowflake_now(increment: int) -> str:
    """A snowflake of the real current time, as Discord gives audit-log entries (a bot reads
    when an entry was made from its id)."""
    import time

    ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
    return str((ms << 22) | (increment % 4096))


USER_NAMES = ("alice", "bob", "carol")
CHANNEL_NAMES = ("general", "project-a", "project-b", "project-c", "general-b")
# The guild's roles besides @everyone; nobody has one until a test gives it (``set_roles``).
ROLE_NAMES = ("drivers", "approvers", "watchers")


def make_token(bot_id: str, seed: int) -> str:
    """A token that looks like Discord's (three dot-separated parts)."""
    secret = hashlib.sha256(f"emulator-{seed}".encode()).hexdigest()[:27]
    return f"{bot_id}.emulator.{secret}"


def seed_ids(flakes: Snowflakes) -> dict[str, str]:
    """Allocate the fixed ids in a fixed order so configs can hard-code them."""
    ids = {"guild_id": flakes.next(), "bot_id": flakes.next(), "everyone_role_id": ""}
    ids["everyone_role_id"] = ids["guild_id"]  # @everyone shares the guild's id
    for name in USER_NAMES:
        ids[name] = flakes.next()
    ids["category_id"] = flakes.next()
    for name in CHANNEL_NAMES:
        ids[name] = flakes.next()
    for name in ROLE_NAMES:  # after every older id, so those stay as they were
        ids[name + "_role_id"] = flakes.next()
    return ids
