"""While the owner is away: a usage limit resumes at its reset, a spend budget stops and asks.

The real Claude Code CLI against the fake Messages API: a subscriber login (OAuth token) gets
the API's real usage-limit refusal (429 with the ``anthropic-ratelimit-unified-*`` headers,
``fake_anthropic.usage_limit``), which the CLI shows as "You've hit your 5-hour limit" and
reports to StopFailure and the statusLine. Resets and margins are seconds, not hours.
"""

from __future__ import annotations

import json
import re
import time

from bridge_testkit import wait_until
from fake_anthropic import Turn, echo, text, tool_use, usage_limit
from tests.e2e.test_control import command

OAUTH = "sk-ant-oat01-fake"


def subscriber(rig, **top: object) -> None:
    """The panes log in as a claude.ai subscriber (only they see usage limits)."""
    del rig.env["ANTHROPIC_API_KEY"]
    rig.env["CLAUDE_CODE_OAUTH_TOKEN"] = OAUTH
    raw = rig.config()
    raw.update(top)
    rig.write_config(raw)


def message_now(rig, message: dict, project: str = "project-a") -> dict:
    return next(m for m in rig.discord.messages(rig.ids[project]) if m["id"] == message["id"])


def wait_edit(rig, message: dict, contains: str, timeout: float = 30.0) -> dict:
    found = {}

    def edited() -> bool:
        found["m"] = message_now(rig, message)
        return contains in found["m"]["content"]

    try:
        wait_until(edited, timeout, f"the message to say {contains!r}")
    except AssertionError as err:
        raise AssertionError(f"{err}\n{found.get('m')}\n{rig.diagnostics()}") from None
    return found["m"]


def buttons(message: dict) -> dict[str, str]:
    return {b["label"]: b["custom_id"] for row in message["components"] for b in row["components"]}


def wait_prompt(rig, n: int, prompt: str) -> dict:
    """The ``n``-th main request, whose last user text holds ``prompt``."""
    request = rig.api.wait_requests(n, timeout=45)[n - 1]
    assert prompt in rig.api.last_user_text(request), rig.api.last_user_text(request)
    return request


def test_a_usage_limit_resumes_at_the_reset_with_the_continue_prompt_across_a_restart(rig) -> None:
    """A limit hit → "⏸ Usage limit — resumes at …" with its buttons, once; the bot restarts
    while the session waits; at the (short) reset the continue prompt reaches the model and
    the message says so."""
    subscriber(rig, limits={"continuePrompt": "please go on", "resumeMarginSeconds": 1})
    resets_at = int(time.time()) + 30
    rig.api.script(usage_limit(resets_at), echo())
    rig.start_bot()
    rig.post("hit the limit")
    notice = rig.wait_bot_message(content_contains="Usage limit", timeout=45, status=True)
    notice = wait_edit(rig, notice, f"<t:{resets_at}:t>")  # the statusLine's, to the second
    content = notice["content"]
    assert content.startswith(f"⏸ Usage limit — resumes at <t:{resets_at}:t> (<t:{resets_at}:R>)")
    assert "You've hit your 5-hour limit" in content, content  # the CLI's own line
    assert "“please go on”" in content, content
    assert list(buttons(notice)) == ["Resume at reset", "Resume now", "Cancel"]
    assert not any("Claude Code stopped" in m["content"] for m in rig.bot_messages())
    assert len(rig.api.requests) == 1

    rig.stop_bot()  # the wait is in the state dir: the next bot takes it on
    assert (rig.state_dir / "away" / f"limit-{rig.ids['project-a']}.json").exists()
    rig.start_bot()
    wait_prompt(rig, 2, "please go on")
    assert time.time() >= resets_at  # not before the reset
    done = wait_edit(rig, notice, "▶️ Usage limit over")
    assert "typed “please go on”" in done["content"] and done["components"] == []
    reply = rig.wait_bot_message(content_contains="Model saw:", timeout=30)
    assert "please go on" in reply["content"]
    limits = [m for m in rig.bot_messages(status=True) if "Usage limit" in m["content"]]
    assert [m["id"] for m in limits] == [notice["id"]]  # one message, edited, after a restart
    # The watch edits the message, then forgets the wait (a bot killed between edits again).
    wait_until(lambda: not list((rig.state_dir / "away").glob("limit-*")), 10, "the wait forgotten")


