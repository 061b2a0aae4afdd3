"""``discord-bridge try`` end to end: the real command, the real Claude Code CLI (against the
fake Messages API) in tmux with the installed hooks, and the page in a real headless Chromium.

The browser test does what a new user does: open the printed URL, type a message and read
the reply, click **Allow** on a permission prompt, answer a question through a select and
another through the **Other…** modal, upload a file, and review a turn's change on a phone's
screen: a comment on a line of its diff, sent to Claude. It asserts what the page shows, what the
model received and what landed on disk, and saves a screenshot of each step in the test's
directory (and in ``$TRY_SCREENSHOTS`` when set: that is how docs/try.png is made).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from bridge import tryout_setup
from bridge.claude.screen import is_busy
from bridge.preview.browser import find_chromium, launch_args
from bridge.tmux import TmuxSessions
from bridge_testkit import QUESTIONS, BridgeRig
from bridge_testkit.elicit_server import received
from bridge_testkit.gitrepo import git
from bridge_testkit.rig import REPO, wait_until
from fake_anthropic import Turn, echo, last_user_text, text, tool_use
from fake_anthropic.claude_cli import TmuxServer, prepare_home, screen_is_idle
from tests.e2e.test_elicitation import with_server

# The Chromium /preview drives (Debian's package here), with the same flags.
CHROMIUM = find_chromium() or "/usr/bin/chromium"
CHROMIUM_ARGS = launch_args()
REPLY = "**Hello** from the fake model <b>not html</b>\n```py\nprint('hi')\n```"
GREETING = "printf 'def greet():\\n    print(\"hello\")\\n    return 1\\n' > greet.py"


class TryProcess:
    """``python -m bridge.cli try`` in the background; its output goes to a file."""

    def __init__(self, tmp: Path, env: dict[str, str], *args: str, browser: bool = False) -> None:
        self.out = tmp / f"try-{time.monotonic_ns()}.out"
        flags = [] if browser else ["--no-browser"]
        with open(self.out, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bridge.cli", "try", *flags, *args],
                env=env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def url(self, timeout: float = 20.0) -> str:
        def printed() -> str | None:
            assert self.proc.poll() is None, f"try exited:\n{self.output()}"
            found = re.search(r"open\s+(http://\S+)", self.output())
            return found[1] if found else None

        return wait_until(printed, timeout, "the page's URL")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # Ctrl-C
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()


def shot(page: object, tmp_path: Path, name: str) -> None:
    """A screenshot of the page in the test's directory (and in ``$TRY_SCREENSHOTS``)."""
    shots = tmp_path / "screenshots"
    shots.mkdir(exist_ok=True)
    # (transitions finished: a layout switched by a resize is caught where it ends)
    page.screenshot(path=str(shots / f"{name}.png"), animations="disabled")  # type: ignore[attr-defined]
    extra = os.environ.get("TRY_SCREENSHOTS")
    if extra:
        shutil.copy(shots / f"{name}.png", Path(extra) / f"{name}.png")


def page_client(url: str) -> httpx.Client:
    """The page's API, as the page calls it: the token of the printed address in a header."""
    base, token = url.split("/#token=")
    return httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {token}"})


