"""All mutable emulator state. Only ever touched from the server's event loop."""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from . import payloads as p
from .contract import ContractStats
from .ids import (
    CHANNEL_NAMES,
    ROLE_NAMES,
    USER_NAMES,
    Snowflakes,
    make_token,
    seed_ids,
    snowflake_now,
)

MAX_RECORDS = 20000


@dataclass
class Forced429:
    count: int
    retry_after: float
    global_: bool


@dataclass
class Bucket:
    limit: int
    window: float
    remaining: int = 0
    reset_at: float = 0.0


@dataclass
class InteractionState:
    """One INTERACTION_CREATE we sent and what the bot did with it."""

    id: str
    token: str
    type: int
    channel_id: str
    created: float
    payload: dict[str, Any]
    message_id: str | None = None  # the message a component lives on
    response_type: int | None = None
    response_message_id: str | None = None
    ephemeral: bool = False
    thinking: bool = False  # a type-5 defer whose message no follow-up has replaced yet
    modal: dict[str, Any] | None = None
    choices: list[Any] | None = None
    followups: list[str] = field(default_factory=list)
    expired: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def application_id(self) -> str:
        """The application the interaction was sent to (the only one that can answer it)."""
        return str(self.payload["application_id"])


class State:
    """The world (guild, users, channels, messages) plus test bookkeeping."""

    def __init__(
        self,
        seed: int = 0,
        max_file_size: int = 10 * 1024 * 1024,
        rate_limits: bool = False,
        second_bot: bool = True,
    ) -> None:
        self.seed = seed
        self.max_file_size = self.default_max_file_size = max_file_size
        self.rate_limits = self.default_rate_limits = rate_limits  # global + per-resource
        self.flakes = Snowflakes(seed)
        self.ids = seed_ids(self.flakes)
        # Another bot (token) in the same guild. Its id is drawn either way, so that every id
        # after it is the same for a seed with or without it.
        self.ids["second_bot_id"] = self.flakes.next()
        self.second_bot = second_bot
        self.token = make_token(self.ids["bot_id"], seed)
        # "" without a second bot: no token to hand out, none accepted
        self.second_token = make_token(self.ids["second_bot_id"], seed) if second_bot else ""
        self.base_url = ""  # set once the server listens
        self.gateway: Any = None  # GatewayHub, set by the server
        # A user client's gateway logins (token -> user): the web client follows the gateway
        # as that user; the control API (/_test) needs ``control_token`` when one is set.
        self.user_tokens: dict[str, dict[str, Any]] = {}
        self.control_token: str | None = None
        # Bodies checked against Discord's OpenAPI spec, and refused (survives reset).
        self.contract = ContractStats()
        self._build_world()
        self.reset()

    # ----- world -------------------------------------------------------------------------

    def _build_world(self) -> None:
        ids = self.ids
        self.bot_user = p.user_obj(ids["bot_id"], "emulator-bot", bot=True)
        self.second_bot_user = p.user_obj(ids["second_bot_id"], "emulator-bot-2", bot=True)
        self.users: dict[str, dict[str, Any]] = {ids["bot_id"]: self.bot_user}
        # Every token the emulator accepts, and the bot user it logs in as. Each bot is its own
        # application (app id == bot user id): its own commands, its own interactions.
        self.bots = {self.token: self.bot_user}
        if self.second_bot:
            self.users[ids["second_bot_id"]] = self.second_bot_user
            self.bots[self.second_token] = self.second_bot_user
        for name in USER_NAMES:
            self.users[ids[name]] = p.user_obj(ids[name], name)
        self.guild: dict[str, Any] = {
            "id": ids["guild_id"],
            "name": "Emulator Guild",
            "owner_id": ids["alice"],
            "roles": [p.role_obj(ids["everyone_role_id"])]
            + [p.role_obj(ids[name + "_role_id"], name) for name in ROLE_NAMES],
        }
        self.base_channels: dict[str, dict[str, Any]] = {}
        category = p.channel_obj(ids["category_id"], "Text Channels", ids["guild_id"], None, 0, 4)
        self.base_channels[category["id"]] = category
        for pos, name in enumerate(CHANNEL_NAMES):
            ch = p.channel_obj(ids[name], name, ids["guild_id"], category["id"], pos)
            self.base_channels[ch["id"]] = ch

    def denies_attach_files(self, channel: dict[str, Any]) -> bool:
        """Whether the bot lacks Attach Files there (a thread inherits its parent's)."""
        return bool({channel["id"], channel.get("parent_id")} & self.no_attach_files)

    def reset(self) -> None:
        """Forget everything that tests create; keep seeded ids."""
        self.channels = {cid: dict(ch) for cid, ch in self.base_channels.items()}
        self.messages: dict[str, list[dict[str, Any]]] = {cid: [] for cid in self.channels}
        self.message_index: dict[str, dict[str, Any]] = {}
        self.message_born: dict[str, float] = {}
        self.files: dict[str, bytes] = {}
        self.file_keys: dict[str, str] = {}  # attachment id -> the key its URL carries (hm)
        # message id → emoji → the users who reacted, in order (reactions.py)
        self.reactions: dict[str, dict[str, list[str]]] = {}
        self.nonces: dict[tuple[str, str, str], tuple[float, str]] = {}
        self.records: list[dict[str, Any]] = []
        self.seq = 0
        self._changed = asyncio.Event()
        self.counters: Counter[str] = Counter()
        self.forced: dict[str, Forced429] = {}
        self.buckets: dict[str, Bucket] = {}  # set by a test: one bucket for the whole route
        self.resource_buckets: dict[str, Bucket] = {}  # rate_limits: per route and resource
        self.global_buckets: dict[str, Bucket] = {}  # rate_limits: per bot token
        self.outage: str | None = None
        self.no_attach_files: set[str] = set()  # channels where the bot lacks Attach Files
        self.member_roles: dict[str, list[str]] = {}  # user id -> role ids (set_roles)
        self.interactions: dict[str, InteractionState] = {}
        self.interaction_by_token: dict[str, InteractionState] = {}
        # Registered commands survive reset: the bot registers them once in setup_hook.
        # Per application, then per scope ("global" or a guild id).
        self.app_commands: dict[str, dict[str, list[dict[str, Any]]]] = getattr(
            self, "app_commands", {}
        )
        self.modals: list[tuple[InteractionState, dict[str, Any]]] = []
        self.audit_log: list[dict[str, Any]] = []  # newest last
        self.audit_log_access = True  # False: the bot lacks View Audit Log (403 / 50013)
        self.manage_channels = True  # False: the bot lacks Manage Channels (403 / 50013)
        # False: the bots lack Manage Messages: deleting someone else's message is 403 / 50013
        self.manage_messages = True
        # What ``/_test/settings`` tunes goes back to how the emulator was made: a test that
        # turned the intents off must not refuse the next test's bot (shared emulator).
        self.max_file_size = self.default_max_file_size
        self.rate_limits = self.default_rate_limits
        self.privileged_intents = (1 << 1) | (1 << 8) | (1 << 15)  # all enabled by default
        self.interaction_deadline = 3.0

    def bot_permissions(self) -> str:
        """The bot's permissions as Discord puts them in ``app_permissions``."""
        perms = int(p.ALL_PERMISSIONS)
        if not self.manage_channels:
            perms &= ~p.MANAGE_CHANNELS
        if not self.manage_messages:
            perms &= ~p.MANAGE_MESSAGES
        return str(perms)

    @property
    def commands(self) -> dict[str, list[dict[str, Any]]]:
        """The first bot's commands by scope."""
        return self.app_commands.setdefault(self.ids["bot_id"], {})

    def set_bot_token(self, token: str) -> None:
        """Replace the first bot's (deterministic) token with a secret one, and the second
        bot's with a random one: the seed is no secret (``discord-bridge try`` derives it from
        the project's path), so no token derived from it may be accepted then."""
        del self.bots[self.token]
        self.token = token
        self.bots[token] = self.bot_user
        if self.second_bot:
            del self.bots[self.second_token]
            self.second_token = f"{self.ids['second_bot_id']}.{secrets.token_urlsafe(32)}"
            self.bots[self.second_token] = self.second_bot_user

    def is_bot(self, user_id: str | None) -> bool:
        return any(bot["id"] == user_id for bot in self.bots.values())

    def user(self, ref: str) -> dict[str, Any]:
        """A user by seeded name or raw id; unknown ids become plain users."""
        uid = self.ids.get(ref, ref)
        if uid not in self.users:
            self.users[uid] = p.user_obj(uid, f"user{uid[-4:]}")
        return self.users[uid]

    def member(self, user: dict[str, Any], with_user: bool = True) -> dict[str, Any]:
        """``user`` as a member of the guild, with the roles a test gave them."""
        return p.member_obj(user, with_user, self.member_roles.get(user["id"]))

    def members(self) -> list[dict[str, Any]]:
        return [self.member(u) for uid, u in self.users.items() if not uid.startswith("dm")]

    def guild_channels(self) -> list[dict[str, Any]]:
        return [
            c
            for c in self.channels.values()
            if c.get("guild_id") and c["type"] not in p.THREAD_TYPES
        ]

    def active_threads(self) -> list[dict[str, Any]]:
        return [
            c
            for c in self.channels.values()
            if c["type"] in p.THREAD_TYPES and not c["thread_metadata"]["archived"]
        ]

    def add_channel(self, channel: dict[str, Any]) -> None:
        self.channels[channel["id"]] = channel
        self.messages.setdefault(channel["id"], [])

    def audit(
        self, user_id: str, action_type: int, target_id: str, changes: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Add an audit-log entry (its id carries the real time, as Discord's do)."""
        entry = {
            "id": snowflake_now(len(self.audit_log)),
            "user_id": user_id,
            "target_id": target_id,
            "action_type": action_type,
            "changes": changes,
        }
        self.audit_log.append(entry)
        return entry

    # ----- records -----------------------------------------------------------------------

    def record(self, kind: str, **data: Any) -> dict[str, Any]:
        """Append a bot-visible effect and wake long-polls."""
        self.seq += 1
        rec = {"seq": self.seq, "kind": kind, "t": time.monotonic(), **data}
        self.records.append(rec)
        if len(self.records) > MAX_RECORDS:
            del self.records[: MAX_RECORDS // 10]
        self._changed.set()
        self._changed = asyncio.Event()
        return rec

    def find_record(self, since: int, kind: str | None, filters: dict[str, Any]) -> dict | None:
        for rec in self.records:
            if (
                rec["seq"] > since
                and (kind is None or rec["kind"] == kind)
                and record_matches(rec, filters)
            ):
                return rec
        return None

    async def wait_record(
        self, since: int, kind: str | None, filters: dict[str, Any], timeout: float
    ) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while True:
            rec = self.find_record(since, kind, filters)
            if rec is not None:
                return rec
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            event = self._changed
            try:
                await asyncio.wait_for(event.wait(), left)
            except TimeoutError:
                return None


def _rec_message(rec: dict[str, Any]) -> dict[str, Any]:
    return rec.get("message") or {}


def record_matches(rec: dict[str, Any], filters: dict[str, Any]) -> bool:
    """True when the record satisfies every filter (None filters are ignored)."""
    msg = _rec_message(rec)
    for key, want in filters.items():
        if want is None:
            continue
        if not _filter_ok(key, want, rec, msg):
            return False
    return True


def _filter_ok(key: str, want: Any, rec: dict[str, Any], msg: dict[str, Any]) -> bool:
    content = msg.get("content", rec.get("content")) or ""
    if key == "content_contains":
        return str(want) in content
    if key == "content_regex":
        return re.search(str(want), content) is not None
    if key == "content":
        return content == want
    if key == "has_files":
        return bool(msg.get("attachments")) == bool(want)
    if key == "author_id":
        return (msg.get("author") or {}).get("id") == str(want)
    if key == "message_id":
        return str(want) in (msg.get("id"), rec.get("message_id"))
    if key == "channel_id":
        return str(want) in (msg.get("channel_id"), rec.get("channel_id"))
    if key == "reply_to":
        return (msg.get("message_reference") or {}).get("message_id") == str(want)
    return str(rec.get(key)) == str(want)
