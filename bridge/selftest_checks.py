"""The selftest's checks, in order: what the owner does on Discord and what must follow.

Each check acts on the :class:`~bridge.selftest_bench.Bench` as the owner would (a message, a
click) and returns its ✓ line, or raises :class:`~bridge.selftest_bench.CheckFailed` with what
to do. Their own module: what is checked, apart from how it is set up and how it is reported.
"""

from __future__ import annotations

from collections.abc import Callable

from bridge.selftest_bench import WAIT, Bench, CheckFailed, one_line

FILE_MADE = "selftest-allowed.txt"  # what the allowed Bash command creates
COLOURS = ("Blue", "Green")  # the question's options; the owner picks the first
SLOW_TEXT = "selftest: this reply is never shown"  # the turn the interrupt stops


# ----- the checks, in order (each returns its ✓ line) -------------------------------------


def check_message_reaches_claude(bench: Bench) -> str:
    from fake_anthropic import text

    bench.api.script(text("selftest: the reply came back"))
    typed = "selftest: is this reaching Claude Code?"
    sent, since, before = bench.post(typed)
    delivered = lambda: _reacted(bench, sent) or _start_failure_reply(bench, since)  # noqa: E731
    bench.wait_for(
        delivered,
        "the message was not typed into Claude Code",
        f"see {bench.root / 'bot.log'}",
        since,
    )
    failure = _start_failure_reply(bench, since)
    if failure:
        raise CheckFailed(*failure)
    saw = bench.model_saw(
        before + 1,
        since,
        "the typed message did not reach the model",
        "Claude Code started but sent nothing to its API: see its screen",
    )
    if saw != typed:
        raise CheckFailed(
            f"the model got {saw!r} instead of {typed!r}",
            "the bridge typed it wrongly: report it, with this line",
        )
    return "Claude Code started in tmux; a message typed on Discord reached the model as sent"


def check_reply_posted(bench: Bench) -> str:
    bench.bot_message(
        bench.since,
        "selftest: the reply came back",
        "no reply was posted",
        "the Stop hook did not post: see state/logs/hooks.log; "
        "`discord-bridge hooks install` after reinstalling",
    )
    return "the reply was posted in the channel (the Stop hook)"


def check_permission(bench: Bench) -> str:
    from fake_anthropic import echo, tool_use

    command = {"command": f"touch {FILE_MADE}", "description": "selftest: make a file"}
    bench.api.script(tool_use("Bash", command), echo())
    _sent, since, before = bench.post("selftest: make a file")
    prompt = bench.bot_message(
        since,
        "Claude wants to use",
        "no permission prompt was posted",
        "the PermissionRequest hook did not post: see state/logs/hooks.log",
    )
    bench.emu.client.click(prompt["id"], _button(prompt, "Allow"))
    made = bench.project / FILE_MADE
    bench.wait_for(
        made.exists,
        "Allow did not run the command",
        "the decision did not reach Claude Code: see state/logs/hooks.log",
        since,
    )
    saw = bench.model_saw(
        before + 2,
        since,
        "the command's result did not reach the model",
        "see Claude Code's screen",
    )
    if "[tool_result]" not in saw:
        raise CheckFailed(
            f"the model got {saw[:120]!r} instead of the command's result",
            "see Claude Code's screen",
        )
    return "a permission prompt was posted; Allow ran the command"


def check_question(bench: Bench) -> str:
    from fake_anthropic import echo, tool_use

    options = [{"label": label, "description": f"the colour {label.lower()}"} for label in COLOURS]
    question = {
        "question": "Which colour?",
        "header": "Colour",
        "options": options,
        "multiSelect": False,
    }
    bench.api.script(tool_use("AskUserQuestion", {"questions": [question]}), echo())
    _sent, since, before = bench.post("selftest: ask me something")
    prompt = bench.bot_message(
        since,
        "Claude has a question",
        "no question was posted",
        "the PermissionRequest hook did not post the question: see state/logs/hooks.log",
    )
    bench.emu.client.click(prompt["id"], _button(prompt, COLOURS[0]))
    saw = bench.model_saw(
        before + 2,
        since,
        "the answer did not reach the model",
        "see Claude Code's screen and state/logs/hooks.log",
    )
    if COLOURS[0] not in saw:
        raise CheckFailed(
            f"the model got {saw[:160]!r}, not the answer {COLOURS[0]!r}",
            "the answer was lost on its way: report it, with this line",
        )
    return "a question was posted; the answer clicked reached the model"


