"""The Emulator: an aiohttp app on its own event loop in a background thread."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web

from . import contract, control, interactions, rest
from .client import EmulatorClient
from .gateway import GatewayHub
from .middleware import make_middleware
from .responses import OUTAGE_KEY, STATE_KEY
from .state import State

HOST = "127.0.0.1"


class Emulator:
    """A local Discord (REST v10, gateway, control API) for one guild.

    Two listening ports serve the same app: the main port (base_url, used by the bot and the
    hooks) and a control port used by `client`, so that `set_outage("refuse")` can close
    the main listener while tests keep steering the emulator.
    """

    def __init__(
        self,
        seed: int = 0,
        max_file_size: int = 10 * 1024 * 1024,
        rate_limits: bool = False,
        bot_token: str | None = None,
        control_token: str | None = None,
        second_bot: bool = True,
    ) -> None:
        """``rate_limits``: enforce Discord's global limit (50 requests/s per bot token) and
        per-route buckets per channel/guild/webhook (``middleware.ROUTE_LIMITS``).
        ``bot_token``: the first bot's token instead of the seeded one; ``control_token``: the
        control API (/_test) then needs ``Authorization: Bearer <control_token>`` (for an
        emulator other local users could reach, e.g. ``discord-bridge try``). With a
        ``bot_token`` no token derived from the seed is accepted (the second bot's is random).
        ``second_bot``: a second bot in the guild (``second_bot_token``); off, no token but
        the first bot's logs in."""
        self.state = State(
            seed=seed, max_file_size=max_file_size, rate_limits=rate_limits, second_bot=second_bot
        )
        if bot_token:
            self.state.set_bot_token(bot_token)
        self.state.control_token = control_token
        self.ids: dict[str, str] = dict(self.state.ids)
        self.bot_token: str = self.state.token
        self.second_bot_token: str = self.state.second_token  # ids["second_bot_id"]
        self.port = 0
        self.control_port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._servers: dict[int, asyncio.base_events.Server] = {}
        self._client: EmulatorClient | None = None
        self._web_runner: web.AppRunner | None = None

    # ----- urls --------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def api_base(self) -> str:
        return f"{self.base_url}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://{HOST}:{self.port}/gateway"

    @property
    def control_url(self) -> str:
        return f"http://{HOST}:{self.control_port}"

    @property
    def client(self) -> EmulatorClient:
        if self._client is None:
            self._client = EmulatorClient(self.control_url, self.state.control_token)
        return self._client

    # ----- lifecycle -----------------------------------------------------------------------

    def start(self) -> Emulator:
        """Serve in a background thread; returns once both ports accept connections."""
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve())
            except BaseException as exc:  # surfaced to start()'s caller
                failure.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self._cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="discord-emulator", daemon=True)
        self._thread.start()
        # Discord's OpenAPI spec, read and compiled while the clients log in (once a process).
        threading.Thread(target=contract.warm, name="discord-emulator-spec", daemon=True).start()
        started.wait(10)
        if failure:
            raise failure[0]
        return self

    def _app(self) -> web.Application:
        app = web.Application(
            middlewares=[make_middleware(self.state, lambda: self.port)],
            client_max_size=64 * 1024 * 1024,
        )
        hub = GatewayHub(self.state)
        self.state.gateway = hub
        app[STATE_KEY] = self.state
        app[OUTAGE_KEY] = self._set_outage
        app.router.add_get("/gateway", hub.handle)
        app.router.add_get("/", hub.handle)  # discord.py may drop the path on reconnects
        rest.add_routes(app)
        interactions.add_routes(app)
        control.add_routes(app)
        return app

    async def _serve(self) -> None:
        self._runner = web.AppRunner(self._app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        self.port = await self._listen(0)
        self.control_port = await self._listen(0)
        self.state.base_url = self.base_url

    async def _listen(self, port: int) -> int:
        """Bind (port 0 = any free port) and return the bound port."""
        assert self._runner is not None and self._loop is not None
        server = await self._loop.create_server(self._runner.server, HOST, port, reuse_address=True)
        bound = server.sockets[0].getsockname()[1]
        self._servers[bound] = server
        return bound

    async def _set_outage(self, mode: str | None) -> None:
        """'refuse' closes the main listener so new TCP connects fail (ECONNREFUSED)."""
        self.state.outage = mode
        server = self._servers.get(self.port)
        if mode == "refuse" and server is not None:
            server.close()
            del self._servers[self.port]
        elif mode != "refuse" and server is None:
            await self._listen(self.port)

    def configure_world(
        self, guild_name: str, channels: list[str], names: dict[str, str] | None = None
    ) -> dict[str, str]:
        """Before any bot connects: name the guild, replace the seeded text channels with
        ``channels`` (name → id returned, deterministic for a seed) and rename seeded users
        (``names``: seeded name → display name)."""
        from .control import add_text_channel

        def shape() -> dict[str, str]:
            st = self.state
            st.guild["name"] = guild_name
            for cid, channel in list(st.base_channels.items()):
                if channel["type"] == 0:
                    del st.base_channels[cid]
                    st.channels.pop(cid, None)
                    st.messages.pop(cid, None)
            for ref, name in (names or {}).items():
                st.user(ref).update(username=name, global_name=name)
            return {name: add_text_channel(st, name)["id"] for name in channels}

        return self.call(shape)

    def serve_web(
        self,
        host: str,
        port: int,
        access_token: str,
        user: str,
        home_channel: str | None = None,
        also_as: tuple[str, ...] = (),
    ) -> int:
        """Serve the web client (``webclient``) on ``host:port`` as ``user`` (a seeded name or
        an id; its switcher: also as ``also_as``), reachable with ``access_token``; returns the
        bound port. Raises OSError when the address cannot be bound (e.g. the port is in
        use)."""
        from . import webclient

        assert self._loop is not None

        async def serve() -> int:
            app = webclient.make_app(self.state, access_token, user, home_channel, also_as)
            runner = web.AppRunner(app, access_log=None, handle_signals=False)
            await runner.setup()
            try:
                server = await self._loop.create_server(runner.server, host, port)
            except BaseException:
                await runner.cleanup()
                raise
            self._web_runner = runner
            self._servers[-1] = server
            return server.sockets[0].getsockname()[1]

        return asyncio.run_coroutine_threadsafe(serve(), self._loop).result(10)

    def stop_web(self) -> None:
        """Stop serving the web client (a test that opened it on the shared emulator)."""
        assert self._loop is not None

        async def stop() -> None:
            server = self._servers.pop(-1, None)
            if server is not None:
                server.close()
            if self._web_runner is not None:
                await self._web_runner.cleanup()
                self._web_runner = None

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)

    async def _cleanup(self) -> None:
        if self.state.gateway is not None:
            await self.state.gateway.close_all()
        for server in self._servers.values():
            server.close()
        if self._web_runner is not None:
            await self._web_runner.cleanup()
        if self._runner is not None:
            await self._runner.cleanup()

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop = self._thread = None

    def call(self, fn: Any, *args: Any) -> Any:
        """Run a plain function on the server loop and return its result (for advanced tests)."""
        assert self._loop is not None

        async def wrapper() -> Any:
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(wrapper(), self._loop).result(10)

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
