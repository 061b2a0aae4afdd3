"""What /preview may load: a port or a loopback http(s) URL, never another host."""

from __future__ import annotations

import pytest

from bridge.preview.address import NotLoopback, is_loopback_url, preview_url


@pytest.mark.parametrize(
    ("argument", "url"),
    [
        ("5173", "http://127.0.0.1:5173/"),
        (" 8000 ", "http://127.0.0.1:8000/"),
        ("http://localhost:3000", "http://localhost:3000/"),
        ("http://LOCALHOST:3000/app?x=1", "http://localhost:3000/app?x=1"),
        ("https://127.0.0.1:8443/a/b", "https://127.0.0.1:8443/a/b"),
        ("http://[::1]:8080/", "http://[::1]:8080/"),
        ("http://127.0.0.1/", "http://127.0.0.1/"),
    ],
)
def test_ports_and_loopback_urls_are_loaded(argument: str, url: str) -> None:
    assert preview_url(argument) == url


@pytest.mark.parametrize(
    "argument",
    [
        "http://example.com/",
        "https://10.0.0.5:3000/",
        "http://127.0.0.1.evil.example/",
        "http://localhost@evil.example/",
        "http://evil.example@localhost/",  # credentials: refused too
        "http://127.0.0.1\\@evil.example/",  # Chromium reads \\ as /, urlsplit does not
        "ftp://127.0.0.1/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "127.0.0.1:3000",  # no scheme
        "http://localhost:99999/",
        "http://0.0.0.0:3000/",
        "http://[::ffff:10.0.0.1]/",
        "http://loca\u0142host/",
        "http://localhost:3000/ x",
    ],
)
def test_anything_else_is_refused(argument: str) -> None:
    with pytest.raises(NotLoopback) as refused:
        preview_url(argument)
    assert "loopback" in str(refused.value) or "this machine" in str(refused.value)


@pytest.mark.parametrize("port", ["0", "65536", "123456"])
def test_a_port_out_of_range_is_refused(port: str) -> None:
    with pytest.raises(NotLoopback, match="no TCP port"):
        preview_url(port)


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://127.0.0.1:8000/app.js", True),
        ("ws://localhost:5173/hmr", True),
        ("data:image/png;base64,AAAA", True),
        ("https://cdn.example.com/lib.js", False),
        ("http://169.254.169.254/latest/meta-data", False),
    ],
)
def test_the_browser_requests_loopback_only(url: str, ok: bool) -> None:
    assert is_loopback_url(url) is ok