def test_an_unknown_reset_says_so_and_resume_now_types_the_continue_prompt(rig) -> None:
    """A plain 429 (an API key: no usage headers, no reset time) waits with gentle polling,
    said in the message; **Resume now** types the continue prompt at once; **Cancel** from
    another user who is not allowed changes nothing."""
    rig.api.script(
        Turn(
            status=429,
            error_type="rate_limit_error",
            error_message="FAKE-LIMITED",
            headers={"x-should-retry": "false"},
        )
    )
    rig.start_bot()
    rig.post("rate limited")
    notice = rig.wait_bot_message(content_contains="Usage limit", timeout=45, status=True)
    assert "reset time unknown; trying again every 15 min" in notice["content"], notice
    refused = rig.discord.click(notice["id"], buttons(notice)["Cancel"], user="bob")
    assert refused["ephemeral"] and "Only this bridge's owner" in refused["message"]["content"]
    rig.api.reset()
    limited = Turn(
        status=429,
        error_type="rate_limit_error",
        error_message="FAKE-LIMITED",
        headers={"x-should-retry": "false"},
    )
    rig.api.script(limited, echo())
    rig.discord.click(notice["id"], buttons(notice)["Resume now"])
    wait_prompt(rig, 1, "continue")

    def edited_to(words: str) -> bool:
        return any(
            r["message"]["id"] == notice["id"] and words in r["message"]["content"]
            for r in rig.discord.records(kind="message_update")
        )

    wait_until(lambda: edited_to("typed “continue”"), 30, "the try said")
    # Still limited: the same message says so again, with its buttons (not a new message).
    again = wait_edit(rig, notice, "⏸ Usage limit — reset time unknown")
    rig.discord.click(notice["id"], buttons(again)["Resume now"])
    wait_prompt(rig, 2, "continue")
    wait_edit(rig, notice, "typed “continue”")
    limits = [m for m in rig.bot_messages(status=True) if "Usage limit" in m["content"]]
    assert [m["id"] for m in limits] == [notice["id"]], limits


