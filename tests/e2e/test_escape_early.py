"""An Escape before Claude Code has recorded the prompt: it takes the prompt back into the
input box, and neither a Stop nor an interrupt record follows."""

from __future__ import annotations

import json

from bridge.claude.screen import input_box, is_busy
from bridge_testkit import wait_until
from fake_anthropic import text
from tests.e2e.test_progress import wait_status


def test_escape_before_the_prompt_is_recorded_closes_the_status(rig) -> None:
    # A UserPromptSubmit hook of the project's own that takes its time: the bridge's hook has
    # opened the turn (its ⏳ status shows) while Claude Code has not recorded the prompt yet.
    settings = rig.projects["project-a"] / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    slow = {"type": "command", "command": "sleep 8"}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [slow]}]}}))
    rig.api.script(text("should never be seen"))
    rig.start_bot()
    rig.post("an early change of mind")
    wait_status(rig, "⏳")
    assert "running UserPromptSubmit hooks" in rig.screen()
    rig.tmux.press(rig.pane().pane_id, "Escape")
    taken_back = "an early change of mind"  # into the input box, not sent
    wait_until(
        lambda: input_box(screen := rig.screen()) == taken_back and not is_busy(screen),
        30,
        "the prompt back in the box",
    )

    closed = wait_status(rig, "⏹ Interrupted", timeout=30)
    assert "by <@" not in closed["content"] and closed["components"] == []
    assert rig.api.requests == [] or all(
        "an early change of mind" not in json.dumps(r) for r in rig.api.requests
    )
