"""Issue 22 §2: ``/preview`` shows the web app a session serves, **Send to Claude** gives
Claude the screenshots.

Real CLI against the fake Messages API: its Bash tool starts a small HTTP server in the
background (so it is a descendant of the session's pane), real bot, the emulator's slash
command and click, a real headless Chromium (Debian's, through playwright, as the browser test
of ``discord-bridge try``).
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text, text, tool_use
from tests.e2e.test_changes_and_usage import bypass
from tests.e2e.test_control import command
from tests.e2e.test_try import TryProcess, chromium, model_saw, open_page, shot, user_project

PAGE = """<!doctype html><html><head><title>Preview Me</title>
<script>console.error("boom from the page")</script></head>
<body><h1>Hello from the app</h1></body></html>
"""


# Another user's server (nobody's, when the test runs as root) on 127.0.0.1: prints its port.
STRANGER = """
import http.server
class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"<title>Not yours</title>")
server = http.server.HTTPServer(("127.0.0.1", 0), Page)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:16]
    return struct.unpack(">II", data[16:24])


def run_preview(rig, options: dict | None = None) -> dict:
    """``/preview`` in project-a: the message it posts (in the channel, for everyone). A
    second ``/preview`` while it loads is told to wait."""
    since = rig.discord.mark()
    result = rig.discord.run_command(rig.ids["project-a"], "preview", options or {}, user="alice")
    assert result["response_type"] == 5 and not result["ephemeral"], result
    # Chromium takes a second or more to start: the first preview is loading still.
    assert (
        command(rig, "preview") == "⏳ A preview of this session is loading already: wait for it."
    )
    record = rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )
    return record["message"]


def test_preview_finds_the_sessions_server_and_send_to_claude_gives_it_the_screenshots(
    rig,
) -> None:
    site = rig.projects["project-a"]
    (site / "index.html").write_text(PAGE)
    log = site / "server.log"
    bypass(rig, "project-a")
    serve = {
        "command": f"cd {site} && python3 -u -m http.server 0 --bind 127.0.0.1 > {log} 2>&1",
        "description": "Serve the app",
        "run_in_background": True,
    }
    rig.api.script(tool_use("Bash", serve), text("serving it"), echo("Model saw: "))
    rig.start_bot()
    rig.post("serve the app")
    rig.wait_bot_message(content_contains="serving it", timeout=60)

    def port() -> int | None:
        found = re.search(r"port (\d+)", log.read_text()) if log.exists() else None
        return int(found[1]) if found else None

    served = wait_until(port, 30, "the server's port")

    # Another host, however dressed up, is refused at once and loads nothing.
    for url in ("http://example.com/", "http://localhost@169.254.169.254/"):
        refusal = command(rig, "preview", {"target": url})
        assert refusal.startswith("⚠️ `/preview` loads this machine's own pages only"), refusal

    message = run_preview(rig)
    content = message["content"]
    assert content.startswith(f"🖼️ Preview of http://127.0.0.1:{served}/ · HTTP 200"), content
    assert "title: Preview Me" in content
    assert "Console errors (1):" in content and "boom from the page" in content, content
    shots = {a["filename"]: rig.discord.file_bytes(a) for a in message["attachments"]}
    width, height = png_size(shots["preview-phone.png"])  # 390×844 at 2× (a pixel rounded)
    assert width == 780 and 1686 <= height <= 1688, (width, height)
    assert png_size(shots["preview-desktop.png"]) == (1280, 800)

    (button,) = message["components"][0]["components"]
    assert button["label"] == "Send to Claude", button
    stranger_says_whose(rig)
    since = rig.discord.mark()
    clicked = rig.discord.click(message["id"], button["custom_id"], user="alice", timeout=30)
    rig.wait_bot_message(content_contains="Model saw:", since=since, timeout=60)
    told = last_user_text(rig.api.requests[-1])
    assert told.startswith("Here is how the page looks now"), told
    assert "boom from the page" in told and "Preview Me" in told, told
    paths = re.findall(r"Attached file: (\S+)", told)
    assert len(paths) == 2, told
    uploads = Path(rig.state_dir) / "uploads" / rig.ids["project-a"]
    for path in paths:
        saved = Path(path)
        assert saved.parent == uploads, path
        assert saved.read_bytes() in shots.values()  # the very screenshots posted
    assert clicked["ephemeral"], clicked


def stranger_says_whose(rig) -> None:
    """``/preview <port>`` of a server the session did not start: the message says whose."""
    as_root = os.geteuid() == 0
    stranger = subprocess.Popen(
        ["/usr/bin/python3" if as_root else sys.executable, "-c", STRANGER],
        cwd="/",
        stdout=subprocess.PIPE,
        text=True,
        user=65534 if as_root else None,
    )
    try:
        port = int(stranger.stdout.readline())
        content = run_preview(rig, {"target": str(port)})["content"]
    finally:
        stranger.kill()
        stranger.wait()
    assert "title: Not yours" in content, content
    named = "user nobody's program" if as_root else "a program of yours"
    assert content.endswith(
        f"\n-# Port {port} is served by {named}, not by this session's processes."
    ), content


def test_a_preview_from_the_try_page_shows_the_screenshots_and_sends_them(
    rig, tmp_path: Path
) -> None:
    """``discord-bridge try``: ``/preview <port>`` picked on the page, its screenshots shown
    inline, **Send to Claude** clicked: the model gets their paths."""
    project = user_project(rig)
    (project / "index.html").write_text(PAGE)
    rig.api.script(echo("Model saw: "))
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        port = re.search(r"port (\d+)", server.stdout.readline())[1]
        with chromium() as browser:
            page, _ = open_page(browser, started.url(), viewport={"width": 420, "height": 860})
            page.fill("#input", "/previe")
            page.locator("#command-picker div[data-name=preview]").click()
            page.fill("#command-form input[name=target]", port)
            page.press("#command-form input[name=target]", "Enter")
            shown = page.locator("#messages .message", has_text="🖼️ Preview of")
            shown.locator("img[alt='preview-desktop.png']").wait_for()
            assert "title: Preview Me" in shown.inner_text()
            assert shown.locator("img[alt='preview-phone.png']").evaluate("i => i.naturalWidth")
            shot(page, tmp_path, "preview")
            shown.get_by_role("button", name="Send to Claude").click()
            told = model_saw(rig, 1)
        assert told.startswith("Here is how the page looks now"), told
        assert len(re.findall(r"Attached file: \S+\.png", told)) == 2, told
    finally:
        server.kill()
        server.wait()
        assert started.stop() == 0, started.output()