def test_a_budget_crossed_warns_stops_before_a_tool_and_stop_then_continue_decide(rig) -> None:
    """80 % of the session's budget → a warning; past 100 % the next tool call is denied and
    the turn stops, with **Continue (+$N)** / **Stop** (the owner's only). **Stop**: the
    message says so, a prompt queued before stays queued (its notice says what it waits for)
    and the owner's next message is typed and answered, then the queued one; its tool call,
    still past the budget, stops again, and **Continue** raises the budget and types the
    continue prompt, and the turn goes on. One rig for both buttons: its cost is measured once."""
    raw = rig.config()
    raw["servers"][0]["projects"][0]["permission"] = "bypassPermissions"
    raw["servers"][0]["discord"]["allowedUserIds"] = [rig.ids["bob"]]  # drives, doesn't spend
    raw["servers"][0]["generalChannelId"] = rig.ids["general"]
    rig.write_config(raw)
    marker = rig.projects["project-a"] / "ran"
    rig.api.script(text("first answer"))
    rig.start_bot()
    rig.post("first")
    rig.wait_bot_message(content_contains="first answer", timeout=45)
    status = rig.runtime_dir / "status"

    def cost() -> float:
        return max(
            [json.loads(p.read_text()).get("cost_usd") or 0 for p in status.glob("*.json")] or [0]
        )

    wait_until(lambda: cost() > 0, 15, "the statusLine's cost")
    # The first answer is 85 % of the session's budget: the next API call crosses it.
    rig.stop_bot()
    raw["budget"] = {"sessionUsd": round(cost() / 0.85, 6), "continueUsd": 100}
    rig.write_config(raw)
    since = rig.discord.mark()
    rig.start_bot()
    warning = rig.wait_bot_message(content_contains="⚠️ Budget", timeout=30, since=since)
    assert "this session's budget is 85% used" in warning["content"], warning["content"]
    cap = raw["budget"]["sessionUsd"]
    left = f"session ${cap - cost():.2f} of ${cap:.2f} left"
    assert command(rig, "usage").splitlines()[-1] == f"Budget: {left}"
    panel = wait_until(
        lambda: next(
            (m for m in rig.bot_messages("general", status=True) if "💰" in m["content"]), None
        ),
        30,
        "the panel's budget",
    )
    assert f"💰 project-a: {left}" in panel["content"], panel["content"]  # one message, edited

    # Claude Code reports the cost to its statusLine a moment after an answer (debounced): a
    # tool taking a few seconds, as real ones do, lets the next call see it (and leaves time
    # to queue a prompt behind the turn).
    wait = {"command": "python3 -c 'import time; time.sleep(3)'", "description": "Wait"}
    touch = {"command": f"touch {marker}", "description": "Mark"}
    rig.api.script(
        tool_use("Bash", wait, text_before="x" * 4000),
        tool_use("Bash", touch),  # past the budget: denied
        echo(prefix="Owner said: "),  # the owner's next message, after Stop
        tool_use("Bash", touch),  # the queued prompt's: still past the budget, denied
        tool_use("Bash", touch),  # after Continue: it runs
        text("marked"),
    )
    asked = len(rig.api.requests)
    rig.post("go on working")
    wait_prompt(rig, asked + 1, "go on working")  # the turn runs
    rig.post(">> queued before the stop")
    queued = rig.wait_bot_message(content_contains="⏭ Queued (#1)")
    stop = rig.wait_bot_message(content_contains="🛑 Budget reached", timeout=45)
    assert "this session's budget" in stop["content"], stop["content"]
    assert list(buttons(stop)) == ["Continue (+$100.00)", "Stop"]
    assert not marker.exists()  # denied before it ran
    wait_until(
        lambda: any(
            "🛑 Stopped at the spend budget" in m["content"] for m in rig.bot_messages(status=True)
        ),
        30,
        "the turn's status to say it stopped at the budget",
    )
    asked = len(rig.api.requests)
    refused = rig.discord.click(stop["id"], buttons(stop)["Stop"], user="bob")
    assert refused["ephemeral"], refused  # an allowed user, not the owner: nothing changes
    assert "Only this bridge's owner can raise or keep" in refused["message"]["content"], refused

    rig.discord.click(stop["id"], buttons(stop)["Stop"])
    stopped = wait_edit(rig, stop, "⏹ Stopped at the budget by")
    assert "Queued prompts wait until you send one" in stopped["content"], stopped["content"]
    assert stopped["components"] == []
    # The queue looked again and holds (the notice says what from): nothing was typed.
    held = wait_edit(rig, queued, "stopped at the budget: typed after the next message you send")
    assert list(buttons(held)) == ["Send now", "Interrupt and send", "Cancel"]
    assert len(rig.api.requests) == asked and not marker.exists()

    since = rig.discord.mark()
    rig.post("the owner's next message")
    assert "queued before" not in rig.api.last_user_text(wait_prompt(rig, asked + 1, "owner's"))
    answer = rig.wait_bot_message(content_contains="Owner said:", timeout=45)  # it goes on
    assert "the owner's next message" in answer["content"], answer["content"]
    wait_prompt(rig, asked + 2, "queued before the stop")  # once that turn ended
    wait_edit(rig, queued, "✅ Typed (was queued).")

    again = rig.wait_bot_message(content_contains="🛑 Budget reached", timeout=45, since=since)
    assert again["id"] != stop["id"] and not marker.exists()  # Stop spent nothing more
    asked = len(rig.api.requests)
    refused = rig.discord.click(again["id"], buttons(again)["Continue (+$100.00)"], user="bob")
    assert refused["ephemeral"], refused
    assert len(rig.api.requests) == asked

    rig.discord.click(again["id"], buttons(again)["Continue (+$100.00)"])
    went_on = wait_edit(rig, again, "▶️ Continued by")
    # $100 past what was spent, not past the old cap (the turn overshot it: one answer can
    # cost more than the whole cap, and then the old cap + $100 could still be below it).
    spent, cap = map(float, re.search(r"\$(\d+\.\d\d) of \$(\d+\.\d\d)", again["content"]).groups())
    assert spent >= cap, again["content"]
    raised_to = float(re.search(r" to \$(\d+\.\d\d);", went_on["content"]).group(1))
    assert abs(raised_to - (spent + 100)) <= 0.011, (went_on["content"], again["content"])
    assert went_on["components"] == []
    wait_prompt(rig, asked + 1, "continue")
    rig.wait_bot_message(content_contains="marked", timeout=45)
    assert marker.exists()  # past the raised budget the tool ran


