"""Messages that wait for the turn: ``>>`` and ``/queue``, typed after the Stop, in order.

Real CLI, real tmux, the emulator and the bot. The first turn runs a tool, so a message typed
into it would be steered in next to the tool's result (what a plain message does): a queued
one must reach the model only as a turn of its own, after the Stop.
"""

from __future__ import annotations

import re
import time

from bridge.bot.turn.queue import IDLE_CHECK
from bridge_testkit import is_status, wait_until
from fake_anthropic import echo, error, last_user_text, text, tool_use


def status_with(rig, words: str) -> dict:
    def found():
        for m in rig.bot_messages(status=True):
            if is_status(m) and words in m["content"]:
                return m
        return None

    return wait_until(found, 30, f"a status message showing {words!r}\n{rig.diagnostics()}")


def message(rig, message_id: str) -> dict:
    return next(m for m in rig.discord.messages(rig.ids["project-a"]) if m["id"] == message_id)


def user_texts(request: dict) -> str:
    return str(request["messages"])


def test_queued_messages_are_typed_after_the_stop_in_order(rig) -> None:
    rig.api.script(
        echo(prefix="Saw: "),
        tool_use("Bash", {"command": "sleep 4", "description": "Wait"}),
        text("first turn done", delay=1),
        echo(prefix="Saw: "),
        echo(prefix="Saw: "),
        echo(prefix="Saw: "),
    )
    rig.start_bot()
    at_once = rig.post(">> right away")  # nothing running: typed at once, no notice
    rig.wait_bot_message(content_contains="Saw: right away", timeout=60)
    rig.wait_reaction(at_once)
    assert not any("Queued" in m["content"] for m in rig.bot_messages())
    rig.wait_reaction(rig.post("run the slow thing"))
    status_with(rig, "Bash")  # the turn is running its tool

    one = rig.post(">> queued one")
    notice_one = rig.wait_bot_message(content_contains="⏭ Queued (#1)")
    two = rig.post(">>queued two")
    rig.wait_bot_message(content_contains="⏭ Queued (#2)")
    three = rig.post(">> never typed")
    notice_three = rig.wait_bot_message(content_contains="⏭ Queued (#3)")
    listed = status_with(rig, "3. never typed")  # the status message lists the queue
    assert "1. queued one" in listed["content"] and "2. queued two" in listed["content"]

    # ✖ 3 on the status message cancels the third; bob may not.
    cancel = next(
        c
        for row in listed["components"]
        for c in row["components"]
        if c.get("label") == "3" and c["custom_id"].startswith("db:q:cancel:")
    )
    assert rig.discord.click(listed["id"], cancel["custom_id"], user="bob")["ephemeral"]
    answer = rig.discord.click(listed["id"], cancel["custom_id"])
    assert "Cancelled" in str(answer)
    wait_until(
        lambda: "✖ Cancelled" in message(rig, notice_three["id"])["content"],
        10,
        "the third notice closed as cancelled",
    )
    for sent in (one, two):  # not typed while the turn runs
        assert "✅" not in rig.discord.reactions(sent["channel_id"], sent["id"])

    rig.wait_bot_message(content_contains="first turn done", timeout=60)
    rig.wait_bot_message(content_contains="Saw: queued one", timeout=60)
    rig.wait_bot_message(content_contains="Saw: queued two", timeout=60)
    requests = rig.api.wait_requests(5)[1:]
    # The turn's own requests never saw them (a plain message would ride on the tool result).
    turn = user_texts(requests[0]) + user_texts(requests[1])
    assert "queued one" not in turn and "queued two" not in turn
    assert last_user_text(requests[2]) == "queued one"
    assert last_user_text(requests[3]) == "queued two"
    assert "queued two" not in user_texts(requests[2])  # a turn of its own, in order
    rig.wait_reaction(one)
    rig.wait_reaction(two)
    closed = message(rig, notice_one["id"])
    assert closed["content"].startswith("✅ Typed") and closed["components"] == []
    time.sleep(1.0)  # the cancelled one stays cancelled
    assert len(rig.api.requests) == 5
    assert "never typed" not in rig.screen()
    assert "✅" not in rig.discord.reactions(three["channel_id"], three["id"])


