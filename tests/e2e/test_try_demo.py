"""``discord-bridge try --demo`` end to end, as a newcomer with nothing set up runs it.

The real command as a subprocess (the real bot, tmux and the pinned Claude Code CLI on PATH
as the user's ``claude``), with a HOME where Claude Code never ran (no ``~/.claude.json``),
no API key or Claude login in the environment and Anthropic's host unreachable; the page in
a headless Chromium. The tour is walked as its first message says: a reply marked as the
demo's, a permission prompt allowed, an edit and its diff, a slow turn with a message queued
behind it, a question answered, a plan approved. Ctrl-C then leaves nothing behind: not in
the HOME, not in the temporary directory, no tmux server.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge import demo_tour
from fake_anthropic.claude_cli import claude_available, claude_binary
from tests.e2e.test_sessions import api_host_unreachable
from tests.e2e.test_try import TryProcess, chromium, open_page, shot

MARK = demo_tour.MARK


@pytest.fixture
def newcomer(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of someone who installed the bridge and Claude Code and nothing else;
    TMPDIR short (the bot's hand-off socket under it must stay within 100 characters)."""
    if not claude_available():
        pytest.fail("Claude Code is missing (./scripts/test.sh installs it)")
    home = tmp_path / "home"
    home.mkdir()
    short_tmp = tempfile.mkdtemp(prefix="dbdemo-")
    kept = ("LANG", "USER", "PLAYWRIGHT_BROWSERS_PATH")
    env = {name: os.environ[name] for name in kept if name in os.environ}
    path = os.pathsep.join([os.path.dirname(claude_binary()), os.environ["PATH"]])
    env.update(HOME=str(home), PATH=path, TMPDIR=short_tmp, **api_host_unreachable())
    yield env
    shutil.rmtree(short_tmp, ignore_errors=True)


def test_the_demo_tour_in_a_browser(newcomer: dict[str, str], tmp_path: Path) -> None:
    assert not any(name.startswith(("ANTHROPIC_", "CLAUDE_CODE_")) for name in newcomer)
    started = TryProcess(tmp_path, newcomer, "--demo", "--port", "0")
    try:
        url = started.url(timeout=60)
        with chromium() as browser:
            page, errors = open_page(browser, url, viewport={"width": 430, "height": 900})
            page.locator("#channels li.active", has_text="# demo").wait_for()
            messages = page.locator("#messages")
            # The model's replies (not the live status message, which quotes a reply)
            marked = messages.locator(".content", has_text=re.compile("^" + re.escape(MARK)))

            def say(text: str) -> None:
                page.fill("#input", text)
                page.press("#input", "Enter")

            # 0. The first message lists what to type.
            welcome = messages.locator(".message", has_text="This is a demo").first
            welcome.wait_for()
            assert "run a command" in welcome.inner_text()

            # 1. A reply, marked as the scripted model's.
            say("hello")
            marked.filter(has_text="Type one of these").first.wait_for()
            shot(page, tmp_path, "1-reply")

            # 2. A permission prompt, allowed.
            say("run a command")
            prompt = messages.locator(".message", has_text="Claude wants to use").last
            prompt.locator(".content", has_text="touch demo.txt").wait_for()
            prompt.get_by_role("button", name="Allow", exact=True).click()
            prompt.locator(".content", has_text="Allowed by").wait_for()
            ran = marked.filter(has_text="demo.txt").last
            ran.wait_for()
            assert "greet.py" in ran.inner_text()  # the command's output: ls of the project

            # 3. An edit: its diff in the prompt, allowed; the turn's Diff, a file's lines.
            say("edit the greeting")
            asking = messages.locator(".message", has_text="Claude wants to use").last
            asking.locator(".content", has_text="greet.py").wait_for()
            assert 'print(f"Hello, {name}!")' in asking.inner_text()
            shot(page, tmp_path, "2-edit-prompt")
            asking.get_by_role("button", name="Allow", exact=True).click()
            marked.filter(has_text="I changed the greeting").wait_for()
            # The turn's status: what changed, and Diff (the command's turn made demo.txt).
            edited = messages.locator(".message", has_text="📝 1 file changed, +1 −1")
            edited.get_by_role("button", name="Diff").click()
            diff = messages.locator(".message.ephemeral", has_text="(this turn)")
            diff.locator("details.select summary").click()
            diff.locator("label", has_text="greet.py").click()
            lines = messages.locator(".message.ephemeral", has_text="💬 greet.py")
            assert 'print(f"Hello, {name}!")' in lines.locator("pre code").inner_text()
            shot(page, tmp_path, "3-diff")

            # 4. A slow turn, and a message queued behind it with >>.
            say("slow")
            messages.locator(".content", has_text=re.compile(r"^⏳ Working")).last.wait_for()
            say(">> and after that, hello")  # while it works, as a person would
            messages.locator(".content", has_text="⏭ Queued").wait_for()
            slow = marked.filter(has_text="That took")
            slow.wait_for(timeout=90_000)
            after = marked.filter(has_text="Type one of these").nth(1)  # the 1st: hello's
            after.wait_for()
            assert after_in_page(page, slow, after), "the queued message came first"

            # 5. A question, answered with a button.
            say("ask me a question")
            question = messages.locator(".message", has_text="Claude has a question").last
            question.get_by_role("button", name="Bonjour").click()
            marked.filter(has_text="Your answer reached the model: Bonjour").wait_for()
            shot(page, tmp_path, "4-question")

            # 6. A plan, in plan mode, approved.
            page.fill("#input", "/mo")  # the picker opens; a click picks /mode, as in Discord
            page.locator("#command-picker div[data-name=mode]").click()
            page.select_option("#command-form select[name=mode]", "plan")
            page.press("#input", "Enter")
            messages.locator(".message.ephemeral", has_text="plan").wait_for()
            say("plan")
            plan = messages.locator(".message", has_text="plan is ready").last
            plan.wait_for()
            assert "Add a farewell" in plan.inner_text()
            shot(page, tmp_path, "5-plan")
            plan.get_by_role("button", name="Approve, review each edit").click()
            marked.filter(has_text="The plan was approved").wait_for()
            assert errors == []
    finally:
        code = started.stop()
    out = started.output()
    assert code == 0, out
    assert "stopped; its throwaway files are removed" in out
    home = Path(newcomer["HOME"])
    assert sorted(p.name for p in home.iterdir()) == []  # no ~/.claude, no ~/.claude.json
    assert os.listdir(newcomer["TMPDIR"]) == []  # the demo's project and set-up are gone
    socket = re.search(r"tmux -L (\S+)", out)
    assert socket, out
    tmux = subprocess.run(["tmux", "-L", socket[1], "ls"], capture_output=True, text=True)
    assert tmux.returncode != 0, tmux.stdout  # Claude Code stopped with its tmux server


def after_in_page(page: object, first: object, second: object) -> bool:
    """``second`` comes after ``first`` in the channel."""
    ids = [loc.evaluate("e => e.closest('.message').dataset.id") for loc in (first, second)]  # type: ignore[attr-defined]
    order = page.locator("#messages .message").evaluate_all(  # type: ignore[attr-defined]
        "els => els.map(e => e.dataset.id)"
    )
    return order.index(ids[0]) < order.index(ids[1])
