"""Discord → Claude Code → Discord with the real CLI, real tmux, the emulator and the bot."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from bridge_testkit import paths_under
from fake_anthropic import echo, last_user_text, text, tool_use

# Each test runs on every tested Claude Code version (bridge/claude/versions.py).
pytestmark = pytest.mark.claude_versions


def test_owner_prompt_reaches_model_and_reply_comes_back(rig) -> None:
    rig.api.script(text("I created hello.txt for you."))
    rig.start_bot()
    sent = rig.post("please create hello.txt")

    (request,) = rig.api.wait_requests(1, timeout=60)
    assert last_user_text(request) == "please create hello.txt"
    reply = rig.wait_bot_message(content_contains="I created hello.txt")
    assert reply["content"] == "I created hello.txt for you."
    assert reply["channel_id"] == rig.ids["project-a"]
    rig.wait_reaction(sent)


def test_multiline_message_is_one_prompt_and_long_text_is_not_a_paste(rig) -> None:
    rig.api.script(text("ok 1"), text("ok 2"))
    rig.start_bot()
    three_lines = "line one\nline two\nline three"
    rig.post(three_lines)
    rig.wait_bot_message(content_contains="ok 1")
    long_text = "".join(f"word{i:04d} " for i in range(200))[:1500]
    assert len(long_text) == 1500
    rig.post(long_text)
    rig.wait_bot_message(content_contains="ok 2")

    first, second = rig.api.wait_requests(2)
    assert last_user_text(first) == three_lines
    assert last_user_text(second) == long_text
    assert "pasted_content" not in str(second["messages"])


def test_control_characters_are_stripped_and_commands_defused(rig) -> None:
    rig.api.script(text("seen"))
    rig.start_bot()
    rig.post("!echo \x1b[31mpwned\x1b[0m\x07 and\ttab")
    rig.wait_bot_message(content_contains="seen")
    (request,) = rig.api.wait_requests(1)
    # Not run in bash mode: the model got the text, without the escape sequences. The tab
    # survives typing (as a small paste), and Claude Code itself expands it to four spaces.
    assert last_user_text(request).strip() == "!echo pwned and    tab"


def test_messages_from_others_and_bots_type_nothing(rig) -> None:
    rig.api.script(text("only alice"))
    rig.start_bot()
    rig.post("from bob: rm -rf /", user="bob")
    rig.post("from a bot", user="carol", bot=True)
    rig.post("from alice")
    rig.wait_bot_message(content_contains="only alice")
    (request,) = rig.api.wait_requests(1)
    assert last_user_text(request) == "from alice"
    screen = rig.screen()
    assert "from bob" not in screen and "from a bot" not in screen


def test_bot_restart_adopts_running_window(rig) -> None:
    rig.api.script(text("first"), text("second"))
    rig.start_bot()
    rig.post("hello before restart")
    rig.wait_bot_message(content_contains="first")
    pane_before = rig.pane().pane_id

    assert rig.stop_bot() == 0
    assert rig.pane() is not None and not rig.pane().dead  # Claude kept running
    rig.start_bot()
    rig.post("hello after restart")
    rig.wait_bot_message(content_contains="second")
    assert rig.pane().pane_id == pane_before
    assert [p.pane_id for p in rig.tmux.panes()] == [pane_before]
    assert last_user_text(rig.api.wait_requests(2)[1]) == "hello after restart"


def test_message_is_not_typed_into_an_open_permission_dialog(rig) -> None:
    rig.api.script(tool_use("Bash", {"command": "touch perm-x.txt", "description": "Make file"}))
    rig.start_bot()
    rig.wait_reaction(rig.post("make the file"))
    rig.tmux.wait_for(rig.pane().pane_id, lambda s: "Do you want to proceed?" in s, 30)

    sent = rig.post("yes do it")
    warning = rig.wait_bot_message(content_contains="dialog")  # not the prompt, not a status
    assert "your message was not sent" in warning["content"]
    assert "Answer the permission prompt first" in warning["content"]
    assert "✅" not in rig.discord.reactions(sent["channel_id"], sent["id"])
    screen = rig.screen()
    assert "Do you want to proceed?" in screen and "yes do it" not in screen
    assert not (rig.projects["project-a"] / "perm-x.txt").exists()
    assert len(rig.api.requests) == 1


def test_message_while_claude_works_is_queued_into_the_turn(rig) -> None:
    rig.api.script(text("slow answer", delay=3), echo(prefix="Saw: "))
    rig.start_bot()
    first = rig.post("first question")
    rig.wait_reaction(first)
    second = rig.post("follow-up while busy")
    rig.wait_reaction(second)
    rig.wait_bot_message(content_contains="follow-up while busy", timeout=60)
    assert "follow-up while busy" in str(rig.api.wait_requests(2)[1]["messages"])


def test_text_survives_tmux_separators_and_leading_newlines_do_not_unlock_commands(rig) -> None:
    rig.api.script(text("one"), text("two"))
    rig.start_bot()
    ending = "x" * 99 + ";" + " then ls -la;"  # a ';' at a 100-char boundary and at the end
    rig.post(ending)
    rig.wait_bot_message(content_contains="one", timeout=60)
    rig.post("\n\r\n/model haiku")  # would switch the model if typed as a slash command
    rig.wait_bot_message(content_contains="two", timeout=60)
    first, second = rig.api.wait_requests(2)
    assert last_user_text(first) == ending
    assert last_user_text(second).strip() == "\\/model haiku"
    assert second["model"] == first["model"]


def test_a_slash_command_behind_a_unicode_space_reaches_the_model_as_text(rig) -> None:
    """Claude Code trims every Unicode space (NBSP, U+3000 …) before it looks for a slash
    command: ``"\\u00a0/model haiku"`` once switched the model and saved it as the default."""
    rig.api.script(text("one"), text("two"))
    rig.start_bot()
    rig.post("\u00a0/model haiku")
    rig.wait_bot_message(content_contains="one", timeout=60)
    rig.post("\u3000 \u2003/model sonnet")
    rig.wait_bot_message(content_contains="two", timeout=60)
    first, second = rig.api.wait_requests(2)
    assert last_user_text(first).strip() == "\\/model haiku"
    assert last_user_text(second).strip() == "\\/model sonnet"
    assert first["model"] == second["model"]
    assert "haiku" not in first["model"] and "sonnet" not in first["model"]


def test_two_projects_started_at_once_each_answer_in_their_channel(rig) -> None:
    rig.api.script(echo(prefix="Saw: "), echo(prefix="Saw: "))
    rig.start_bot()
    since = rig.discord.mark()
    rig.post("to project a", project="project-a")
    rig.post("to project b", project="project-b")
    a = rig.wait_bot_message("project-a", 60, since, content_contains="Saw:")
    b = rig.wait_bot_message("project-b", 60, since, content_contains="Saw:")
    assert a["content"] == "Saw: to project a"
    assert b["content"] == "Saw: to project b"
    assert sorted(p.window_name for p in rig.tmux.panes()) == ["project-a", "project-b"]


def tmux_calls(rig) -> tuple[dict[str, str], Path]:
    """A ``tmux`` first on the bot's PATH that writes down each command line, then runs tmux:
    the bot's environment, and the file where its tmux processes are listed."""
    calls, shim = rig.tmp / "tmux-calls", rig.tmp / "shim"
    shim.mkdir()
    real = shutil.which("tmux")
    assert real is not None
    log, run = shlex.quote(str(calls)), shlex.quote(real)
    (shim / "tmux").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {run} "$@"\n')
    (shim / "tmux").chmod(0o755)
    return {"PATH": f"{shim}:{rig.env['PATH']}"}, calls


