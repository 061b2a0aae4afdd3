"""Readable output with the real CLI: the footer from the statusLine the CLI runs (next to the
user's own statusLine, still shown in the terminal), Markdown tables as aligned code blocks,
and a very long reply cut short with the whole of it attached."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from pathlib import Path

from fake_anthropic import text
from tests.e2e.test_control import command


def wait_until(condition, timeout: float, what: str, rig) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen in {timeout} s\n{rig.diagnostics()}")
        time.sleep(0.1)


def reported_inputs(folder: Path) -> list[dict]:
    """Every stdin the CLI gave the user's statusLine command (one file per run)."""
    inputs = []
    for path in sorted(folder.glob("*.json")):
        try:
            inputs.append(json.loads(path.read_text()))
        except ValueError:
            continue  # being written right now
    return inputs


def cached_with_context(rig) -> list[dict]:
    records = [json.loads(p.read_text()) for p in (rig.runtime_dir / "status").glob("*.json")]
    return [r for r in records if r.get("context_percent") is not None]


def test_footer_shows_what_the_cli_reported_and_the_users_status_line_still_shows(
    rig, tmp_path
) -> None:
    # The user's own statusLine, there before the bridge's hooks are installed over it.
    inputs = tmp_path / "statusline-inputs"
    inputs.mkdir()
    script = tmp_path / "my-status-line.sh"
    script.write_text(
        f'#!/bin/sh\ncat > "{inputs}/.$$.tmp" && mv "{inputs}/.$$.tmp" "{inputs}/$$.json"\n'
        "echo MY-STATUS-LINE\n"
    )
    script.chmod(0o755)
    settings_path = rig.claude_home / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    settings["statusLine"] = {"type": "command", "command": str(script)}
    settings_path.write_text(json.dumps(settings))
    rig.install_hooks()
    assert "discord-bridge" in json.loads(settings_path.read_text())["statusLine"]["command"]

    raw = rig.config()
    raw["replies"] = {"footer": True}
    rig.write_config(raw)
    rig.api.script(text("first answer"), text("second answer"))
    rig.start_bot()
    rig.post("first question")
    rig.wait_bot_message(content_regex=r"^first answer", timeout=60)  # not a progress message
    # The CLI refreshes its statusLine after an API response; the Stop hook of this first turn
    # may have run before that refresh. Once the cache holds context usage, the next reply's
    # footer must show it.
    wait_until(lambda: cached_with_context(rig), 30, "a statusLine refresh with context %", rig)
    wait_until(lambda: "MY-STATUS-LINE" in rig.screen(), 30, "the user's statusLine", rig)

    rig.post("second question")
    reply = rig.wait_bot_message(content_regex=r"^second answer", timeout=60)
    body, footer = reply["content"].rsplit("\n", 1)
    assert body.rstrip() == "second answer"
    assert footer.startswith("-# "), reply["content"]
    model, context, cost = footer.removeprefix("-# ").split(" · ")[:3]  # then maybe a mention

    reported = reported_inputs(inputs)
    assert reported, "the user's statusLine command never got the CLI's input"
    assert model in {r["model"]["display_name"] for r in reported}
    assert model == "Opus 5.5"  # the CLI's default model, as the fake API serves it
    percents = {r["context_window"]["used_percentage"] for r in reported}
    assert context in {f"ctx {p:.0f}%" for p in percents if p is not None}
    assert cost in {f"${r['cost']['total_cost_usd']:.2f}" for r in reported}
    assert "MY-STATUS-LINE" in rig.screen()


def width(cell: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in cell)


