"""Scheduled prompts (``/schedule``) with the real CLI: a prompt typed at its time reaches the
model, only once Claude is idle; **Run now**, **Pause**, **Delete** on ``/schedule list``;
one missed while the bot was stopped runs once at the next start, with a note; a stopped
session is skipped with a note, or started when the entry says so. Times are seconds away
(``/schedule in 2s``), so the tests wait on the real clock for a few seconds only."""

from __future__ import annotations

import json
import re
import stat
import time
from datetime import datetime, timedelta

from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text, tool_use
from tests.e2e.test_control import command
from tests.e2e.test_decisions import custom_id, wait_prompt

OWNER_ONLY = "Only this bridge's owner can schedule prompts or change scheduled ones."


def schedule(rig, kind: str, options: dict, user: str = "alice") -> str:
    """``/schedule <kind>``: the answer the user sees."""
    return command(rig, f"schedule {kind}", options, user=user)


def entry_id(answer: str) -> str:
    assert answer.startswith("⏰ Scheduled `"), answer
    return answer.split("`")[1]


def entry_file(rig, sid: str):
    return rig.state_dir / "schedules" / f"{sid}.json"


def texts_sent(rig) -> list[str]:
    """The last user message of each request the model got."""
    return [last_user_text(r) for r in rig.api.requests]


def wait_sent(rig, text: str, timeout: float = 60) -> int:
    """The model got ``text`` as a request's last user message: that request's index."""

    def found() -> int | None:
        sent = texts_sent(rig)
        return next((i for i, t in enumerate(sent) if t.strip().endswith(text)), None)

    return wait_until(found, timeout, f"the model to get {text!r}")


def note(rig, contains: str, since: int, timeout: float = 30) -> dict:
    return rig.wait_bot_message(content_contains=contains, since=since, timeout=timeout)


def list_message(rig, user: str = "alice") -> dict:
    result = rig.discord.run_command(rig.ids["project-a"], "schedule list", user=user)
    assert result["ephemeral"] and result["response_type"] == 4, result
    return result["message"]


def edit(rig, message: dict, custom: str, contains: str) -> str:
    """Click a button of ``message``: the message as the click edited it in place."""
    since = rig.discord.mark()
    assert rig.discord.click(message["id"], custom)["response_type"] == 7
    edited = rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=message["id"],
        content_contains=contains,
        timeout=10,
    )
    return edited["message"]["content"]