def test_hostile_text_reaches_the_model_as_typed_and_nothing_of_it_reaches_tmux(rig) -> None:
    # Typed over the bot's one tmux control connection as hex bytes (send-keys -H): tmux's
    # command parser sees only [0-9a-f], whatever the text holds; pieces of 100 characters.
    # Then a whole Discord message of it, every hostile part at another offset of a piece.
    from bridge.sessions.typed_text import sanitize_prompt

    rig.api.script(text("typed"), text("typed long"))
    env, calls = tmux_calls(rig)
    rig.start_bot(env=env)
    hostile = (
        'it\'s "quoted" ; kill-server ; #{pane_id} #(touch PWNED) $HOME ~/x \\ back\\slash;\n'
        "second line; é\u0301 👩\u200d👩\u200d👧 🏴\U000e0067\U000e0062\U000e0073\U000e0063"
        "\U000e0074\U000e007f 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \x01\x7f \x1b[2J\x1b]0;title\x07 \x1b\x03\x15 \r\n"
        "'; send-keys -t %0 C-c ; '" + "x" * 60 + " ends with ;"
    )
    rig.post(hostile)
    rig.wait_bot_message(content_contains="typed", timeout=60)
    long = "".join(f"[{i}{'y' * (i * 7)}]{hostile}" for i in range(7))
    assert 1800 < len(long) <= 2000  # a Discord message's limit
    rig.post(long)
    rig.wait_bot_message(content_contains="typed long", timeout=60)

    first, second = rig.api.wait_requests(2)
    # What Claude took as the prompt is the text as sent, but for the escape sequences and
    # control characters the bridge drops before typing (a \r\n is a line break)
    assert last_user_text(first) == sanitize_prompt(hostile)
    assert "\x1b" not in sanitize_prompt(hostile) and "#{pane_id}" in sanitize_prompt(hostile)
    assert last_user_text(second) == sanitize_prompt(long)
    assert "pasted_content" not in str(second["messages"])
    assert not any(p.name == "PWNED" for p in paths_under(rig.tmp))
    assert rig.pane() is not None  # the server still runs: no kill-server
    assert rig.bot_output().count("typed message") == 2
    # No tmux command line carried the text: what typing ran as a process (while the control
    # connection is not up yet) is hex bytes too; the rest went over the connection.
    lines = calls.read_text().splitlines()
    typed = [line.split(" send-keys ", 1)[1] for line in lines if " send-keys " in line]
    for command in typed:
        assert command.startswith(("-H -t ", "-t ")), command
        if command.startswith("-H"):
            assert re.fullmatch(r"-H -t %\d+( [0-9a-f]{2})+", command), command
        else:
            assert re.fullmatch(r"-t %\d+( [A-Za-z-]+)+", command), command  # key names
    assert "kill-server" not in "".join(lines) and "PWNED" not in "".join(lines)
