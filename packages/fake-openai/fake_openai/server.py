"""A scripted fake of the OpenAI Responses API for driving the real Codex CLI offline.

Runs a ThreadingHTTPServer on 127.0.0.1 in a daemon thread, like ``fake_anthropic``'s. Codex
reaches it through a custom model provider (``base_url = "<FakeOpenAI.base_url>"``,
``wire_api = "responses"``: see ``bridge_testkit.codex_rig``). Each ``POST /v1/responses``
takes the oldest scripted turn; responses use HTTP/1.0, so a stream ends when the connection
closes (the simplest correct SSE framing).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from . import inputs, sse
from .turns import Turn, text

Request = dict[str, Any]

DEFAULT_TEXT = "(fake OpenAI API: no scripted turn left)"
TITLE = "Fake task title"  # the answer to Codex's request for a thread's title
MODEL = "gpt-fake"


@dataclass
class LoggedRequest:
    """Every HTTP request the fake saw (``FakeOpenAI.log``), for debugging."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: str  # "main", "unscripted", a side kind ("thread_title") or "other"
    at: float = field(default_factory=time.monotonic)


class FakeOpenAI:
    """Scripted Responses API. Each ``POST /v1/responses`` consumes one scripted turn; with
    the script empty, ``responder`` (if given) builds the turn from the request, else the
    default text answers."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        default_text: str = DEFAULT_TEXT,
        responder: Callable[[Request], Turn] | None = None,
    ):
        self._address = (host, port)
        self._default_text = default_text
        self._responder = responder
        self._cond = threading.Condition()
        self._queue: deque[Turn] = deque()
        self._requests: list[Request] = []
        self._side_requests: list[Request] = []
        self._unscripted: list[int] = []
        self._failures: list[str] = []
        self._log: list[LoggedRequest] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        """Bind (a free port by default) and serve in a daemon thread."""
        server = ThreadingHTTPServer(self._address, _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: a Codex model provider's ``base_url``."""
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- script ----------------------------------------------------------------------------

    def script(self, *turns: Turn) -> None:
        """Append turns; each request consumes the oldest one."""
        with self._cond:
            self._queue.extend(turns)

    def reset(self) -> None:
        """Forget the script and everything recorded."""
        with self._cond:
            self._queue.clear()
            self._requests.clear()
            self._side_requests.clear()
            self._unscripted.clear()
            self._failures.clear()
            self._log.clear()

    @property
    def pending(self) -> int:
        """Scripted turns not consumed yet."""
        with self._cond:
            return len(self._queue)

    # -- recordings ------------------------------------------------------------------------

    @property
    def requests(self) -> list[Request]:
        """The user thread's ``POST /v1/responses`` bodies in arrival order (a copy)."""
        with self._cond:
            return list(self._requests)

    @property
    def side_requests(self) -> list[Request]:
        """Requests of Codex's side jobs (a thread's title): they consume no turn."""
        with self._cond:
            return list(self._side_requests)

    @property
    def unscripted(self) -> list[int]:
        """Indexes into ``requests`` that found the script empty and got the default text."""
        with self._cond:
            return list(self._unscripted)

    @property
    def failures(self) -> list[str]:
        """Unmet ``expect=`` guards, readable."""
        with self._cond:
            return list(self._failures)

    @property
    def log(self) -> list[LoggedRequest]:
        with self._cond:
            return list(self._log)

    last_user_text = staticmethod(inputs.last_user_text)

    def wait_requests(self, n: int, timeout: float = 30.0) -> list[Request]:
        """Block until at least ``n`` requests arrived; return all of them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._requests) < n:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [repr(inputs.last_user_text(r)[:120]) for r in self._requests]
                    raise TimeoutError(
                        f"fake OpenAI API: waited {timeout:.1f}s for {n} request(s), got"
                        f" {len(self._requests)} (typed: {seen}); turns left:"
                        f" {len(self._queue)}; log: {[(e.method, e.path) for e in self._log][-10:]}"
                    )
                self._cond.wait(remaining)
            return list(self._requests)

    # -- called by the handler -------------------------------------------------------------

    def _record_log(self, entry: LoggedRequest) -> None:
        with self._cond:
            self._log.append(entry)

    def _take_turn(self, body: Request) -> tuple[Turn, str]:
        side = inputs.side_kind(body)
        with self._cond:
            if side is not None:
                self._side_requests.append(body)
                return text(TITLE if side == "thread_title" else self._default_text), side
            self._requests.append(body)
            self._cond.notify_all()
            if self._queue:
                turn, kind = self._queue.popleft(), "main"
            elif self._responder is not None:
                turn, kind = self._responder(body), "main"
            else:
                self._unscripted.append(len(self._requests) - 1)
                return text(self._default_text), "unscripted"
        return self._check_expect(turn, body), kind

    def _check_expect(self, turn: Turn, body: Request) -> Turn:
        seen = inputs.last_user_text(body)
        if turn.expect is None or turn.expect in seen:
            return turn
        failure = f"expected {turn.expect!r} in the typed prompt, got {seen[:500]!r}"
        with self._cond:
            self._failures.append(failure)
        return text(f"(fake OpenAI API: expectation failed: {failure})")


def _make_handler(api: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = api

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    fake: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self._log_request(None, "other")
        if path.endswith("/models"):
            self._send_json(200, {"object": "list", "data": [_model(MODEL)]})
        else:
            self._send_json(404, {"error": {"message": f"no {path} here", "type": "not_found"}})

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._read_json()
        if path.endswith("/responses"):
            turn, kind = self.fake._take_turn(body)
            self._log_request(body, kind)
            self._answer(turn, body)
        else:
            self._log_request(body, "other")
            self._send_json(404, {"error": {"message": f"no {path} here", "type": "not_found"}})

    def _answer(self, turn: Turn, body: Request) -> None:
        if turn.delay:
            time.sleep(turn.delay)
        if turn.status != 200:
            self._send_json(turn.status, turn.error_body, turn.headers)
            return
        events = sse.stream_events(
            f"resp_fake_{uuid.uuid4().hex[:20]}",
            str(body.get("model") or MODEL),
            turn.output(body),
            input_tokens=max(1, len(json.dumps(body.get("input") or [])) // 4),
            chunks=turn.chunks,
            failure=turn.failed,
        )
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self._common_headers(turn.headers)
        self.end_headers()
        try:
            for event in events:
                self.wfile.write(sse.encode_event(event))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # Codex dropped the request (Esc); nothing left to send

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self._common_headers(headers)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _common_headers(self, extra: dict[str, str] | None = None) -> None:
        self.send_header("x-request-id", f"req_fake_{uuid.uuid4().hex[:24]}")
        self.send_header("connection", "close")
        for name, value in (extra or {}).items():
            self.send_header(name, value)

    def _read_json(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            return {"_raw": raw.decode(errors="replace")}

    def _log_request(self, body: Any, kind: str) -> None:
        entry = LoggedRequest(self.command, self.path, dict(self.headers.items()), body, kind)
        self.fake._record_log(entry)


def _model(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": 1767225600, "owned_by": "fake"}