def test_a_schedule_waits_for_the_turn_then_run_now_pause_and_delete(rig) -> None:
    raw = rig.config()
    raw["servers"][0]["discord"]["allowedUserIds"] = [rig.ids["bob"]]
    raw["servers"][0]["generalChannelId"] = rig.ids["general"]
    rig.write_config(raw)
    rig.api.script(
        tool_use("Bash", {"command": "touch waited.txt", "description": "Create a file"}),
        echo(),
        echo(),
        echo(),
    )
    rig.start_bot()

    # Scheduling is the owner's alone: an allowed user is refused and nothing is stored.
    assert schedule(rig, "in", {"prompt": "x", "delay": "1s"}, user="bob") == OWNER_ONLY
    assert list_message(rig, user="bob")["content"] == OWNER_ONLY
    assert not list((rig.state_dir / "schedules").glob("*.json"))
    assert "not a delay" in schedule(rig, "in", {"prompt": "x", "delay": "soon"})

    # A turn waits on a permission prompt when the schedule fires: the prompt waits too.
    rig.post("make a file")
    prompt = wait_prompt(rig)
    since = rig.discord.mark()
    answer = schedule(rig, "in", {"prompt": "scheduled ping", "delay": "2s"})
    sid = entry_id(answer)
    assert "(local time, " in answer and "once at" in answer, answer
    fired = note(rig, f"⏰ Scheduled prompt `{sid}`", since)
    assert "> scheduled ping" in fired["content"]
    assert len(rig.api.requests) == 1  # nothing typed into the dialog
    rig.discord.click(prompt["id"], custom_id(prompt, "Allow"))
    typed = wait_sent(rig, "scheduled ping")
    assert typed == 2, texts_sent(rig)  # its own request, after the turn's tool result
    assert "[tool_result]" in texts_sent(rig)[1] and "scheduled ping" not in texts_sent(rig)[1]
    rig.wait_reaction(fired)
    rig.wait_bot_message(content_contains="Model saw: scheduled ping", since=since)
    wait_until(lambda: not entry_file(rig, sid).exists(), 10, "the one-off to be done")

    # A daily prompt, shown on the control panel, run now by hand: its time stays.
    later = (datetime.now() + timedelta(hours=2)).strftime("%H:%M")
    since = rig.discord.mark()
    sid = entry_id(schedule(rig, "daily", {"prompt": "daily check", "time": later}))
    rig.discord.wait(
        since=since,
        kind="message_update",
        channel_id=rig.ids["general"],
        content_contains=f"`{sid}`",
        timeout=60,
    )
    path = entry_file(rig, sid)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    planned = json.loads(path.read_text())["next_run"]
    assert datetime.fromtimestamp(planned).strftime("%H:%M") == later
    listed = list_message(rig)
    assert f"`{sid}` · daily at {later} · next " in listed["content"], listed
    # the heading names the zone once; no entry repeats it
    assert listed["content"].count("local time") == 1, listed["content"]
    run_now = f"db:sch:run:{sid}"
    refused = rig.discord.click(listed["id"], run_now, user="bob")
    assert refused["message"]["content"] == OWNER_ONLY
    since = rig.discord.mark()
    clicked = rig.discord.click(listed["id"], run_now)
    assert clicked["message"]["content"].startswith(f"▶ Running `{sid}` now"), clicked
    assert f"`{sid}`" in note(rig, "run now by hand", since)["content"]
    wait_sent(rig, "daily check")
    rig.wait_bot_message(content_contains="Model saw: daily check", since=since)
    wait_until(lambda: json.loads(path.read_text()).get("last_result") == "typed", 10, "run")
    assert json.loads(path.read_text())["next_run"] == planned

    # Pause and Delete edit the list in place.
    assert edit(rig, listed, f"db:sch:pause:{sid}", "⏸ paused")
    assert json.loads(path.read_text())["paused"] is True
    stale = list_message(rig)  # a second list, still showing the entry after it is deleted
    assert f"`{sid}`" not in edit(rig, listed, f"db:sch:delete:{sid}", "None.")
    assert not path.exists()
    gone = rig.discord.click(stale["id"], run_now)["message"]["content"]
    assert gone.startswith("That scheduled prompt is gone"), gone


def test_a_prompt_missed_while_the_bot_was_stopped_runs_once_at_start(rig) -> None:
    rig.api.script(echo(), echo(), echo(), echo())
    rig.start_bot()
    rig.post("hello")
    rig.wait_bot_message(content_contains="Model saw: hello", timeout=60)

    sid = entry_id(schedule(rig, "in", {"prompt": "missed ping", "delay": "4s"}))
    later = (datetime.now() + timedelta(hours=2)).strftime("%H:%M")
    daily = entry_id(schedule(rig, "weekdays", {"prompt": "each weekday", "time": later}))
    listed = list_message(rig)  # its buttons are clicked after the restart
    rig.stop_bot()
    due = json.loads(entry_file(rig, sid).read_text())["next_run"]
    assert time.time() < due, "the bot stopped too slowly for this test"
    wait_until(lambda: time.time() > due + 0.5, 10, "the prompt's time to pass")
    since = rig.discord.mark()
    rig.start_bot()
    missed = note(rig, "Missed while the bot was off", since)
    assert f"`{sid}`" in missed["content"] and "Running it once now" in missed["content"]
    assert "(local time, " in missed["content"]
    wait_sent(rig, "missed ping")
    rig.wait_bot_message(content_contains="Model saw: missed ping", since=since, timeout=60)
    rig.wait_reaction(missed)
    # The queue puts the ✅ on once it typed the prompt; the scheduler, told at the same
    # moment, removes the one-off entry on a thread of its own: either may come first.
    wait_until(lambda: not entry_file(rig, sid).exists(), 10, "the one-off entry removed")
    assert sum(t.strip().endswith("missed ping") for t in texts_sent(rig)) == 1

    # The list posted before the restart still works: Pause, then Delete.
    assert f"`{daily}` · weekdays (Mon–Fri) at {later}" in listed["content"]
    assert "⏸ paused" in edit(rig, listed, f"db:sch:pause:{daily}", "⏸ paused")
    assert json.loads(entry_file(rig, daily).read_text())["paused"] is True
    edit(rig, listed, f"db:sch:delete:{daily}", "None.")
    assert not entry_file(rig, daily).exists()

    # A stopped session: skipped with a note, unless the entry says to start it.
    assert command(rig, "stop") == "Stopped **project-a**."
    since = rig.discord.mark()
    sid = entry_id(schedule(rig, "in", {"prompt": "not started", "delay": "1s"}))
    skipped = note(rig, f"⏭ Scheduled prompt `{sid}` skipped", since)
    assert "the session is stopped" in skipped["content"]
    assert rig.pane("project-a") is None
    sid = entry_id(schedule(rig, "in", {"prompt": "started ping", "delay": "1s", "start": True}))
    wait_sent(rig, "started ping")
    assert rig.pane("project-a") is not None
    assert not any(t.strip().endswith("not started") for t in texts_sent(rig))

    # In a thread: its own session, started for it; the note in the thread.
    thread = rig.discord.create_thread(rig.ids["project-a"], "nightly")["id"]
    since = rig.discord.mark()
    options = {"prompt": "thread ping", "delay": "1s", "start": True}
    answer = rig.discord.run_command(thread, "schedule in", options)["message"]["content"]
    sid = entry_id(answer)
    assert "in **project-a › nightly**, once at " in answer, answer
    rig.wait_bot_message(thread, content_contains=f"⏰ Scheduled prompt `{sid}`", since=since)
    wait_sent(rig, "thread ping")
    assert rig.tmux.find(thread) is not None


