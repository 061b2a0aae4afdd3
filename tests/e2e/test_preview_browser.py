"""``/preview``'s Chromium reaches loopback and nothing else, and runs in its sandbox.

A real Chromium (Debian's, through playwright) loads pages of a real server on 127.0.0.1 that
redirect to, or open a WebSocket, a fetch, a WebRTC connection (STUN) and a WebTransport
session to, a refused host. The refused host is 127.0.0.2: loopback to the kernel, so
nothing here ever leaves the machine even if the browser were not confined, but not a
host ``/preview`` loads. It listens (TCP and UDP) and records every connection and datagram:
none may come. The browser's own log says each request failed at the proxy, before any
connection to the host.
"""

from __future__ import annotations

import http.server
import os
import queue
import socket
import subprocess
import threading
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from bridge.bot.reach.preview import preview_text
from bridge.preview import browser, confine

REFUSED_HOST = "127.0.0.2"
BEFORE_A_CONNECTION = (
    "net::ERR_PROXY_CONNECTION_FAILED",  # the dead proxy refused it
    "net::ERR_TUNNEL_CONNECTION_FAILED",
    "net::ERR_BLOCKED_BY_CLIENT",  # playwright's route aborted it first
)


class Listener:
    """The refused host: a page on TCP, a socket on UDP, and what reached them."""

    def __init__(self) -> None:
        self.tcp = socket.create_server((REFUSED_HOST, 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((REFUSED_HOST, 0))
        self.port = self.tcp.getsockname()[1]
        self.udp_port = self.udp.getsockname()[1]
        self.reached: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()
        threading.Thread(target=self._receive, daemon=True).start()

    def _accept(self) -> None:
        page = b"<title>Refused host</title><h1>not to be seen</h1>"
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"
        while True:
            try:
                client, peer = self.tcp.accept()
            except OSError:
                return
            self.reached.append(f"tcp from {peer}")
            with client:
                client.recv(4096)
                client.sendall(head + page)

    def _receive(self) -> None:
        while True:
            try:
                _, peer = self.udp.recvfrom(4096)
            except OSError:
                return
            self.reached.append(f"udp from {peer}")

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


def app_page(refused: Listener, port: int) -> str:
    """A page that tries every way out, reports what it saw to ``/done``, and holds its
    load event (``/hold``) until then: the capture sees the page after every attempt."""
    host, stun = f"{REFUSED_HOST}:{refused.port}", f"stun:{REFUSED_HOST}:{refused.udp_port}"
    return f"""<!doctype html><title>App</title><script>
const seen = {{}};
const attempts = [
  new Promise(done => {{
    const ws = new WebSocket("ws://{host}/hmr");
    ws.onopen = () => {{ seen.ws = "open"; done(); }};
    ws.onclose = () => {{ seen.ws = seen.ws || "closed"; done(); }};
  }}),
  fetch("http://{host}/api").then(() => seen.fetch = "ok", () => seen.fetch = "failed"),
  fetch("http://localhost:{port}/ping").then(r => r.text()).then(t => seen.localhost = t,
    () => seen.localhost = "failed"),
  new Promise(done => {{
    const pc = new RTCPeerConnection({{iceServers: [{{urls: "{stun}"}}]}});
    seen.candidates = 0;
    pc.onicecandidate = e => {{ if (e.candidate) seen.candidates++; else done(); }};
    pc.createDataChannel("x");
    pc.createOffer().then(offer => pc.setLocalDescription(offer));
  }}),
  new Promise(done => {{
    const wt = new WebTransport("https://{REFUSED_HOST}:{refused.udp_port}/");
    wt.ready.then(() => {{ seen.wt = "open"; done(); }}, () => {{ seen.wt = "failed"; done(); }});
  }}),
];
// A fallback for a browser that is not confined (STUN and QUIC then wait for answers).
const patience = new Promise(done => setTimeout(() => {{ seen.timeout = 1; done(); }}, 4000));
Promise.race([Promise.all(attempts), patience]).then(
  () => fetch("/done?" + new URLSearchParams(seen)));
</script><img src="/hold">"""


@pytest.fixture
def servers() -> Iterator[tuple[str, Listener, list[dict]]]:
    """(the loopback app's base URL, the refused host, the reports of the app's pages)."""
    refused = Listener()
    reports: list[dict] = []
    finished: queue.Queue[None] = queue.Queue()

    class App(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = urlsplit(self.path)
            if path.path == "/redirect":
                self.send_response(302)
                self.send_header("Location", f"http://{REFUSED_HOST}:{refused.port}/")
                self.end_headers()
                return
            if path.path == "/done":
                reports.append({k: v[0] for k, v in parse_qs(path.query).items()})
                finished.put(None)
            if path.path == "/hold":
                finished.get(timeout=15)
            if path.path == "/seccomp":  # asked while the page loads: its renderer is up
                reports.append({"seccomp": " ".join(renderers_seccomp())})
            pages = {
                "/app": app_page(refused, port),
                "/ping": "pong",
                "/sandboxed": '<title>Sandboxed</title><img src="/seccomp">',
            }
            body = pages.get(path.path, "")
            self.send_response(200)
            self.send_header("Content-Type", "text/html" if body else "image/gif")
            self.send_header("Access-Control-Allow-Origin", "*")  # /ping, from localhost
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    app = http.server.ThreadingHTTPServer(("127.0.0.1", 0), App)
    port = app.server_address[1]
    threading.Thread(target=app.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}", refused, reports
    finally:
        app.shutdown()
        app.server_close()
        refused.close()


def test_a_redirect_to_another_host_shows_nothing_and_reaches_nothing(servers) -> None:
    base, refused, _ = servers
    with pytest.raises(browser.LeftLoopback) as left:
        browser.capture(f"{base}/redirect")
    assert str(left.value) == (
        f"⚠️ {base}/redirect sent the browser to http://{REFUSED_HOST}:{refused.port}/, "
        "another host: `/preview` shows this machine's own pages only, so nothing of it is "
        "shown."
    )
    assert refused.reached == []


def test_websocket_fetch_webrtc_and_webtransport_to_another_host_never_connect(
    servers,
) -> None:
    base, refused, reports = servers
    shot = browser.capture(f"{base}/app")
    assert shot.title == "App" and shot.status == 200
    assert len(reports) == 2, reports  # the phone's load and the desktop's
    for report in reports:
        # Every attempt ended refused, none timed out; no ICE candidate at all (no UDP).
        assert report == {
            "ws": "closed",
            "fetch": "failed",
            "localhost": "pong",
            "candidates": "0",
            "wt": "failed",
        }, report
    host = f"{REFUSED_HOST}:{refused.port}"
    assert set(shot.refused) >= {f"ws://{host}/hmr", f"http://{host}/api"}, shot.refused
    for url, why in shot.refused.items():
        assert any(code in why for code in BEFORE_A_CONNECTION), (url, why)
    assert refused.reached == []  # neither TCP nor UDP: the browser's log told the truth
    message = preview_text(shot)
    assert f"-# Not loaded, another host ({len(shot.refused)}): " in message, message
    assert f"ws://{host}/hmr (" in message


def test_the_three_loopback_names_load_directly() -> None:
    class Six(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"<title>Six</title>")

        def log_message(self, *args: object) -> None:
            pass

    server = Six(("::1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        shot = browser.capture(f"http://[::1]:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()
    assert (shot.status, shot.title, shot.refused) == (200, "Six", {})


def sandbox_possible() -> bool:
    """Whether this machine gives an unprivileged user namespace (the sandbox needs one)."""
    try:
        return subprocess.run(["unshare", "--user", "true"], timeout=10).returncode == 0
    except OSError:
        return False


def renderers_seccomp() -> list[str]:
    """The ``Seccomp`` mode of each Chromium renderer this test started (2: a filter)."""
    mine, modes = os.getpid(), []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if b"--type=renderer" not in handle.read():
                    continue
            with open(f"/proc/{name}/status") as handle:
                status = dict(line.split(":", 1) for line in handle if ":" in line)
        except (OSError, ValueError):
            continue
        if mine in ancestors(int(name)):
            modes.append(status["Seccomp"].strip())
    return modes


def ancestors(pid: int) -> list[int]:
    found = []
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        found.append(pid)
    return found


def test_the_browser_runs_in_its_sandbox_where_the_machine_allows_it(servers) -> None:
    """Looked at from outside while the page loads: the renderer's system calls filtered."""
    base, _, reports = servers
    shot = browser.capture(f"{base}/sandboxed")
    seen = [report["seccomp"] for report in reports]
    assert len(seen) == 2 and all(seen), seen  # one renderer at least, for each load
    if sandbox_possible():
        assert all(set(modes.split()) == {"2"} for modes in seen), seen
        assert shot.note == ""
    else:
        assert shot.note.startswith("Chromium ran without its sandbox here: "), shot.note
        assert "without its sandbox" in preview_text(shot)


def test_without_a_sandbox_the_preview_says_so(servers, monkeypatch) -> None:
    """As root without ``unshare`` (no user namespace to run in), Chromium runs unsandboxed,
    and the channel is told."""
    if os.geteuid() != 0:
        pytest.skip("the user namespace is what root needs; as another user Chromium needs none")
    which = confine.shutil.which
    monkeypatch.setattr(confine.shutil, "which", lambda n: None if n == "unshare" else which(n))
    base, _, reports = servers
    shot = browser.capture(f"{base}/sandboxed")
    assert [report["seccomp"].split()[0] for report in reports] == ["0", "0"]
    why = "Chromium ran without its sandbox here: the bot runs as root and `unshare` is missing"
    assert shot.note == why
    assert preview_text(shot).endswith(f"\n-# {why}")
