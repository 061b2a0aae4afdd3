"""``discord-bridge try --agent codex``: Codex on the page, end to end.

The real command as a subprocess, the real bot and tmux, the pinned Codex CLI
(``.cache/codex-<pinned>``) on PATH as the user's ``codex``, and the page in a headless
Chromium. ``--demo``: a HOME where Codex never ran, no OpenAI key in the environment; the
demo's private CODEX_HOME on the fake Responses API, its "Hooks need review" answered from
the page, a reply, a command Codex asks for allowed and its output shown. Ctrl-C then leaves
nothing behind. Without ``--demo``: a clear error when Codex is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge import demo_codex, demo_tour
from bridge_testkit.codex_rig import codex_binary
from tests.e2e.test_codex import end_leftovers
from tests.e2e.test_try import (
    TryProcess,
    chromium,
    open_page,
    run_try,
    short_state_dir,
    shot,
)

__all__ = ["short_state_dir"]  # the fixture, used by name
MARK = demo_tour.MARK


@pytest.fixture
def codex_user(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Someone who installed the bridge and Codex and nothing else (no ~/.codex, no key);
    TMPDIR short (the bot's hand-off socket under it must stay within 100 characters)."""
    home = tmp_path / "home"
    home.mkdir()
    short_tmp = tempfile.mkdtemp(prefix="dbcx-")
    kept = ("LANG", "USER", "PLAYWRIGHT_BROWSERS_PATH")
    env = {name: os.environ[name] for name in kept if name in os.environ}
    path = os.pathsep.join([str(codex_binary().parent), os.environ["PATH"]])
    env.update(HOME=str(home), PATH=path, TMPDIR=short_tmp)
    yield env
    shutil.rmtree(short_tmp, ignore_errors=True)


def test_the_codex_demo_in_a_browser(codex_user: dict[str, str], tmp_path: Path) -> None:
    assert not any(name.startswith(("OPENAI_", "CODEX_")) for name in codex_user)
    started = TryProcess(tmp_path, codex_user, "--demo", "--agent", "codex", "--port", "0")
    try:
        url = started.url(timeout=60)
        out = started.output()
        assert "your Codex (codex-cli " in out
        assert "a private CODEX_HOME" in out and "your ~/.codex" in out
        with chromium() as browser:
            page, errors = open_page(browser, url, viewport={"width": 430, "height": 900})
            page.locator("#channels li.active", has_text="# demo").wait_for()
            messages = page.locator("#messages")
            marked = messages.locator(".content", has_text=re.compile("^" + re.escape(MARK)))

            def say(text: str) -> None:
                page.fill("#input", text)
                page.press("#input", "Enter")

            welcome = messages.locator(".message", has_text="This is a demo of Codex").first
            welcome.wait_for()
            assert "Hooks need review" in welcome.inner_text()

            # 1. The first message starts Codex: its hooks review, answered from the page.
            say("hello")
            review = messages.locator(".message", has_text="Codex is asking in the terminal")
            review.locator(".content", has_text="Hooks need review").wait_for(timeout=90_000)
            shot(page, tmp_path, "codex-1-hooks-review")
            review.get_by_role("button", name="Trust all and continue").click()
            review.locator(".content", has_text="chosen by").wait_for()

            # 2. The held message typed, Codex's reply posted by its Stop hook.
            marked.filter(has_text="I am the demo's scripted model, in Codex").first.wait_for(
                timeout=90_000
            )
            shot(page, tmp_path, "codex-2-reply")

            # 3. A command Codex asks for: Allow, then what it printed.
            say("run a command")
            prompt = messages.locator(".message", has_text="Codex wants to use").last
            prompt.locator(".content", has_text=demo_codex.COMMAND).wait_for(timeout=90_000)
            assert demo_codex.JUSTIFICATION in prompt.inner_text()
            shot(page, tmp_path, "codex-3-permission")
            prompt.get_by_role("button", name="Allow", exact=True).click()
            prompt.locator(".content", has_text="Allowed by").wait_for()
            ran = marked.filter(has_text="After your Allow").last
            ran.wait_for(timeout=90_000)
            assert "greet.py" in ran.inner_text()  # the command's output: ls of the project
            assert "demo.txt" in ran.inner_text()
            shot(page, tmp_path, "codex-4-ran")
            assert errors == []
    finally:
        code = started.stop()
    out = started.output()
    assert code == 0, out
    assert "stopped; its throwaway files are removed" in out
    assert sorted(p.name for p in Path(codex_user["HOME"]).iterdir()) == []  # no ~/.codex
    assert os.listdir(codex_user["TMPDIR"]) == []  # the demo's set-up is gone
    socket = re.search(r"tmux -L (\S+)", out)
    assert socket, out
    tmux = subprocess.run(["tmux", "-L", socket[1], "ls"], capture_output=True, text=True)
    assert tmux.returncode != 0, tmux.stdout  # Codex stopped with its tmux server