def test_a_usage_limit_shows_on_the_try_page_and_resume_now_types_the_continue_prompt(
    rig, tmp_path
) -> None:
    """The ``discord-bridge try`` page in headless Chromium, a subscriber login: a message
    whose turn hits the usage limit shows "⏸ Usage limit" with its three buttons; **Resume
    now** clicked on the page types the continue prompt (an hour before the reset) and the
    same message says so, its buttons gone. (The budget's buttons on the page: ``try
    --budget``, ``tests/e2e/test_try.py``.)"""
    from tests.e2e.test_try import TryProcess, chromium, open_page, shot, user_project

    project = user_project(rig)
    del rig.env["ANTHROPIC_API_KEY"]
    rig.env["CLAUDE_CODE_OAUTH_TOKEN"] = OAUTH
    resets_at = int(time.time()) + 2 * 3600 + 600  # far off: only the click resumes
    rig.api.script(usage_limit(resets_at), echo())
    started = TryProcess(tmp_path, rig.env, str(project), "--port", "0")
    try:
        with chromium() as browser:
            page, errors = open_page(browser, started.url(), locale="en-US", timezone_id="UTC")
            messages = page.locator("#messages")
            page.fill("#input", "hit the limit")
            page.press("#input", "Enter")
            notice = messages.locator(".message", has_text="⏸ Usage limit — resumes at")
            notice.wait_for()
            same = page.locator("#m-" + notice.get_attribute("data-id"))  # edited in place
            same.locator(".content", has_text="You've hit your 5-hour limit").wait_for()
            shown = same.inner_text().replace("\u202f", " ")  # ICU's narrow space before PM
            at = time.strftime("%-I:%M %p", time.gmtime(resets_at))
            assert f"⏸ Usage limit — resumes at {at} (in 2 hours)" in shown, shown
            assert "Then I type “continue” into the session." in shown, shown
            for name in ("Resume at reset", "Resume now", "Cancel"):
                same.get_by_role("button", name=name).wait_for()
            assert len(rig.api.requests) == 1
            shot(page, tmp_path, "usage-limit")

            same.get_by_role("button", name="Resume now").click()
            same.locator(".content", has_text="▶️ Usage limit over — typed “continue”").wait_for()
            assert same.get_by_role("button").count() == 0
            wait_prompt(rig, 2, "continue")  # typed into the session, to the model
            reply = messages.locator(".content", has_text=re.compile(r"^Model saw:"))
            reply.filter(has_text="continue").wait_for()  # the turn went on
            assert time.time() < resets_at
            shot(page, tmp_path, "usage-limit-resumed")
            assert errors == []
    finally:
        code = started.stop()
    assert code == 0, started.output()


def test_a_prompt_queued_before_a_usage_limit_waits_for_the_resume(rig) -> None:
    """A message queued (``>>``) while the turn runs, and the turn meets a usage limit: the
    queued prompt is not typed into the waiting session (it would meet the same limit and
    end the wait); once the session goes on (here **Resume now**) and that turn ends, it is."""
    subscriber(rig, limits={"continuePrompt": "please go on"})
    rig.api.script(
        tool_use("Bash", {"command": "sleep 3", "description": "Wait"}),
        usage_limit(int(time.time()) + 3600),
        echo(prefix="Saw: "),
        echo(prefix="Saw: "),
    )
    rig.start_bot()
    rig.wait_reaction(rig.post("work, then meet the limit"))
    rig.post(">> queued meanwhile")
    rig.wait_bot_message(content_contains="⏭ Queued (#1)")
    notice = rig.wait_bot_message(content_contains="Usage limit", timeout=45, status=True)
    time.sleep(8)  # the queue looks every 3 s; a turn's end counts from its events for 5 s
    assert len(rig.api.requests) == 2, [rig.api.last_user_text(r) for r in rig.api.requests]
    shown = [m["content"] for m in rig.bot_messages(status=True)]
    assert any(c.startswith("⏸ Stopped at a usage limit") for c in shown), shown  # the status
    assert not any("API error" in c or "Claude Code stopped" in c for c in shown), shown
    rig.discord.click(notice["id"], buttons(notice)["Resume now"])
    wait_prompt(rig, 3, "please go on")
    wait_prompt(rig, 4, "queued meanwhile")
    rig.wait_bot_message(content_contains="Saw: queued meanwhile", timeout=45)