def test_a_queued_message_sent_right_after_a_prompt_waits_for_that_prompts_turn(rig) -> None:
    """``>>`` sent the moment after a prompt was typed, before its turn shows (Claude Code's
    UserPromptSubmit hook and its redraw come later, seconds on a busy machine): the prompt's
    turn is running for the user, so the message queues and reaches the model as a turn of
    its own, not typed into that turn."""
    rig.api.script(
        echo(prefix="Saw: "),
        tool_use("Bash", {"command": "sleep 2", "description": "Wait"}),
        text("slow turn done"),
        echo(prefix="Saw: "),
    )
    rig.start_bot()
    rig.wait_reaction(rig.post("hello"))
    rig.wait_bot_message(content_contains="Saw: hello", timeout=60)
    since = rig.discord.mark()
    slow = rig.post("run the slow thing")
    behind = rig.post(">> right behind it")  # no wait: the bot gets both at once
    notice = rig.wait_bot_message(content_contains="⏭ Queued (#1)", since=since)
    assert notice["message_reference"]["message_id"] == behind["id"], notice
    rig.wait_reaction(slow)
    rig.wait_bot_message(content_contains="Saw: right behind it", timeout=60)
    requests = rig.api.wait_requests(4)
    assert "right behind it" not in user_texts(requests[1]) + user_texts(requests[2])
    assert last_user_text(requests[3]) == "right behind it"


def panel_shows(rig, words: str) -> dict:
    def found():
        for m in rig.discord.messages(rig.ids["general"]):
            if m["author"]["id"] == rig.ids["bot_id"] and words in m["content"]:
                return m
        return None

    return wait_until(found, 30, f"the control panel showing {words!r}")