def test_a_prompt_is_scheduled_listed_and_run_from_the_try_page(rig, tmp_path) -> None:
    """The ``discord-bridge try`` page in headless Chromium: ``/schedule in`` through the
    command form fires and reaches the model; ``/schedule list``'s **Run now** and **Delete**
    work on the page's private answer."""
    from tests.e2e.test_try import TryProcess, chromium, open_page, shot, user_project

    project = user_project(rig)
    rig.api.script(echo(), echo())
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url())
            messages = page.locator("#messages")
            # The model's replies (not the live status message, which quotes a reply)
            replies = messages.locator(".content", has_text=re.compile(r"^Model saw:"))

            def command(name: str, **options: str) -> None:
                page.fill("#input", "/" + name[:6])
                page.locator(f"#command-picker div[data-name='{name}']").click()
                for option, value in options.items():
                    field = page.locator(f"#command-form [name={option}]")
                    if value in ("true", "false"):
                        field.select_option(value)
                    else:
                        field.fill(value)
                page.press("#input" if not options else "#command-form input >> nth=0", "Enter")

            command("schedule in", prompt="hello from the schedule", delay="2s", start="true")
            answer = messages.locator(".message.ephemeral", has_text="⏰ Scheduled")
            answer.wait_for()
            assert "(local time, " in answer.inner_text()
            messages.locator(".message", has_text="⏰ Scheduled prompt").wait_for()
            replies.filter(has_text="hello from the schedule").wait_for()
            assert "hello from the schedule" in last_user_text(rig.api.requests[0])
            shot(page, tmp_path, "schedule-fired")

            later = (datetime.now() + timedelta(hours=3)).strftime("%H:%M")
            command("schedule daily", prompt="daily from the page", time=later)
            messages.locator(".message.ephemeral", has_text="daily at").wait_for()
            command("schedule list")
            listed = messages.locator(".message.ephemeral", has_text="Scheduled prompts —")
            listed.get_by_role("button", name="▶ Run now 1").click()
            replies.filter(has_text="daily from the page").wait_for()
            shot(page, tmp_path, "schedule-list")
            kept = list(rig.state_dir.glob("try/*/state/schedules/*.json"))  # try's own dirs
            assert len(kept) == 1 and "daily from the page" in kept[0].read_text()
            listed.get_by_role("button", name="🗑 Delete 1").click()
            listed.locator(".content", has_text="None.").wait_for()
            assert not kept[0].exists()
            assert errors == []
    finally:
        code = started.stop()
    assert code == 0, started.output()
