"""The gateway websocket: HELLO, IDENTIFY/READY, RESUME with replay, intents, dispatch."""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
import zlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from .state import State

HEARTBEAT_MS = 41250
GUILDS, MEMBERS, PRESENCES = 1 << 0, 1 << 1, 1 << 8
GUILD_MESSAGES, GUILD_REACTIONS, DM_MESSAGES, DM_REACTIONS = 1 << 9, 1 << 10, 1 << 12, 1 << 13
MESSAGE_CONTENT = 1 << 15
PRIVILEGED = MEMBERS | PRESENCES | MESSAGE_CONTENT
REPLAY_LIMIT = 2000
MAX_PAYLOAD = 4096  # bytes a client may send in one frame (Discord disconnects above it)


@dataclass
class Session:
    id: str
    intents: int
    seq: int = 0
    buffer: list[dict[str, Any]] = field(default_factory=list)  # for RESUME replay
    ws: web.WebSocketResponse | None = None
    zlib: Any = None
    queue: asyncio.Queue[dict[str, Any] | None] = field(default_factory=asyncio.Queue)
    bot: dict[str, Any] = field(default_factory=dict)  # the bot user this session is


def required_intent(event: str, data: dict[str, Any]) -> int:
    """The intent a dispatch needs; 0 means always delivered."""
    in_guild = bool(data.get("guild_id"))
    if event.startswith("MESSAGE_REACTION"):
        return GUILD_REACTIONS if in_guild else DM_REACTIONS
    if event.startswith("MESSAGE_"):
        return GUILD_MESSAGES if in_guild else DM_MESSAGES
    if event.startswith(("GUILD_MEMBER_", "GUILD_MEMBERS")) and event != "GUILD_MEMBERS_CHUNK":
        return MEMBERS
    if event.startswith(("CHANNEL_", "THREAD_", "GUILD_")):
        return GUILDS
    return 0


class GatewayHub:
    """All gateway sessions; `dispatch` fans an event out to every session that may see it."""

    def __init__(self, state: State) -> None:
        self.st = state
        self.sessions: dict[str, Session] = {}
        self.sockets: set[web.WebSocketResponse] = set()

    # ----- fan-out -------------------------------------------------------------------------

    def dispatch(self, event: str, data: dict[str, Any]) -> list[str]:
        """Send an event to every session that may see it; returns their bot users' ids."""
        need = required_intent(event, data)
        app_id = data.get("application_id") if event == "INTERACTION_CREATE" else None
        sent = []
        for session in list(self.sessions.values()):
            if need and not session.intents & need:
                continue
            if app_id and session.bot.get("id", app_id) != app_id:
                continue  # an interaction reaches only its own application
            self._send_event(session, event, self._filtered(session, event, data))
            sent.append(str(session.bot.get("id") or self.st.ids["bot_id"]))
        return sent

    def _filtered(self, session: Session, event: str, data: dict[str, Any]) -> dict[str, Any]:
        """Without MESSAGE_CONTENT, other users' guild messages arrive blank (pitfall 11)."""
        if event not in ("MESSAGE_CREATE", "MESSAGE_UPDATE") or session.intents & MESSAGE_CONTENT:
            return data
        author = (data.get("author") or {}).get("id")
        me = session.bot.get("id") or self.st.ids["bot_id"]
        mentioned = any(u.get("id") == me for u in data.get("mentions", []))
        if not data.get("guild_id") or author == me or mentioned:
            return data
        blank = copy.deepcopy(data)
        blank.update(content="", embeds=[], attachments=[], components=[])
        return blank

    def _send_event(self, session: Session, event: str, data: dict[str, Any]) -> None:
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.buffer.append(frame)
        del session.buffer[:-REPLAY_LIMIT]
        session.queue.put_nowait(frame)
        self.st.counters[f"GATEWAY DISPATCH {event}"] += 1

    # ----- control ---------------------------------------------------------------------------

    def dispatch_to_user(self, user_id: str, event: str, data: dict[str, Any]) -> None:
        """An event for one user's client sessions only (an ephemeral message, as Discord
        delivers it to the user who ran the interaction)."""
        for session in list(self.sessions.values()):
            if session.bot.get("id") == user_id and not session.bot.get("bot"):
                self._send_event(session, event, data)

    async def control(self, action: str, code: int = 4000) -> int:
        """reconnect (op 7), invalidate (op 9), or close the sockets with `code`."""
        affected = 0
        for session in list(self.sessions.values()):
            if session.ws is None:
                continue
            affected += 1
            if action == "reconnect":
                session.queue.put_nowait({"op": 7, "d": None})
            elif action == "invalidate":
                self.sessions.pop(session.id, None)
                session.queue.put_nowait({"op": 9, "d": False})
            elif action == "close":
                await session.ws.close(code=code)
        return affected

    async def close_all(self) -> None:
        for ws in list(self.sockets):
            await ws.close(code=1001)

    # ----- connection ------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=MAX_PAYLOAD)
        await ws.prepare(request)
        self.sockets.add(ws)
        compress = request.query.get("compress") == "zlib-stream"
        conn = _Connection(self, ws, zlib.compressobj() if compress else None)
        self.st.record("gateway_connect", compress=compress)
        try:
            await conn.run()
        finally:
            self.sockets.discard(ws)
            conn.detach()
            self.st.record(
                "gateway_disconnect",
                close_code=ws.close_code,
                session_id=conn.session.id if conn.session else None,
            )
        return ws


