"""The plan annotated and a permission prompt's diff, from the page of ``discord-bridge try``.

The real command, the real Claude Code CLI (against the fake Messages API) and the page in a
headless Chromium on a phone-sized screen, as in ``test_try.py``: ``/mode plan`` from the
command picker; on the plan, a note on one step (its select, its modal) sends it back; on the
next, **Approve with notes…** (review each edit, a note) approves it and the model reads the
note in the approval; the Edit it then asks for shows its numbered diff, and a ✅ reaction
from the page allows it. Screenshots (``$TRY_SCREENSHOTS``): docs/plan-notes.png (the next plan,
the first's notes above it) and docs/permission-diff.png.
"""

from __future__ import annotations

import re
from pathlib import Path

from bridge_testkit import BridgeRig
from fake_anthropic import echo, last_user_text, text, tool_use
from tests.e2e.test_decisions import write_plan
from tests.e2e.test_try import TryProcess, chromium, model_saw, open_page, shot, user_project

PLAN = "# Greeting\n\n1. Change the greeting\n2. Return 0 on success\n3. Add a test\n"
BETTER = "# Greeting\n\n1. Change the greeting\n2. Return 0 on success\n"
APP = "".join(f"# line {i}\n" for i in range(1, 9)) + "def main():\n    print('hi')\n    return 1\n"


def test_plan_notes_page(rig: BridgeRig, tmp_path: Path) -> None:
    """A plan annotated, then an edit allowed by a reaction, from the page. (A short name:
    pytest names the test's directory after it, and the bot's hand-off socket under it must
    stay within 100 characters, or every hook of ``try`` finds no bot.)"""
    project = user_project(rig)
    app = project / "app.py"
    app.write_text(APP)
    edit = {
        "file_path": str(app),
        "old_string": "    print('hi')\n    return 1",
        "new_string": "    print('hello')\n    return 0",
    }
    rig.api.script(
        text("Ready."),
        write_plan(PLAN),
        tool_use("ExitPlanMode", {}),
        write_plan(BETTER, delay=2.0),
        tool_use("ExitPlanMode", {}),
        tool_use("Edit", edit),
        echo(),
    )
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url(), viewport={"width": 430, "height": 900})
            messages = page.locator("#messages")
            page.fill("#input", "hello")
            page.press("#input", "Enter")
            messages.locator(".content", has_text=re.compile(r"^Ready\.")).wait_for()

            page.fill("#input", "/mo")
            page.locator("#command-picker div[data-name=mode]").click()
            page.select_option("#command-form select[name=mode]", "plan")
            page.press("#input", "Enter")
            messages.locator(".message.ephemeral", has_text="plan").wait_for()

            # 1. The plan, its steps numbered (the heading is step 1); a note on step 4.
            page.fill("#input", "make the greeting friendlier")
            page.press("#input", "Enter")
            plan = messages.locator(".message", has_text="plan is ready").first
            plan.wait_for()
            assert "[4] Add a test" in plan.inner_text()
            plan.locator("details.select summary", has_text="Notes on steps").click()
            plan.locator("label", has_text="4 · Add a test").click()
            plan.get_by_role("button", name="Confirm").click()
            modal = page.locator("#modal")
            modal.wait_for()
            modal.locator("[name=s4]").fill("no test for a greeting")
            modal.get_by_role("button", name="Submit").click()
            plan.locator(".content", has_text="keep planning").wait_for()
            saw = model_saw(rig, 4)
            assert "Step 4: “Add a test”\nno test for a greeting" in saw, saw

            # 2. The next plan, approved with a note: review each edit.
            better = messages.locator(".message", has_text="plan is ready").nth(1)
            better.wait_for()
            shot(page, tmp_path, "plan-notes")
            better.get_by_role("button", name="Approve with notes…").click()
            modal.wait_for()
            page.select_option("#modal-mode", "review")
            page.fill("#modal-text", "Keep the exit code documented")
            shot(page, tmp_path, "plan-notes-modal")
            modal.get_by_role("button", name="Submit").click()
            better.locator(".content", has_text="with notes").wait_for()
            approval = rig.api.wait_requests(6, timeout=60)[5]  # answered with the Edit
            assert "Keep the exit code documented" in last_user_text(approval)

            # 3. The Edit's prompt: the diff with the file's line numbers; ✅ allows it.
            asking = messages.locator(".message", has_text="Claude wants to use").last
            asking.locator(".content", has_text="Edit file").wait_for()
            code = asking.locator("pre code").inner_text()
            assert "-  10     print('hi')" in code and "+  10     print('hello')" in code, code
            shot(page, tmp_path, "permission-diff")
            asking.locator("details.add-reaction summary").click()
            asking.locator("button.reaction-pick", has_text="✅").click()
            asking.locator(".content", has_text="Allowed by").wait_for()
            assert "[tool_result]" in model_saw(rig, 7)
            assert "print('hello')" in app.read_text()
            assert errors == []
    finally:
        assert started.stop() == 0, started.output()
