"""A scripted fake of the Anthropic Messages API for driving the real Claude Code CLI offline.

Runs a ThreadingHTTPServer on 127.0.0.1 in a daemon thread. Responses use HTTP/1.0 so the
connection closes after each one: that is the simplest correct SSE framing (no chunked encoding).
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

from . import messages, sse
from .turns import Turn, text

Request = dict[str, Any]

DEFAULT_TEXT = "(fake API: no scripted turn left)"
COMPACTION_SUMMARY = "<analysis>x</analysis>\n<summary>FAKE SUMMARY</summary>"
SIDE_TEXT = "(fake API: side request)"
STATE_DONE = '{"state":"done","detail":"finished","tempo":"idle","output":{"result":"done"}}'


@dataclass
class LoggedRequest:
    """Every HTTP request the fake saw, for debugging (``FakeAnthropic.log``)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: str  # "main", "unscripted", a side kind, or "other"
    at: float = field(default_factory=time.monotonic)
    served: float | None = None  # ``time.monotonic()`` once the whole answer was written


class FakeAnthropic:
    """Scripted Messages API. Each main ``POST /v1/messages`` consumes one scripted turn;
    with the script empty, ``responder`` (if given) builds the turn from the request (a model
    that reacts to what was typed: ``discord-bridge try --demo``), else the default text."""

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
        self._admitted: str | None = None  # the one generation of clients served (admit_only)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        """Bind (a free port by default) and serve in a daemon thread."""
        server = ThreadingHTTPServer(self._address, _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="fake-anthropic"
        )
        self._thread.daemon = True
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

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` — the value for ANTHROPIC_BASE_URL."""
        if self._server is None:
            raise RuntimeError("FakeAnthropic is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def url_for(self, generation: str) -> str:
        """A base URL that marks its clients as ``generation``'s (``/g/<generation>``): see
        :meth:`admit_only`."""
        return f"{self.base_url}/g/{generation}"

    def admit_only(self, generation: str) -> None:
        """From now on, a Messages request through another generation's :meth:`url_for` gets
        a final 401 and takes no turn: a Claude Code an earlier test started (its request in
        flight while that test ended) cannot take this test's scripted turn. Requests through
        the plain :attr:`base_url` are served as always."""
        with self._cond:
            self._admitted = generation

    @property
    def admitted(self) -> str | None:
        """The generation :meth:`admit_only` named last (None: every client is served)."""
        with self._cond:
            return self._admitted

    def _stale(self, generation: str | None) -> bool:
        with self._cond:
            return generation is not None and generation != self._admitted

    # -- script ----------------------------------------------------------------------------

    def script(self, *turns: Turn) -> None:
        """Append turns; each main request consumes the oldest one."""
        with self._cond:
            self._queue.extend(turns)

    def replace_script(self, *turns: Turn) -> None:
        with self._cond:
            self._queue.clear()
            self._queue.extend(turns)

    def reset(self) -> None:
        """Forget the script and everything recorded."""
        with self._cond:
            for store in (self._queue, self._requests, self._side_requests):
                store.clear()
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
        """Main request bodies in arrival order (a copy)."""
        with self._cond:
            return list(self._requests)

    @property
    def side_requests(self) -> list[Request]:
        """Compaction, quota-probe and tool-less request bodies (they consume no turn)."""
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

    last_user_text = staticmethod(messages.last_user_text)

    def wait_requests(self, n: int, timeout: float = 30.0) -> list[Request]:
        """Block until at least ``n`` main requests arrived; return all of them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._requests) < n:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(self._describe_wait(n, timeout))
                self._cond.wait(remaining)
            return list(self._requests)

    def _describe_wait(self, n: int, timeout: float) -> str:
        seen = [repr(messages.last_user_text(r)[:120]) for r in self._requests]
        return (
            f"fake API: waited {timeout:.1f}s for {n} main request(s), got {len(self._requests)}"
            f" (last user texts: {seen}); side requests: {len(self._side_requests)};"
            f" scripted turns left: {len(self._queue)}; HTTP log: "
            f"{[(e.method, e.path, e.kind) for e in self._log][-10:]}"
        )

    # -- called by the handler -------------------------------------------------------------

    def _record_log(self, entry: LoggedRequest) -> None:
        with self._cond:
            self._log.append(entry)

    def _take_turn(self, body: Request) -> tuple[Turn, str]:
        """Classify the request, record it, and pick its turn (under the lock)."""
        kind = messages.side_kind(body)
        with self._cond:
            if kind is not None:
                self._side_requests.append(body)
                self._cond.notify_all()
                return _side_turn(kind), kind
            self._requests.append(body)
            self._cond.notify_all()
            if self._queue:
                return self._queue.popleft(), "main"
            if self._responder is not None:
                return self._responder(body), "main"
            self._unscripted.append(len(self._requests) - 1)
            return text(self._default_text), "unscripted"

    def _check_expect(self, turn: Turn, body: Request) -> Turn:
        if turn.expect is None:
            return turn
        seen = messages.last_user_text(body)
        if turn.expect in seen:
            return turn
        failure = f"expected {turn.expect!r} in last user text, got {seen[:500]!r}"
        with self._cond:
            self._failures.append(failure)
        return text(f"(fake API: expectation failed: {failure})")


def _side_turn(kind: str) -> Turn:
    if kind == "state_classifier":  # every background session is done (JSON, as asked)
        return text(STATE_DONE)
    return text(COMPACTION_SUMMARY if kind == "compaction" else SIDE_TEXT)


def _generation_of(path: str) -> tuple[str | None, str]:
    """``/g/<generation>/v1/messages`` → (generation, ``/v1/messages``); other paths as are."""
    if not path.startswith("/g/"):
        return None, path
    generation, _, rest = path[3:].partition("/")
    return generation, "/" + rest


def _make_handler(api: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = api

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    fake: FakeAnthropic

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def do_GET(self) -> None:
        path = _generation_of(urlsplit(self.path).path)[1]
        self._log_request(None, "other")
        if path == "/v1/models":
            self._send_json(200, {"data": [_model("claude-opus-5-5")], "has_more": False})
        elif path.startswith("/v1/models/"):
            self._send_json(200, _model(path.rsplit("/", 1)[-1]))
        else:
            self._send_json(200, {})

    def do_POST(self) -> None:
        generation, path = _generation_of(urlsplit(self.path).path)
        body = self._read_json()
        if path == "/v1/messages" and self.fake._stale(generation):
            self._log_request(body, "stale")
            self._send_json(401, sse.error_body("authentication_error", "an earlier test's"))
        elif path == "/v1/messages":
            self._answer_messages(body)
        elif path == "/v1/messages/count_tokens":
            self._log_request(body, "count_tokens")
            self._send_json(200, {"input_tokens": messages.estimate_tokens(body)})
        else:
            self._log_request(body, "other")
            self._send_json(200, {})

    def _answer_messages(self, body: Request) -> None:
        turn, kind = self.fake._take_turn(body)
        entry = self._log_request(body, kind)
        try:
            self._answer_turn(self.fake._check_expect(turn, body), body)
        finally:
            entry.served = time.monotonic()  # what a latency bench counts from

    def _answer_turn(self, turn: Turn, body: Request) -> None:
        if turn.delay:
            time.sleep(turn.delay)
        if turn.status != 200:
            body_out = sse.error_body(turn.error_type, turn.error_message)
            self._send_json(turn.status, body_out, turn.headers)
            return
        blocks = turn.content(body)
        message = sse.build_message(
            blocks,
            model=body.get("model", "claude-opus-5-5"),
            stop_reason=turn.stop_reason,
            input_tokens=messages.estimate_tokens(body),
            message_id=sse.new_message_id(),
        )
        if body.get("safeguards") and not turn.auto_mode_unchecked:  # auto mode asks for
            # its safety check's verdicts (none: a gateway that drops the field)
            message["safeguard_results"] = sse.safeguard_results(blocks, turn.auto_mode_refusal)
        if body.get("stream"):
            self._send_stream(message, turn.chunks, turn.chunk_delay, turn.headers)
        else:
            self._send_json(200, message, turn.headers)

    def _send_stream(
        self,
        message: dict[str, Any],
        chunks: int,
        pause: float = 0.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self._common_headers(headers)
        self.end_headers()
        try:
            for name, data in sse.stream_events(message, chunks):
                self.wfile.write(sse.encode_event(name, data))
                self.wfile.flush()
                if pause and name == "content_block_delta":
                    time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError):
            pass  # The CLI aborted the request (Escape); nothing left to do.

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
        self.send_header("request-id", f"req_fake_{uuid.uuid4().hex[:24]}")
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

    def _log_request(self, body: Any, kind: str) -> LoggedRequest:
        entry = LoggedRequest(self.command, self.path, dict(self.headers.items()), body, kind)
        self.fake._record_log(entry)
        return entry


def _model(model_id: str) -> dict[str, Any]:
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id,
        "created_at": "2026-01-01T00:00:00Z",
    }