def test_markdown_table_arrives_as_an_aligned_table_in_a_code_block(rig) -> None:
    table = (
        "| name | value | note |\n"
        "|:-----|------:|------|\n"
        "| **alpha** | 1 | first |\n"
        "| 日本語 | 12345 | wide \\| piped |\n"
        "| `beta` | 7 | |"
    )
    rig.api.script(text(f"Here are the results:\n\n{table}\n\nThat is all."))
    rig.start_bot()
    rig.post("show me a table")
    message = rig.wait_bot_message(content_regex=r"^Here are the results", timeout=60)

    content = message["content"]
    assert content.startswith("Here are the results:\n\n```\n")
    assert "\n```\n\nThat is all." in content
    rows = content.split("```\n", 1)[1].split("\n```", 1)[0].split("\n")
    assert rows == [
        "name   | value | note",
        "-------+-------+-------------",
        "alpha  |     1 | first",
        "日本語 | 12345 | wide | piped",
        "beta   |     7 |",
    ]
    # every separator sits in the same display column, wide characters counted twice
    first_bar = {width(row.split(" | ")[0]) for row in rows if " | " in row}
    assert first_bar == {6}


def test_very_long_reply_posts_its_start_and_attaches_the_whole(rig) -> None:
    raw = rig.config()
    raw["replies"] = {"attachAfterMessages": 2}
    rig.write_config(raw)
    reply = "\n\n".join(f"Section {i}. " + "lorem ipsum " * 120 for i in range(6))
    reply += "\n\n```text\n" + "\n".join(f"row {i}" for i in range(50)) + "\n```\n\nThe end."
    assert len(reply) > 4 * 2000
    rig.api.script(text(reply))
    rig.start_bot()
    rig.post("write a lot")
    last = rig.wait_bot_message(has_files=True, timeout=60)
    first = rig.wait_bot_message(content_regex=r"^Section 0\. lorem ipsum", timeout=10)

    # one message of the reply itself (other bot messages, such as progress, may be around)
    reply_messages = [m for m in rig.bot_messages() if re.match(r"Section \d", m["content"])]
    assert [m["id"] for m in reply_messages] == [first["id"]]
    assert int(first["id"]) < int(last["id"]) and len(first["content"]) <= 2000
    assert "The full reply is attached as `reply.md`" in last["content"]
    assert [a["filename"] for a in last["attachments"]] == ["reply.md"]
    assert rig.discord.file_bytes(last["attachments"][0]) == reply.encode()


def test_the_first_reply_of_a_fresh_session_ends_with_model_and_context(rig) -> None:
    # Regression: the CLI refreshes its statusLine after the Stop hook has run, so a session's
    # first reply never had a footer (and a later one sometimes lacked it). The footer now
    # takes model and context from the transcript's last API usage when the cache is older.
    # The model has one name there, in /status, /usage and the panel: never its id or
    # "default model" beside it.
    rig.install_hooks()
    raw = rig.config()
    raw["replies"] = {"footer": True}
    raw["servers"][0]["generalChannelId"] = rig.ids["general"]
    rig.write_config(raw)
    rig.api.script(text("the very first answer"))
    rig.start_bot()
    rig.post("first question of this session")
    reply = rig.wait_bot_message(content_regex=r"^the very first answer", timeout=60)

    body, footer = reply["content"].rsplit("\n", 1)
    assert body.rstrip() == "the very first answer"
    match = re.match(r"-# Opus 5\.5 · ctx (\d+)%", footer)
    assert match, reply["content"]
    # The same figure the CLI itself reports for this turn, once its statusLine refreshes.
    wait_until(lambda: cached_with_context(rig), 30, "a statusLine refresh with context %", rig)
    reported = cached_with_context(rig)[0]
    assert int(match[1]) == round(reported["context_percent"])
    assert reported["model_name"] == "Opus 5.5"

    assert "\nmodel: Opus 5.5 (default)\n" in command(rig, "status")
    assert "This session: $" in (usage := command(rig, "usage")) and "· Opus 5.5\n" in usage
    general = rig.ids["general"]
    panel = rig.discord.wait(
        since=0, kind="message_create", channel_id=general, author_id=rig.ids["bot_id"], timeout=30
    )["message"]
    rig.discord.click(panel["id"], "db:panel:refresh:0")  # no edit if it says so already
    wait_until(
        lambda: " · Opus 5.5 (default) · " in panel_text(rig, panel["id"]),
        30,
        "the panel's model",
        rig,
    )


def panel_text(rig, message_id: str) -> str:
    return next(
        m["content"] for m in rig.discord.messages(rig.ids["general"]) if m["id"] == message_id
    )