def check_interrupt(bench: Bench) -> str:
    from fake_anthropic import text, tool_use

    start = {"command": "echo selftest-working", "description": "selftest: start working"}
    bench.api.script(tool_use("Bash", start), text(SLOW_TEXT, delay=WAIT))
    _sent, since, before = bench.post("selftest: take your time")
    # ⏹ once the model is "thinking" (the slow answer's request is in), as a person would,
    # seconds into the turn, on this turn's status (the one naming its tool: the last turn's
    # may still be closing). A first version clicked the first ⏳ it saw: the last turn's.
    bench.model_saw(
        before + 2, since, "the tool's result did not reach the model", "see Claude Code's screen"
    )
    status = bench.wait_for(
        lambda: _working_status(bench, since, "selftest-working"),
        "no ⏳ status with ⏹ was shown for the turn",
        "progress messages are missing: see bot.log",
        since,
    )
    bench.emu.client.click(status["id"], status["components"][0]["components"][0]["custom_id"])
    bench.wait_for(
        lambda: "Interrupted" in bench.screen(),
        "⏹ did not interrupt Claude Code",
        "the bridge's Escape did not reach the CLI: report it, with this line",
        since,
    )
    bench.wait_for(
        lambda: _status_says(bench, status["id"], "⏹ Interrupted"),
        "the status message did not say ⏹ Interrupted",
        "see bot.log",
        since,
    )
    return "⏹ interrupted a running turn"


CHECKS: tuple[Callable[[Bench], str], ...] = (
    check_message_reaches_claude,
    check_reply_posted,
    check_permission,
    check_question,
    check_interrupt,
)


# ----- reading the channel -----------------------------------------------------------------


def _reacted(bench: Bench, sent: dict) -> bool:
    return "✅" in bench.emu.client.reactions(bench.channel, sent["id"])


def _start_failure_reply(bench: Bench, since: int) -> tuple[str, str] | None:
    """The bot's "Not delivered" reply, as (what, fix): Claude Code could not start."""
    for record in bench.emu.client.records(since=since, kind="message_create"):
        content = str((record.get("message") or {}).get("content") or "")
        if record.get("channel_id") == bench.channel and content.startswith("⚠️ Not delivered"):
            head, _, advice = content.partition("**What to do:**")
            lines = [line for line in head.splitlines() if line and not line.startswith("```")]
            what = lines[0].removeprefix("⚠️ Not delivered to Claude Code: ").rstrip(".")
            words = [line for line in lines[1:] if line != "Its last words:"]
            said = f": {' / '.join(words)}" if words else ""
            return f"Claude Code did not start: {what}{said}", advice.strip() or "see bot.log"
    return None


def _working_status(bench: Bench, since: int, showing: str) -> dict | None:
    """This turn's status message (it names ``showing``) while it shows ⏳ and its ⏹."""
    records = bench.emu.client.records(since=since, kind="message_create")
    new = {r.get("message_id") for r in records if r.get("channel_id") == bench.channel}
    for message in bench.emu.client.messages(bench.channel):
        ours = message["id"] in new and message["author"]["id"] == bench.bot_id
        working = message["content"].startswith("⏳") and showing in message["content"]
        if ours and working and message.get("components"):
            return message
    return None


def _current(bench: Bench, message_id: str) -> dict | None:
    for message in bench.emu.client.messages(bench.channel):
        if message["id"] == message_id:
            return message
    return None


def _status_says(bench: Bench, message_id: str, start: str) -> bool:
    message = _current(bench, message_id)
    return message is not None and message["content"].startswith(start)


def _button(message: dict, label: str) -> str:
    for row in message.get("components") or []:
        for component in row["components"]:
            if str(component.get("label", "")).startswith(label):
                return component["custom_id"]
    raise CheckFailed(
        f"the prompt has no {label!r} button: {one_line(message['content'])!r}",
        "report it, with this line",
    )