def run_try(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bridge.cli", "try", "--no-browser", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )


@contextmanager
def chromium() -> Iterator[object]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing (./scripts/test.sh installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: object, url: str, **options: object) -> tuple[object, list[str]]:
    """The try page at ``url`` in a new page (``options``: playwright's, e.g. a viewport),
    online, and the list its script errors and failed requests are gathered in."""
    page = browser.new_page(**{"viewport": {"width": 1100, "height": 760}, **options})  # type: ignore[attr-defined]
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    page.goto(url)
    page.locator("#status.online").wait_for()
    return page, errors


def read_the_upload() -> Turn:
    """Claude reads the file the user attached (its path is in the prompt)."""

    def build(request: dict) -> list[dict]:
        path = re.search(r"Attached file: (\S+)", last_user_text(request))
        assert path, "no attached file in the prompt"
        return [
            {
                "type": "tool_use",
                "id": f"toolu_read_{time.time_ns()}",
                "name": "Read",
                "input": {"file_path": path[1]},
            }
        ]

    return Turn(build=build, stop_reason="tool_use")


def model_saw(rig: BridgeRig, n: int) -> str:
    return last_user_text(rig.api.wait_requests(n, timeout=60)[n - 1])


def user_project(rig: BridgeRig) -> Path:
    """A project where a user keeps one, ``~/code/webshop`` (HOME being the rig's), trusted by
    Claude Code like the rig's own: the screenshots (docs/try.png) show what a user sees."""
    project = rig.claude_home / "code" / "webshop"
    project.mkdir(parents=True)
    prepare_home(rig.claude_home, [project], version=rig.claude_version)
    return project


@pytest.fixture
def short_state_dir() -> Iterator[str]:
    """A state dir with a short path, for ``try``'s runtime dir (``<state>/try/<project>-<hash>/
    runtime``): the hooks reach try's bot through a socket there, whose path may be 100 bytes at
    most, and under pytest-xdist the test's own (``/tmp/pytest-of-root/pytest-N/popen-gwN/
    test_…0/state/…/runtime/bot.sock``, 107) is longer: every hook's message would wait in
    the outbox for a bot that never hears of it (try's hooks do not post directly)."""
    path = tempfile.mkdtemp(prefix="dbtry-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_try_in_a_browser(short_state_dir: str, rig: BridgeRig, tmp_path: Path) -> None:
    project = user_project(rig)
    rig.api.script(
        text(REPLY),
        tool_use("Bash", {"command": "touch allowed.txt", "description": "Create a file"}),
        echo(),
        tool_use("AskUserQuestion", QUESTIONS),
        echo(),
        read_the_upload(),
        echo(),
        tool_use("mcp__elic__ask_form", {}),
        echo(),
        tool_use("Bash", {"command": GREETING, "description": "Add a greeting"}),
        text("Added a greeting"),
        echo(prefix="Review: "),
        text("Back again"),
    )
    with_server(rig, project)  # an MCP server in the project that asks for input
    env = {**rig.env, "DISCORD_BRIDGE_STATE_DIR": short_state_dir}
    started = TryProcess(tmp_path, env, str(project), "--port", "0")
    try:
        url = started.url()
        assert url.startswith("http://127.0.0.1:") and "/#token=" in url
        with chromium() as browser:
            page, errors = open_page(browser, url)
            page.locator("#channels li.active", has_text="# webshop").wait_for()
            assert page.locator("#channels li", has_text="# control-panel").count() == 1
            messages = page.locator("#messages")
            # The model's replies (not the live status message, which quotes a reply)
            model_replies = messages.locator(".content", has_text=re.compile(r"^Model saw:"))

            # 1. A message and the model's reply, Markdown rendered and HTML escaped.
            page.fill("#input", "hello there")
            page.press("#input", "Enter")
            # (not the live status message, which quotes the reply while the turn runs)
            reply = messages.locator(".content", has_text=re.compile(r"^Hello from the fake"))
            reply.wait_for()
            assert reply.locator("strong").inner_text() == "Hello"
            assert reply.locator("pre code").inner_text() == "print('hi')"
            assert "<b>not html</b>" in reply.inner_text()
            assert reply.locator("b").count() == 0
            assert "hello there" in model_saw(rig, 1)
            shot(page, tmp_path, "1-reply")

            # 2. A permission prompt, allowed with its button.
            page.fill("#input", "make a file")
            page.press("#input", "Enter")
            prompt = messages.locator(".message", has_text="Claude wants to use")
            prompt.wait_for()
            assert "touch allowed.txt" in prompt.inner_text()
            shot(page, tmp_path, "2-permission")
            prompt.get_by_role("button", name="Allow", exact=True).click()
            prompt.locator(".content", has_text="Allowed by").wait_for()
            assert "[tool_result]" in model_saw(rig, 3)
            assert (project / "allowed.txt").exists()
            model_replies.first.wait_for()

            # 3. Questions: features through the select, the database through Other….
            page.fill("#input", "set up the app")
            page.press("#input", "Enter")
            questions = messages.locator(".message", has_text="Claude has questions")
            questions.wait_for()
            questions.locator("details.select summary").click()
            questions.locator("label", has_text="Auth").click()
            questions.locator("label", has_text="Billing").click()
            shot(page, tmp_path, "3-select")
            questions.get_by_role("button", name="Confirm").click()
            questions.locator(".content", has_text="Features: Auth, Billing").wait_for()
            questions.get_by_role("button", name="Other…").click()
            modal = page.locator("#modal")
            modal.wait_for()
            modal.locator("input, textarea").first.fill("CockroachDB, please")
            shot(page, tmp_path, "4-other-modal")
            modal.get_by_role("button", name="Submit").click()
            saw = model_saw(rig, 5)
            assert '"Which database should we use?"="CockroachDB, please"' in saw, saw
            assert '"Which features do you want?"="Auth, Billing"' in saw, saw
            questions.locator(".content", has_text="Answered by").wait_for()
            shot(page, tmp_path, "5-answered")

            # 4. A file uploaded with a message: saved for Claude, shown as a download.
            page.set_input_files(
                "#file-input",
                files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"remember\n"}],
            )
            page.locator("#pending-files", has_text="notes.txt").wait_for()
            page.fill("#input", "read my notes")
            page.press("#input", "Enter")
            saw = model_saw(rig, 6)
            found = re.search(r"Attached file: (\S+notes\.txt)", saw)
            assert found, saw
            assert Path(found[1]).read_bytes() == b"remember\n"
            assert "remember" in model_saw(rig, 7)  # Claude could read it (no deny rule)
            sent = messages.locator(".message", has_text="read my notes")
            link = sent.locator("a.attachment", has_text="notes.txt")
            link.wait_for()
            download = page.request.get(page.url.rstrip("/") + link.get_attribute("href"))
            assert download.body() == b"remember\n"
            model_replies.filter(has_text="remember").wait_for()
            shot(page, tmp_path, "6-upload")

            # 5. An MCP server's form: a select in the message, a modal of two fields, Send.
            page.fill("#input", "describe the project")
            page.press("#input", "Enter")
            form = messages.locator(".message", has_text="asks for your input")
            form.wait_for()
            form.locator("details.select summary", has_text="Colour").click()
            form.locator("label", has_text="green").click()
            form.locator(".content", has_text="Colour: green").wait_for()
            form.get_by_role("button", name="Fill in…").click()
            modal = page.locator("#modal")
            modal.wait_for()
            modal.locator("[name=f0]").fill("demo")
            modal.locator("[name=f2]").fill("3")
            shot(page, tmp_path, "8-form-modal")
            modal.get_by_role("button", name="Submit").click()
            form.locator(".content", has_text="count: 3").wait_for()
            form.get_by_role("button", name="Send").click()
            form.locator(".content", has_text="Sent by").wait_for()
            model_replies.filter(has_text="ELICITATION RESULT").wait_for()
            sent = {"name": "demo", "color": "green", "count": 3}
            assert received(rig.tmp / "elic.log") == [{"action": "accept", "content": sent}]

            # 6. A slash command with an option, picked and filled in like Discord's picker.
            page.fill("#input", "/pe")
            page.locator("#command-picker div[data-name=peek]").click()
            page.fill("#command-form input[name=lines]", "5")
            page.press("#command-form input[name=lines]", "Enter")
            answer = messages.locator(".message.ephemeral", has=page.locator("pre code"))
            answer.wait_for()
            assert "only you can see this" in answer.inner_text()
            assert answer.locator("pre code").inner_text().strip()
            shot(page, tmp_path, "7-command")
            page.fill("#input", "/project l")  # a subcommand, as Discord's picker lists it
            page.locator("#command-picker div[data-name='project list']").click()
            page.press("#input", "Enter")
            listed = messages.locator(".message.ephemeral", has_text=str(project))
            listed.wait_for()
            page.fill("#input", "/project r")  # an option the bot suggests values for
            page.locator("#command-picker div[data-name='project remove']").click()
            page.fill("#command-form input[name=project]", "web")
            page.locator("#suggest-project option[value='webshop']").wait_for(state="attached")
            page.press("#command-form input[name=project]", "Escape")
            assert page.locator("#command-form").is_hidden()  # nothing was removed

            # 7. A review from a phone: the turn's Diff, a file, a comment on a line, the
            # draft review, Send review: one prompt that quotes the line.
            git(project, "init", "-q")
            git(project, "add", "-A")
            git(project, "commit", "-qm", "start")
            page.set_viewport_size({"width": 430, "height": 900})
            page.fill("#input", "add a greeting")
            page.press("#input", "Enter")
            asking = messages.locator(".message", has_text="Claude wants to use").last
            asking.locator(".content", has_text="greet.py").wait_for()
            asking.get_by_role("button", name="Allow", exact=True).click()
            turn = messages.locator(".message", has=page.get_by_role("button", name="Diff"))
            turn.last.get_by_role("button", name="Diff").click()
            diff = messages.locator(".message.ephemeral", has_text="(this turn)")
            diff.locator("details.select summary").click()
            diff.locator("label", has_text="greet.py").click()
            lines = messages.locator(".message.ephemeral", has_text="💬 greet.py")
            assert '2 │     print("hello")' in lines.locator("pre code").inner_text()
            lines.get_by_role("button", name="Comment…").click()
            modal.wait_for()
            page.fill("#modal-lines", "2")
            page.fill("#modal-text", "Say hello in French")
            shot(page, tmp_path, "9-review-comment")
            modal.get_by_role("button", name="Submit").click()
            draft = messages.locator(".message:not(.ephemeral)", has_text="Draft review")
            draft.wait_for()
            assert "greet.py 2 — Say hello in French" in draft.inner_text()
            shot(page, tmp_path, "10-review-draft")
            same = page.locator("#m-" + draft.get_attribute("data-id"))  # edited in place
            draft.get_by_role("button", name="Send review (1)").click()
            same.locator(".content", has_text="Review sent").wait_for()
            saw = model_saw(rig, 12)
            quoted = '1. greet.py, line 2:\n   2 |     print("hello")\n   Comment: Say hello'
            assert quoted in saw, saw
            shot(page, tmp_path, "11-review-sent")
            assert errors == []  # no script error, no failed request on the way
    finally:
        code = started.stop()
    assert code == 0, started.output()
    assert "stopped; Claude Code keeps running in tmux" in started.output()

    # Ctrl-C left Claude Code running; the next `try` of the directory takes it up again.
    again = TryProcess(tmp_path, env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            page.goto(again.url())
            page.locator("#status.online").wait_for()
            page.fill("#input", "still there?")
            page.press("#input", "Enter")
            page.locator(".content", has_text=re.compile(r"^Back again")).wait_for()
        same_conversation = str(rig.api.wait_requests(13, timeout=60)[12])
        assert "read my notes" in same_conversation  # the earlier turns came along
    finally:
        assert again.stop() == 0, again.output()
    windows = subprocess.run(
        ["tmux", "-L", rig.socket, "list-windows", "-t", "discord-bridge-try"],
        capture_output=True,
        text=True,
    )
    assert windows.returncode == 0 and windows.stdout.strip(), "Claude Code's window is gone"


def test_the_spend_guard_on_the_page_warns_then_stop_and_continue_are_clicked(
    short_state_dir: str, rig: BridgeRig, tmp_path: Path
) -> None:
    """``discord-bridge try --budget USD``: the page shows the 80 % warning; past the budget
    the next tool call is denied and "🛑 Budget reached" comes with **Continue (+$N)** and
    **Stop**; Stop clicked on the page says so and nothing runs; the next message's tool
    call asks again, and Continue clicked there types the continue prompt, and the turn goes
    on. The cost of one answer is measured by a first ``try`` without a budget (the default:
    nobody is stopped who did not ask), then ``try`` starts again with a budget that answer
    filled to 85 %, as a user would, Claude's window kept."""
    project = user_project(rig)
    marker = project / "ran"
    wait = {"command": "python3 -c 'import time; time.sleep(2)'", "description": "Wait"}
    touch = {"command": f"touch {marker}", "description": "Mark"}
    rig.api.script(
        text("first answer"),
        tool_use("Bash", wait, text_before="x" * 4000),  # allowed on the page; crosses it
        tool_use("Bash", touch),  # past the budget: denied, then Stop
        tool_use("Bash", touch),  # the next message's: denied again, then Continue
        echo(),
    )
    env = {**rig.env, "DISCORD_BRIDGE_STATE_DIR": short_state_dir}
    status = Path(short_state_dir) / "try"

    def cost() -> float:
        files = status.glob("*/runtime/status/*.json")
        return max([json.loads(p.read_text()).get("cost_usd") or 0 for p in files] or [0])

    with chromium() as browser:
        first = TryProcess(tmp_path, env, str(project), "--port", "0")
        try:
            page, errors = open_page(browser, first.url())
            page.fill("#input", "first")
            page.press("#input", "Enter")
            # (not the live status message, which quotes the reply while the turn runs)
            page.locator("#messages .content", has_text=re.compile(r"^first answer")).wait_for()
            wait_until(lambda: cost() > 0, 15, "the statusLine's cost")
            assert "budget" not in first.output()
            assert errors == []
        finally:
            assert first.stop() == 0, first.output()

        budget = round(cost() / 0.85, 6)
        started = TryProcess(tmp_path, env, str(project), "--port", "0", "--budget", str(budget))
        try:
            page, errors = open_page(browser, started.url())
            assert f"budget    ${budget:.2f} per session" in started.output()
            messages = page.locator("#messages")
            warning = messages.locator(".message", has_text="⚠️ Budget:")
            warning.wait_for()
            assert "this session's budget is 85% used" in warning.inner_text()
            shot(page, tmp_path, "budget-warning")

            page.fill("#input", "go on working")
            page.press("#input", "Enter")
            prompt = messages.locator(".message", has_text="Claude wants to use")
            prompt.get_by_role("button", name="Allow", exact=True).click()
            reached = messages.locator(".message", has_text="🛑 Budget reached")
            reached.wait_for()
            first_id = reached.get_attribute("data-id")
            stop = page.locator("#m-" + first_id)  # edited in place
            more = f"Continue (+${budget:.2f})"
            for name in (more, "Stop"):
                stop.get_by_role("button", name=name, exact=True).wait_for()
            assert "this session's budget" in stop.inner_text()
            assert not marker.exists()  # denied before it ran
            shot(page, tmp_path, "budget-reached")
            stop.get_by_role("button", name="Stop", exact=True).click()
            stop.locator(".content", has_text="⏹ Stopped at the budget by").wait_for()
            assert stop.get_by_role("button").count() == 0
            asked = len(rig.api.requests)

            page.fill("#input", "one more step")
            page.press("#input", "Enter")
            again = messages.locator(f".message:not(#m-{first_id})", has_text="🛑 Budget reached")
            again.wait_for()
            again = page.locator("#m-" + again.get_attribute("data-id"))
            assert "one more step" in model_saw(rig, asked + 1) and not marker.exists()
            again.get_by_role("button", name=more, exact=True).click()
            again.locator(".content", has_text="▶️ Continued by").wait_for()
            assert again.get_by_role("button").count() == 0
            assert "continue" in model_saw(rig, asked + 2)
            reply = messages.locator(".content", has_text=re.compile(r"^Model saw:"))
            reply.filter(has_text="continue").wait_for()  # the turn went on
            shot(page, tmp_path, "budget-continued")
            assert errors == []
        finally:
            code = started.stop()
        assert code == 0, started.output()


def test_a_worktree_thread_is_finished_from_the_page(rig: BridgeRig, tmp_path: Path) -> None:
    """``try --worktrees`` on a repository: a thread started on the page works in its own
    worktree; Finish… on its note, Merge into main, its preview, Merge, then Remove worktree
    and end thread, as a phone shows them (docs/finish.png is the preview)."""
    project = user_project(rig)
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.name", "Owner")
    git(project, "config", "user.email", "owner@example.invalid")
    (project / "app.py").write_text("print('shop')\n")
    git(project, "add", "app.py")
    git(project, "commit", "-qm", "start")
    rig.api.script(text("done with the work"))
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0", "--worktrees")
    try:
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 420, "height": 860})  # a phone's
            page.set_default_timeout(60_000)
            page.goto(started.url())
            page.locator("#status.online").wait_for()
            page.once("dialog", lambda dialog: dialog.accept("Feature"))
            page.locator("#new-thread").click()
            page.locator("#channels li.active", has_text="Feature").wait_for()
            page.fill("#input", "build the feature")
            page.press("#input", "Enter")
            messages = page.locator("#messages")
            note = messages.locator(".message", has_text="works in its own git worktree")
            note.wait_for()
            messages.locator(".content", has_text=re.compile(r"^done with the work")).wait_for()
            work = next((project / ".claude" / "worktrees").iterdir())
            (work / "feature.py").write_text("print('feature')\n")
            git(work, "add", "feature.py")
            git(work, "commit", "-qm", "Add the feature")
            assert work.name == "feature"  # named after the thread, no id in its branch
            panes = TmuxSessions(tryout_setup.TMUX_SESSION, rig.socket)

            def thread_pane() -> str | None:  # the pane that works in the worktree
                found = [
                    p.pane_id for p in panes.panes() if panes.current_path(p.pane_id) == str(work)
                ]
                return found[0] if found else None

            pane = wait_until(thread_pane, 30, "the thread's pane")
            wait_until(lambda: not is_busy(panes.capture(pane)), 30, "the turn to end")

            note.get_by_role("button", name="Finish…").click()
            finish = messages.locator(".message", has_text="Finish this thread's work")
            finish.get_by_role("button", name="Merge into main").click()
            preview = messages.locator(".message", has_text=re.compile(r"Merge worktree-feature"))
            preview.locator(".content", has_text="a fast-forward").wait_for()
            assert "Add the feature" in preview.inner_text()
            shot(page, tmp_path, "finish")
            preview.get_by_role("button", name="Merge", exact=True).click()
            merged = messages.locator(".message", has_text="Merged worktree-feature")
            merged.wait_for()
            assert (project / "feature.py").read_text() == "print('feature')\n"
            assert git(project, "log", "-1", "--format=%s").strip() == "Add the feature"
            merged.get_by_role("button", name="Remove worktree and end thread").click()
            messages.locator(".message", has_text="Done: the worktree").wait_for()
            assert not work.exists()
    finally:
        assert started.stop() == 0, started.output()