def test_a_queue_survives_a_bot_restart_and_queue_command(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["generalChannelId"] = rig.ids["general"]
    rig.write_config(raw)
    rig.api.script(
        tool_use("Bash", {"command": "sleep 6", "description": "Wait"}),
        text("long turn done"),
        echo(prefix="Saw: "),
        echo(prefix="Saw: "),
    )
    rig.start_bot()
    rig.wait_reaction(rig.post("run the long thing"))
    status_with(rig, "Bash")
    answer = rig.discord.run_command(rig.ids["project-a"], "queue", {"text": "from the command"})
    assert "Queued (#1)" in str(answer), answer
    queued = rig.post(">> after the restart")
    rig.wait_bot_message(content_contains="⏭ Queued (#2)")
    panel_shows(rig, "⏭ Queued: project-a 2")  # the control panel's own line
    assert rig.stop_bot() == 0
    assert list((rig.state_dir / "state").glob("queued-*.json"))  # on disk while no bot runs
    rig.start_bot()

    rig.wait_bot_message(content_contains="Saw: from the command", timeout=60)
    rig.wait_bot_message(content_contains="Saw: after the restart", timeout=60)
    requests = rig.api.wait_requests(4)
    assert "from the command" not in user_texts(requests[1])
    assert last_user_text(requests[2]) == "from the command"
    assert last_user_text(requests[3]) == "after the restart"
    rig.wait_reaction(queued)
    assert not list((rig.state_dir / "state").glob("queued-*.json"))
    wait_until(
        lambda: (
            not any("⏭ Queued" in m["content"] for m in rig.discord.messages(rig.ids["general"]))
        ),
        30,
        "the panel without a queue",
    )


def hang(seconds: int) -> str:
    return f"python3 -c 'import time; time.sleep({seconds})'"  # Claude Code refuses a bare sleep


def receipt_of(rig, sent: dict) -> dict:
    def found():
        for m in rig.bot_messages():
            reference = (m.get("message_reference") or {}).get("message_id")
            if reference == sent["id"] and "running turn" in m["content"]:
                return m
        return None

    return wait_until(found, 30, f"the receipt of {sent['content']!r}\n{rig.diagnostics()}")


def test_a_mid_turn_receipt_moves_the_message_after_the_turn_or_interrupts_for_it(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["projects"][0]["permission"] = "bypassPermissions"
    rig.write_config(raw)
    rig.api.script(
        tool_use("Bash", {"command": hang(10), "description": "Wait"}),
        text("first turn done"),
        echo(prefix="Saw: "),
        tool_use("Bash", {"command": hang(60), "description": "Wait long"}),
        echo(prefix="Saw: "),
    )
    rig.start_bot()
    rig.wait_reaction(rig.post("run the slow thing"))
    status_with(rig, "time.sleep(10)")

    # ⏭ After this turn: taken back from Claude Code's own queue, typed after the Stop.
    later = rig.post("move me after the turn")
    rig.wait_reaction(later)  # typed (steered) at once, as before
    receipt = receipt_of(rig, later)
    button = receipt["components"][0]["components"][0]
    assert button["label"] == "After this turn"
    assert rig.discord.click(receipt["id"], button["custom_id"], user="bob")["ephemeral"]
    rig.discord.click(receipt["id"], button["custom_id"], timeout=15)
    wait_until(lambda: "⏭ Queued" in message(rig, receipt["id"])["content"], 15, "moved")
    rig.wait_bot_message(content_contains="Saw: move me after the turn", timeout=60)
    requests = rig.api.wait_requests(3)
    assert "move me after the turn" not in user_texts(requests[1])  # not steered in
    assert last_user_text(requests[2]) == "move me after the turn"

    # ⏹ Interrupt and send: the hanging tool is stopped and the message goes in at once.
    rig.wait_reaction(rig.post("hang again"))
    status_with(rig, "time.sleep(60)")
    urgent = rig.post("stop and do this instead")
    receipt = receipt_of(rig, urgent)
    button = receipt["components"][0]["components"][1]
    assert button["label"] == "Interrupt and send"
    rig.discord.click(receipt["id"], button["custom_id"], timeout=15)
    answer = rig.wait_bot_message(content_contains="stop and do this instead", timeout=30)
    assert answer["content"].startswith("Saw: [tool_result is_error]")  # the tool was stopped
    assert "stop and do this instead" in last_user_text(rig.api.wait_requests(5)[4])
    # the receipt is edited once the interrupt is done: that may land after the model answers
    edited = lambda: "Turn interrupted" in message(rig, receipt["id"])["content"]  # noqa: E731
    wait_until(edited, 15, "the receipt says the turn was interrupted")


def test_messages_are_queued_from_the_try_page(rig, tmp_path) -> None:
    """The ``discord-bridge try`` page in headless Chromium: ``>>`` and ``/queue`` while the
    model thinks; the notice's buttons show, the status lists the queue, and both are typed
    after the turn, in order."""
    from tests.e2e.test_try import TryProcess, chromium, open_page, shot, user_project

    project = user_project(rig)
    rig.api.script(
        text("the slow answer", delay=12),  # the model thinks for 12 s
        echo(),
        echo(),
    )
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url())
            messages = page.locator("#messages")
            page.fill("#input", "think for a while")
            page.press("#input", "Enter")
            messages.locator(".message", has_text="⏳ Working").wait_for()  # the turn runs

            page.fill("#input", ">> first after the turn")
            page.press("#input", "Enter")
            notice = messages.locator(".message", has_text="⏭ Queued (#1)")
            notice.wait_for()
            same = page.locator("#m-" + notice.get_attribute("data-id"))  # edited in place
            for name in ("Send now", "Interrupt and send", "Cancel"):
                notice.get_by_role("button", name=name).wait_for()
            page.fill("#input", "/queue")
            page.locator("#command-picker div[data-name='queue']").click()
            page.fill("#command-form [name=text]", "second after the turn")
            page.press("#command-form input >> nth=0", "Enter")
            messages.locator(".message", has_text="⏭ Queued (#2)").wait_for()
            status = messages.locator(".message", has_text="Queued, typed after this turn (2)")
            status.wait_for()  # the status message lists both
            assert "second after the turn" in status.inner_text()
            shot(page, tmp_path, "queue-listed")

            replies = messages.locator(".content", has_text=re.compile(r"^Model saw:"))
            replies.filter(has_text="second after the turn").wait_for()
            requests = rig.api.wait_requests(3)
            assert "after the turn" not in str(requests[0]["messages"])
            assert "first after the turn" in last_user_text(requests[1])
            assert "second after the turn" in last_user_text(requests[2])
            same.locator(".content", has_text="✅ Typed").wait_for()
            shot(page, tmp_path, "queue-typed")
            assert errors == []
    finally:
        code = started.stop()
    assert code == 0, started.output()


def test_a_turn_ended_by_an_api_error_types_the_queue_at_once(rig) -> None:
    """StopFailure ends a turn as surely as Stop: the queued prompt is typed then, not left
    for the next look at idle sessions (or a turn that never comes)."""
    rig.api.script(
        tool_use("Bash", {"command": "sleep 3", "description": "Wait"}),
        # 2.1.332 tries a 400 six times before it gives up
        *[error(400, "FAKE-BAD-REQUEST", error_type="invalid_request_error")] * 6,
        echo(prefix="Saw: "),
    )
    rig.start_bot()
    rig.wait_reaction(rig.post("run into an api error"))
    status_with(rig, "Bash")
    queued = rig.post(">> after the error")
    rig.wait_bot_message(content_contains="⏭ Queued (#1)")
    rig.wait_bot_message(content_contains="Claude Code stopped", timeout=60)
    stopped = time.monotonic()
    rig.wait_reaction(queued)
    took = time.monotonic() - stopped
    # measured: 0.2-0.6 s; before, the idle look found it 8-11 s later
    assert took < IDLE_CHECK, f"typed {took:.1f} s after the failure\n{rig.diagnostics()}"
    reply = rig.wait_bot_message(content_contains="after the error", timeout=60)
    assert reply["content"].startswith("Saw: "), reply  # the model got it: its own turn