def test_try_agent_codex_without_codex_says_how_to_install_it(
    codex_user: dict[str, str], tmp_path: Path
) -> None:
    env = {**codex_user, "PATH": "/usr/bin:/bin"}
    project = tmp_path / "project"
    project.mkdir()
    for args in ((str(project), "--agent", "codex"), ("--demo", "--agent", "codex")):
        done = run_try(env, *args)
        said = done.stdout + done.stderr
        assert done.returncode in (1, 2), said
        assert "`codex`" in said and "not on PATH" in said, said
        assert "npm install -g @openai/codex@" in said, said


def test_try_agent_codex_runs_the_users_own_codex(
    codex_user: dict[str, str], short_state_dir: str, tmp_path: Path
) -> None:
    """Without ``--demo``: the user's CODEX_HOME (here a config whose model provider is the
    fake Responses API, and the hooks ``hooks install`` wrote), said in the banner; its hooks
    review and the reply on the page."""
    from bridge_testkit.codex_rig import config_toml
    from fake_openai import FakeOpenAI, last_user_text, text

    project = Path(codex_user["HOME"]) / "code" / "webshop"
    project.mkdir(parents=True)
    codex_home = Path(codex_user["HOME"]) / ".codex"
    codex_home.mkdir()
    socket = f"dbcx-{os.getpid()}"
    env = {
        **codex_user,
        "FAKE_OPENAI_KEY": "sk-fake",
        "DISCORD_BRIDGE_STATE_DIR": short_state_dir,
        "DISCORD_BRIDGE_TMUX_SOCKET": socket,
    }
    with FakeOpenAI() as api:
        (codex_home / "config.toml").write_text(config_toml(api.base_url, project))
        installed = subprocess.run(
            [sys.executable, "-m", "bridge.cli", "hooks", "install"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert f"installed in {codex_home / 'hooks.json'}" in installed.stdout, installed
        api.script(text("Hello from your own Codex."))
        started = TryProcess(tmp_path, env, str(project), "--agent", "codex", "--port", "0")
        try:
            url = started.url(timeout=60)
            assert f"your CODEX_HOME, {codex_home}" in started.output()
            assert "warning" not in started.output()  # its hooks are in place
            with chromium() as browser:
                page, errors = open_page(browser, url)
                messages = page.locator("#messages")
                page.fill("#input", "hello codex")
                page.press("#input", "Enter")
                review = messages.locator(".message", has_text="Codex is asking in the terminal")
                review.locator(".content", has_text="Hooks need review").wait_for(timeout=90_000)
                review.get_by_role("button", name="Trust all and continue").click()
                reply = messages.locator(".content", has_text="Hello from your own Codex.")
                reply.first.wait_for(timeout=90_000)
                assert errors == []
            assert last_user_text(api.requests[0]) == "hello codex"
        finally:
            assert started.stop() == 0, started.output()
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
            Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)
            end_leftovers(codex_home)
    # Codex trusted the bridge's hooks in the user's own config, as it would in a terminal
    assert "trusted_hash" in (codex_home / "config.toml").read_text()