def test_try_says_clearly_why_it_cannot_start(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **os.environ,
        "DISCORD_BRIDGE_HOME": str(tmp_path / "home"),
        "DISCORD_BRIDGE_TMUX_SOCKET": f"dbtry-{os.getpid()}",
    }
    missing = run_try(env, str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert f"the project directory {tmp_path / 'nowhere'} does not exist" in missing.stderr
    no_git = run_try(env, str(project), "--worktrees")
    assert no_git.returncode == 2
    assert f"{project} is not in a git repository: --worktrees needs one" in no_git.stderr

    first = TryProcess(tmp_path, env, str(project), "--listen", "0.0.0.0", "--port", "0")
    try:
        url = first.url()
        port = int(re.search(r":(\d+)/#token=", url)[1])
        # on the network: the address to open from a phone, and never without the token
        assert not url.startswith("http://0.0.0.0") and "anyone with this address" in (
            first.output()
        )
        base, token = url.split("/#token=")
        assert httpx.get(f"{base}/api/session").status_code == 401
        wrong = {"Authorization": f"Bearer {token}x"}
        assert httpx.get(f"{base}/api/session", headers=wrong).status_code == 401
        assert page_client(url).get("/api/session").status_code == 200
        again = run_try(env, str(project), "--port", "0")
        assert again.returncode == 2
        assert "discord-bridge try: already running (pid" in again.stderr, again.stderr
        assert str(project) in again.stderr

        elsewhere = {**env, "DISCORD_BRIDGE_HOME": str(tmp_path / "home2")}
        busy = run_try(elsewhere, str(project), "--port", str(port))
        assert busy.returncode == 2
        assert f"port {port} on 127.0.0.1 is already in use" in busy.stderr, busy.stderr
    finally:
        assert first.stop() == 0, first.output()
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        busy = run_try(env, str(project), "--port", str(port))
    assert busy.returncode == 2 and f"port {port} on 127.0.0.1 is already in use" in busy.stderr
    config = tmp_path / "home" / "config.json"
    assert not config.exists()  # nothing written where a real config lives


def listening(pid: int) -> list[tuple[str, int]]:
    """The TCP addresses process ``pid`` listens on (what ``ss`` shows every local user)."""
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        if f"pid={pid}," in line:
            host, _, port = line.split()[3].rpartition(":")
            found.append((host.strip("[]"), int(port)))
    return found


def seeded_tokens(project: Path) -> list[str]:
    """What another local user derives from the project's path (``try``'s argv, the same for
    every run): the tokens an emulator of that seed would accept without a secret one."""
    from discord_emulator.ids import Snowflakes, make_token, seed_ids

    seed = tryout_setup.seed_for(str(project))
    flakes = Snowflakes(seed)
    ids = seed_ids(flakes)
    return [make_token(ids["bot_id"], seed), make_token(flakes.next(), seed)]


def test_another_local_user_gets_nothing_from_try(tmp_path: Path) -> None:
    """``try`` on a machine shared with other users: the browser is opened without the token
    on any command line (``/proc/*/cmdline`` is world-readable) through a private hand-over
    file; every port it opens is on loopback (the page too, by default) and answers nothing
    without a secret no other user can derive; every file it writes is private."""
    project = tmp_path / "project"
    project.mkdir()
    argv_seen = tmp_path / "browser-argv.json"
    fake_browser = tmp_path / "browser"
    # Written whole, then renamed: the test reads it as soon as it exists (it once read the
    # file between its creation and its write: empty).
    partial = f"{argv_seen}.partial"
    record = (
        f"open({partial!r}, 'w').write(json.dumps(sys.argv)); "
        f"os.replace({partial!r}, {str(argv_seen)!r})"
    )
    fake_browser.write_text(f"#!{sys.executable}\nimport json, os, sys\n{record}\n")
    fake_browser.chmod(0o755)
    home = tmp_path / "home"
    env = {
        **os.environ,
        "DISCORD_BRIDGE_HOME": str(home),
        "DISCORD_BRIDGE_STATE_DIR": str(tmp_path / "state"),
        "DISCORD_BRIDGE_TMUX_SOCKET": f"dbtry-{os.getpid()}",
        "DISPLAY": ":99",  # a graphical session: try opens the page …
        "BROWSER": str(fake_browser),  # … with this "browser" (Python's webbrowser honours it)
    }
    started = TryProcess(tmp_path, env, str(project), "--port", "0", browser=True)
    try:
        url = started.url()
        token = url.split("#token=", 1)[1]
        assert url.startswith("http://127.0.0.1:") and token
        wait_until(argv_seen.exists, 20, "the browser to be started")
        argv = json.loads(argv_seen.read_text())
        assert token not in " ".join(argv), argv
        (handover,) = [a for a in argv[1:] if a.startswith("file://")]
        handover_path = Path(handover.removeprefix("file://"))
        assert stat.S_IMODE(handover_path.stat().st_mode) == 0o600
        assert stat.S_IMODE(handover_path.parent.stat().st_mode) == 0o700
        with chromium() as browser:  # the browser the owner runs opens it: the page comes up
            page = browser.new_page()
            page.set_default_timeout(30_000)
            page.goto(handover)
            page.locator("#status.online").wait_for()
            assert page.url.startswith("http://127.0.0.1:") and "token" not in page.url

        # Every port (REST and gateway, control API, page) on loopback; none opens without a secret.
        (work,) = home.glob("try/*/")
        cfg = json.loads((work / "config.json").read_text())["servers"][0]["discord"]
        ports = listening(started.proc.pid)
        assert len(ports) == 3 and {host for host, _ in ports} == {"127.0.0.1"}, ports
        for _, port in ports:
            base = f"http://127.0.0.1:{port}"
            for path in ("/api/v10/users/@me", "/_test/info", "/api/session"):
                assert httpx.get(base + path).status_code in (401, 404), (port, path)
            for guessed in seeded_tokens(project):
                auth = {"Authorization": f"Bot {guessed}"}
                got = httpx.get(f"{base}/api/v10/users/@me", headers=auth)
                assert got.status_code in (401, 404), (port, got.text)
        real = httpx.get(
            f"{cfg['apiBaseUrl']}/users/@me", headers={"Authorization": f"Bot {cfg['botToken']}"}
        )
        assert real.status_code == 200 and real.json()["bot"]

        # Every file private; no secret on try's own command line either.
        private = [home / "try", work, *Path(tmp_path / "state").glob("try/**/")]
        for folder in private:
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
        for file in ("config.json", "try.log", "open.html", "../lock"):
            assert stat.S_IMODE((work / file).stat().st_mode) == 0o600, file
        cmdline = Path(f"/proc/{started.proc.pid}/cmdline").read_bytes().decode()
        assert token not in cmdline and cfg["botToken"] not in cmdline
    finally:
        assert started.stop() == 0, started.output()
    assert not handover_path.exists()  # the hand-over goes with the run


def test_claude_left_running_after_try_stops_never_calls_the_gone_emulator(
    rig: BridgeRig, tmp_path: Path
) -> None:
    """Ctrl-C stops the emulator with the bot, but Claude Code keeps running in tmux and the
    user may go on there (``tmux attach``). Its hooks must not post to the emulator's old
    loopback port (any local program can listen there once it is free: it would get the
    reply and the config's bot token, and each hook would retry it for its whole budget):
    the reply waits in the outbox and shows when ``try`` starts again."""
    project = rig.projects["project-a"]
    rig.api.script(
        text("first reply"),
        text("written while try was stopped"),
        tool_use("Bash", {"command": "touch later.txt", "description": "Create a file"}),
    )
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        url = started.url()
        home = Path(rig.env["DISCORD_BRIDGE_HOME"])
        (cfg_path,) = home.glob("try/*/config.json")
        wait_until(lambda: "logged in" in (cfg_path.parent / "try.log").read_text(), 30, "login")
        page = page_client(url)
        channel = page.get("/api/session").json()["home_channel"]

        def shown(wanted: str) -> bool:
            msgs = page.get(f"/api/channels/{channel}/messages").json()
            return any(wanted in (msg.get("content") or "") for msg in msgs)

        sent = {"channel_id": channel, "content": "hello"}
        page.post("/api/messages", json=sent)
        wait_until(lambda: shown("first reply"), 90, "the first reply")
        old_api = json.loads(cfg_path.read_text())["servers"][0]["discord"]["apiBaseUrl"]
    finally:
        assert started.stop() == 0, started.output()

    # Someone else's program takes the emulator's old port.
    squatter = socket.create_server(("127.0.0.1", httpx.URL(old_api).port))
    squatter.settimeout(0.2)
    calls: list[bytes] = []
    done = threading.Event()

    def listen() -> None:
        while not done.is_set():
            try:
                conn, _ = squatter.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    calls.append(conn.recv(65536))
                except OSError:
                    calls.append(b"")

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    try:
        tmux = ["tmux", "-L", rig.socket]
        subprocess.run([*tmux, "send-keys", "-t", "discord-bridge-try", "-l", "go on"], check=True)
        time.sleep(0.5)
        subprocess.run([*tmux, "send-keys", "-t", "discord-bridge-try", "Enter"], check=True)
        rig.api.wait_requests(2, timeout=60)
        data = Path(rig.state_dir)
        outbox = next(data.glob("try/*/state/outbox"))

        def spooled() -> bool:
            return any(
                b"written while try was stopped" in f.read_bytes() for f in outbox.rglob("*.json")
            )

        wait_until(spooled, 60, "the reply in the outbox")

        def screen() -> str:
            shown = [*tmux, "capture-pane", "-p", "-t", "discord-bridge-try"]
            return subprocess.run(shown, capture_output=True, text=True).stdout

        # A permission prompt goes straight to the terminal's own dialog.
        subprocess.run([*tmux, "send-keys", "-t", "discord-bridge-try", "-l", "a file"], check=True)
        time.sleep(0.5)
        subprocess.run([*tmux, "send-keys", "-t", "discord-bridge-try", "Enter"], check=True)
        wait_until(lambda: "Do you want to proceed?" in screen(), 60, "the terminal's dialog")
        subprocess.run([*tmux, "send-keys", "-t", "discord-bridge-try", "Escape"], check=True)
    finally:
        done.set()
        listener.join(5)
        squatter.close()
    assert calls == [], f"a hook called the gone emulator's port: {calls[:1]}"

    again = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        url = again.url()
        page = page_client(url)
        wait_until(lambda: shown("written while try was stopped"), 60, "the spooled reply")
    finally:
        assert again.stop() == 0, again.output()


def test_a_window_the_user_opens_in_tmux_does_not_get_trys_dirs(
    rig: BridgeRig, tmp_path: Path
) -> None:
    """When ``try`` starts the tmux server, the server's global environment is the bot's: a
    window the user opens there later (to run ``discord-bridge run`` or ``hooks install``,
    say) must get the user's own DISCORD_BRIDGE_* dirs, not ``try``'s (a real bot there
    would share ``try``'s runtime dir; ``hooks install`` would pin every hook to it)."""
    project = rig.projects["project-a"]
    rig.api.script(text("first reply"))
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        url = started.url()
        (log,) = Path(rig.env["DISCORD_BRIDGE_HOME"]).glob("try/*/try.log")
        wait_until(lambda: "logged in" in log.read_text(), 30, "login")
        page = page_client(url)
        channel = page.get("/api/session").json()["home_channel"]
        sent = {"channel_id": channel, "content": "hello"}
        page.post("/api/messages", json=sent)
        rig.api.wait_requests(1, timeout=60)  # Claude Code runs: try's bot started tmux
    finally:
        assert started.stop() == 0, started.output()
    seen = tmp_path / "window-env.txt"
    subprocess.run(
        [
            "tmux",
            "-L",
            rig.socket,
            "new-window",
            "-d",
            "-t",
            "discord-bridge-try",
            f"env > {seen}.part && mv {seen}.part {seen}",
        ],
        check=True,
    )
    wait_until(seen.exists, 10, "the new window's environment")
    env = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    for name in ("DISCORD_BRIDGE_RUNTIME_DIR", "DISCORD_BRIDGE_STATE_DIR"):
        assert env.get(name) == rig.env[name], f"{name}={env.get(name)}"


def test_a_claude_started_by_hand_is_adopted_and_released_from_the_page(
    rig: BridgeRig, tmp_path: Path
) -> None:
    """``/sessions`` on the page lists a ``claude`` started by hand in a tmux server of its
    own; picked, **Adopt** opens a thread whose messages are typed into that pane, and its
    replies and permission prompts come back to that thread on the page, though its hooks
    know nothing of ``try`` (the home's config and dirs are not ``try``'s); **Release**
    gives it back (README "Every session on this machine")."""
    project = user_project(rig)
    rig.api.script(
        text("adopted and answering"),
        tool_use("Bash", {"command": "touch adopted.txt", "description": "Create a file"}),
        text("after the adopted tool"),
    )
    hand = {k: v for k, v in rig.env.items() if not k.startswith("DISCORD_BRIDGE_")}
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    with TmuxServer(f"dbhand-{os.getpid()}-{time.monotonic_ns() % 10**6}") as mine:
        mine.new_session("mine", project, ["claude"], hand)
        mine.wait_ready("mine", 60)
        pid = mine.tmux("display-message", "-p", "-t", "mine", "#{pane_pid}").strip()
        record = rig.claude_home / ".claude" / "sessions" / f"{pid}.json"
        wait_until(record.exists, 30, "Claude Code's record of its session")
        try:
            with chromium() as browser:
                page = browser.new_page(viewport={"width": 1100, "height": 760})
                page.set_default_timeout(60_000)
                page.goto(started.url())
                page.locator("#status.online").wait_for()
                messages = page.locator("#messages")
                page.fill("#input", "/sessio")
                page.locator("#command-picker div[data-name=sessions]").click()
                page.press("#input", "Enter")
                listed = messages.locator(".message.ephemeral", has_text="Claude Code session")
                listed.wait_for()
                listed.locator("details.select summary").click()
                listed.locator("label", has_text=mine.socket_name).first.click()
                offer = messages.locator(".message.ephemeral", has_text="opens a thread")
                offer.get_by_role("button", name="Adopt").click()
                page.locator("#channels li", has_text="adopted").wait_for()
                page.locator("#channels li", has_text="adopted").click()
                welcome = messages.locator(".message", has_text="🔗 Adopted")
                welcome.wait_for()
                shot(page, tmp_path, "adopted")
                page.fill("#input", "typed from the page")
                page.press("#input", "Enter")
                wait_until(lambda: "typed from the page" in mine.capture("mine"), 30, "the text")
                assert "typed from the page" in model_saw(rig, 1)
                # Its reply comes back to the thread, through the hooks of ~/.claude/settings.json
                messages.locator(".content", has_text="adopted and answering").wait_for()
                wait_until(lambda: screen_is_idle(mine.capture("mine")), 30, "an idle pane")
                # and its permission prompt, whose Allow reaches the pane's dialog.
                page.fill("#input", "make a file")
                page.press("#input", "Enter")
                prompt = messages.locator(".message", has_text="Claude wants to use")
                prompt.wait_for()
                assert "touch adopted.txt" in prompt.inner_text()
                prompt.get_by_role("button", name="Allow", exact=True).click()
                wait_until((project / "adopted.txt").exists, 30, "the allowed command to run")
                # the reply, not the turn's status quoting it ("⏳ Working · … > after the …")
                reply = re.compile(r"^after the adopted tool")
                messages.locator(".content", has_text=reply).wait_for()
                routes = Path(rig.env["DISCORD_BRIDGE_HOME"]) / "adopted-sessions.json"
                assert routes.exists()  # how they found try: its route in the bridge home
                welcome.get_by_role("button", name="Release").click()
                messages.locator(".message", has_text="↩️ Released").wait_for()
                assert not routes.exists()  # its hooks are the home's again
                assert (
                    mine.tmux("display-message", "-p", "-t", "mine", "#{pane_dead}").strip() == "0"
                )
        finally:
            assert started.stop() == 0, started.output()


def test_try_stops_its_bot_and_starts_it_again_and_it_types_what_was_sent_meanwhile(
    rig: BridgeRig, tmp_path: Path
) -> None:
    """Enter in ``try``'s terminal (SIGUSR1 here) stops the bot alone: the page and the
    emulator run on and keep what is sent; Enter again starts it, and it reads that message
    from the channel's history and types it, with its note."""
    project = rig.projects["project-a"]
    rig.api.script(text("caught up"))
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        url = started.url()
        state = Path(rig.env["DISCORD_BRIDGE_STATE_DIR"])
        wait_until(
            lambda: list(state.glob("try/*/state/state/handled-*.json")),
            30,
            "the bot to note where the channel is",
        )
        page = page_client(url)
        channel = page.get("/api/session").json()["home_channel"]
        started.proc.send_signal(signal.SIGUSR1)  # Enter
        wait_until(lambda: "the bot is stopped" in started.output(), 30, "the bot to stop")
        sent = {"channel_id": channel, "content": "sent while the bot was stopped"}
        page.post("/api/messages", json=sent)
        assert rig.api.requests == []
        started.proc.send_signal(signal.SIGUSR1)  # Enter again
        assert model_saw(rig, 1) == "sent while the bot was stopped"

        def note() -> bool:
            msgs = page.get(f"/api/channels/{channel}/messages").json()
            return any("Sent while the bridge was offline" in m["content"] for m in msgs)

        wait_until(note, 30, "the note on the page")
        assert "starting the bot again" in started.output()
    finally:
        assert started.stop() == 0, started.output()
