"""Why Claude Code did not start, from what its dead pane left (screens measured on 2.1.332)."""

from __future__ import annotations

from bridge.claude import start_failure as sf
from bridge.sessions.start_failed import ClaudeDidNotStart, did_not_start
from bridge.tmux import PaneExited

# The screen of an empty HOME offline (2.1.332 in a 160x45 pane), as capture-pane gave it.
ENOTFOUND_SCREEN = """\
Welcome to Claude Code v2.1.332
..........................................................
     *                                       █████▓▓░
                                 *         ███▓░     ░░
            ░░░░░░                        ███▓░
.......█ █   █ █..........................................

 Unable to connect to Anthropic services

 Failed to connect to api.anthropic.com: ENOTFOUND

 Check your internet connection and network settings.

 Claude Code might not be available in your country. Check supported countries at https://anthropic.com/supported-countries
Pane is dead (status 1, Wed Nov 25 12:04:01 2026)
"""


def test_the_offline_first_start_is_named_in_the_clis_own_words() -> None:
    failure = sf.diagnose(ENOTFOUND_SCREEN, 1, "claude")
    assert failure.kind == sf.UNREACHABLE and failure.status == 1
    assert failure.words == (
        "Welcome to Claude Code v2.1.332",
        "Unable to connect to Anthropic services",
        "Failed to connect to api.anthropic.com: ENOTFOUND",
        "Check your internet connection and network settings.",
        "Claude Code might not be available in your country. Check supported countries at "
        "https://anthropic.com/supported-countries",
    )
    text = sf.discord_text(failure, "⚠️ Not delivered to Claude Code")
    assert text.startswith(
        "⚠️ Not delivered to Claude Code: Claude Code could not reach Anthropic's service "
        "(exit status 1).\nIts last words:\n```\nWelcome to Claude Code v2.1.332\n"
    )
    assert "run `claude` once in a terminal" in text and "Pane is dead" not in text
    assert "█" not in text and len(text) < 2000


def test_a_command_that_is_not_there_names_the_setting_to_fix() -> None:
    for failure in (
        sf.diagnose(
            "\n" * 49 + "Pane is dead (status 127, Wed Nov 25 12:04:01 2026)", 127, "claudx"
        ),
        sf.diagnose("env: 'claudx': No such file or directory\n", None, "claudx"),
        sf.diagnose("", None, "claudx", found=False),  # tmux kept neither words nor status
    ):
        assert failure.kind == sf.NOT_FOUND, failure
        text = sf.discord_text(failure, "⚠️ Not delivered to Claude Code")
        assert "`claudx` was not found" in text and "`claudeCommand`" in text
    quiet = sf.diagnose("", None, "claudx", found=False)
    assert "It printed nothing before it exited." in sf.discord_text(quiet, "⚠️")


def test_other_exits_say_how_to_see_why() -> None:
    assert sf.diagnose("", 126, "/etc/passwd").kind == sf.NOT_EXECUTABLE
    refused = (
        "error: option '--permission-mode <mode>' argument 'Manual' is invalid. Allowed "
        "choices are acceptEdits, auto."
    )
    assert sf.diagnose(refused, 1, "claude").kind == sf.BAD_ARGUMENTS
    other = sf.diagnose("Segmentation fault\n", 139, "claude", found=True)
    assert other.kind == sf.EXITED
    assert "Run `claude` in a terminal in the project's directory" in other.advice
    assert "discord-bridge selftest" in other.advice


def test_what_is_quoted_cannot_break_out_of_its_code_block() -> None:
    failure = sf.diagnose("oops ``` out\n@everyone look\n" + "x" * 500 + "\n", 1, "c`md")
    text = sf.discord_text(failure, "⚠️")
    assert text.count("```") == 2 and "'''" in text
    assert max(len(line) for line in failure.words) == sf.LINE_SHOWN
    assert "`c'md`" in text


def test_a_pane_exit_becomes_an_error_the_bot_can_show() -> None:
    err = did_not_start(PaneExited("%1", ENOTFOUND_SCREEN, 1), "claude")
    assert isinstance(err, ClaudeDidNotStart)
    assert str(err).startswith("Claude Code could not reach Anthropic's service (exit status 1): ")
    assert err.discord_text().startswith("⚠️ Claude Code did not start: Claude Code could not")


def test_a_codex_that_did_not_start_is_named_in_codexs_terms() -> None:
    from bridge.codex.launch import START_WORDING

    dead = PaneExited("%1", "\n" * 49 + "Pane is dead (status 127, Sun Nov 29 09:30:00 2026)", 127)
    text = did_not_start(dead, "codx", START_WORDING).discord_text()
    assert text.startswith("⚠️ Codex did not start: the Codex command was not found")
    assert "`codx` was not found: set `codexCommand`" in text and "@openai/codex" in text
    assert "Claude" not in text and "claudeCommand" not in text
    # an option it refused, as 0.171.0 words it
    refused = "error: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value"
    failure = sf.diagnose(refused, 2, "codex", wording=START_WORDING)
    assert failure.kind == sf.BAD_ARGUMENTS
    assert failure.headline() == "Codex refused its command line (exit status 2)"
    assert "check `codexArgs` and `model` in the config against `codex --help`" in failure.advice
