"""Without playwright or a Chromium, /preview says in one line how to add them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from bridge.preview.browser import HOW_TO_ADD

# Run apart: playwright hidden from the import system (as in a venv without the extra), or
# no Chromium anywhere (no Debian package on the paths looked at, none on PATH, and
# playwright's own download directory empty).
WITHOUT = textwrap.dedent(
    """
    import os, sys
    from bridge.preview import browser
    if sys.argv[1] == "playwright":
        sys.modules["playwright"] = None
    else:
        browser.DEBIAN_CHROMIUM = ()
        os.environ["PATH"] = "/nonexistent"
        os.environ["PLAYWRIGHT_BROWSERS_PATH"] = sys.argv[2]
    try:
        browser.capture("http://127.0.0.1:9/", time_limit=10)
    except browser.NoBrowser as err:
        print(err)
    """
)


def run_without(what: str, tmp: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT, what, tmp], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_without_playwright_the_answer_says_how_to_install_it() -> None:
    assert run_without("playwright") == HOW_TO_ADD
    assert "./install.sh --preview" in HOW_TO_ADD and "apt install chromium" in HOW_TO_ADD


def test_without_a_chromium_the_answer_says_how_to_get_one(tmp_path) -> None:
    assert run_without("chromium", str(tmp_path)) == HOW_TO_ADD