class _Connection:
    """One websocket: reads ops and writes frames from its session's queue in order."""

    def __init__(self, hub: GatewayHub, ws: web.WebSocketResponse, zobj: Any) -> None:
        self.hub, self.st, self.ws, self.zobj = hub, hub.st, ws, zobj
        self.session: Session | None = None
        self.writer: asyncio.Task[None] | None = None

    async def send(self, frame: dict[str, Any]) -> None:
        text = json.dumps(frame)
        if self.zobj is None:
            await self.ws.send_str(text)
        else:
            data = self.zobj.compress(text.encode()) + self.zobj.flush(zlib.Z_SYNC_FLUSH)
            await self.ws.send_bytes(data)

    async def run(self) -> None:
        await self.send({"op": 10, "d": {"heartbeat_interval": HEARTBEAT_MS}})
        async for msg in self.ws:
            if msg.type != WSMsgType.TEXT:
                continue
            payload = json.loads(msg.data)
            self.st.counters[f"GATEWAY op{payload.get('op')}"] += 1
            await self.on_op(payload.get("op"), payload.get("d"))

    async def on_op(self, op: int, data: Any) -> None:
        if self.session is None and op not in (1, 2, 6):
            # As Discord: nothing but a heartbeat before IDENTIFY/RESUME (a connection anyone
            # on the machine can open must not leave its payloads in the records)
            await self.ws.close(code=4003, message=b"Not authenticated.")
            return
        if op == 1:
            await self.send({"op": 11})
        elif op == 2:
            await self.identify(data or {})
        elif op == 6:
            await self.resume(data or {})
        elif op == 3:
            self.st.record("gateway_op", op=3, presence=data)
        elif op == 8:
            await self.request_members(data or {})
        else:
            self.st.record("gateway_op", op=op, data=data)

    def detach(self) -> None:
        if self.session is not None and self.session.ws is self.ws:
            self.session.ws = None
            self.session.queue.put_nowait(None)
        if self.writer is not None:
            self.writer.cancel()

    def attach(self, session: Session) -> None:
        """Bind the session to this socket; a fresh queue avoids replaying frames twice."""
        if session.ws is not None and session.ws is not self.ws:
            session.queue.put_nowait(None)
        session.ws = self.ws
        session.zlib = self.zobj
        session.queue = asyncio.Queue()
        self.session = session
        self.writer = asyncio.create_task(self._write_loop(session.queue))

    async def _write_loop(self, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        while True:
            frame = await queue.get()
            if frame is None or self.ws.closed:
                return
            try:
                await self.send(frame)
            except (ConnectionError, RuntimeError):
                return

    async def identify(self, data: dict[str, Any]) -> None:
        self.st.record("gateway_identify", intents=data.get("intents"))
        token = str(data.get("token"))
        bot = self.st.bots.get(token) or self.st.user_tokens.get(token)  # a bot, or a user client
        if bot is None:
            await self.ws.close(code=4004, message=b"Authentication failed.")
            return
        intents = int(data.get("intents") or 0)
        if intents & PRIVILEGED & ~self.st.privileged_intents:
            await self.ws.close(code=4014, message=b"Disallowed intent(s).")
            return
        session = Session(id=secrets.token_hex(16), intents=intents, bot=bot)
        self.hub.sessions[session.id] = session
        self.attach(session)
        self.hub._send_event(session, "READY", self.ready_payload(session))
        self.hub._send_event(session, "GUILD_CREATE", guild_payload(self.st))
        self.st.record(
            "gateway_ready", session_id=session.id, intents=intents, user_id=str(bot.get("id"))
        )

    def ready_payload(self, session: Session) -> dict[str, Any]:
        st = self.st
        return {
            "v": 10,
            "user": {**session.bot, "verified": True, "mfa_enabled": False},
            "guilds": [{"id": st.ids["guild_id"], "unavailable": True}],
            "session_id": session.id,
            "session_type": "normal",
            # Without this discord.py fails start-up with a KeyError (pitfall 8).
            "resume_gateway_url": st.base_url.replace("http", "ws", 1) + "/gateway",
            "shard": [0, 1],
            "application": {"id": session.bot["id"], "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "user_settings": {},
            "_trace": ["emulator"],
        }

    async def resume(self, data: dict[str, Any]) -> None:
        session = self.hub.sessions.get(str(data.get("session_id")))
        token = str(data.get("token"))
        login = self.st.bots.get(token) or self.st.user_tokens.get(token)
        if session is None or login is not session.bot:
            await self.send({"op": 9, "d": False})
            return
        self.attach(session)
        since = int(data.get("seq") or 0)
        missed = [f for f in session.buffer if f["s"] > since]
        for frame in missed:
            session.queue.put_nowait(frame)
        self.hub._send_event(session, "RESUMED", {"_trace": ["emulator"]})
        self.st.record("gateway_resumed", session_id=session.id, replayed=len(missed))

    async def request_members(self, data: dict[str, Any]) -> None:
        if self.session is None:
            return
        self.hub._send_event(
            self.session,
            "GUILD_MEMBERS_CHUNK",
            {
                "guild_id": self.st.ids["guild_id"],
                "members": self.st.members(),
                "chunk_index": 0,
                "chunk_count": 1,
                "nonce": data.get("nonce"),
            },
        )


def guild_payload(st: State) -> dict[str, Any]:
    """GUILD_CREATE: the one guild with roles, channels, members and active threads."""
    members = st.members()
    return {
        **st.guild,
        "icon": None,
        "splash": None,
        "discovery_splash": None,
        "banner": None,
        "description": None,
        "afk_channel_id": None,
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "features": [],
        "emojis": [],
        "stickers": [],
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "system_channel_id": None,
        "system_channel_flags": 0,
        "rules_channel_id": None,
        "public_updates_channel_id": None,
        "vanity_url_code": None,
        "unavailable": False,
        "large": False,
        "lazy": True,
        "joined_at": "2025-01-01T00:00:00+00:00",
        # Must equal len(members) or discord.py thinks the guild is unchunked (pitfall 9).
        "member_count": len(members),
        "members": members,
        "channels": copy.deepcopy(st.guild_channels()),
        "threads": copy.deepcopy(st.active_threads()),
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }
