"""Why Claude Code could not start, in its own words, and what to do about it.

A pane that dies before Claude Code shows its input box leaves two things behind (tmux keeps
the window with ``remain-on-exit``): its last screen and its exit status. Measured on 2.1.332:

- a HOME where Claude Code never ran, on a machine that cannot reach Anthropic: the welcome
  art, then ``Unable to connect to Anthropic services`` / ``Failed to connect to
  api.anthropic.com: ENOTFOUND`` (``ECONNREFUSED`` through a dead proxy) …, exit 1 after 1.3 s;
- a ``claudeCommand`` that names no program: exit 127 in ~10 ms, and tmux often keeps not a
  word of the ``not found`` line (4 of 4 fast deaths measured);
- not logged in, or the service unreachable later on: Claude Code starts, and the first
  prompt fails with StopFailure (``bridge/claude/api_errors.py``), not here.

Pure functions over the captured text (the error the bot gets is
``bridge.sessions.start_failed.ClaudeDidNotStart``): the bot's reply
(``bridge/bot/turn/relay.py``), the slash commands, the panel and ``discord-bridge selftest``
all say the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WORDS_SHOWN = 8  # the screen's last meaningful lines quoted
LINE_SHOWN = 160  # characters per quoted line
_WORD = re.compile(r"[^\W\d_]{2,}")  # two letters in a row: text, not the welcome art
_DEAD = re.compile(r"^Pane is dead \(")  # tmux's own remain-on-exit line

UNREACHABLE = "unreachable"
NOT_FOUND = "not found"
NOT_EXECUTABLE = "not executable"
BAD_ARGUMENTS = "bad arguments"
EXITED = "exited"

SELFTEST_HINT = "`discord-bridge selftest` checks Claude Code with the bridge, offline"


@dataclass(frozen=True)
class Wording:
    """How a failure names the agent CLI that did not start and what to fix: Claude Code's
    below; Codex's is ``bridge.codex.launch.START_WORDING``."""

    label: str  # "Claude Code"
    command_key: str  # its command's config key
    args_key: str  # its extra args' config key
    program: str  # its usual program name, for `command -v`
    install: str  # how to install it
    bad_arguments: str  # a regular expression: its words for an option it refused
    checked: str  # what the args are checked against, beside args_key
    selftest: str  # where the selftest checks it


CLAUDE = Wording(
    "Claude Code",
    "claudeCommand",
    "claudeArgs",
    "claude",
    "npm install -g @anthropic-ai/claude-code",
    r"^error: (unknown )?option|is invalid\. Allowed choices",
    ", `model` and `permission`",
    SELFTEST_HINT,
)


@dataclass(frozen=True)
class StartFailure:
    kind: str  # one of the constants above
    status: int | None  # the exit status, when tmux knew it
    words: tuple[str, ...]  # the screen's last meaningful lines, as the CLI printed them
    advice: str  # what to do, one or two sentences
    label: str = CLAUDE.label  # the agent CLI that did not start

    def headline(self) -> str:
        """One line: what happened (for selftest, doctor and the log)."""
        status = f" (exit status {self.status})" if self.status is not None else ""
        label = self.label
        return {
            UNREACHABLE: f"{label} could not reach Anthropic's service{status}",
            NOT_FOUND: f"the {label} command was not found{status}",
            NOT_EXECUTABLE: f"the {label} command could not be run{status}",
            BAD_ARGUMENTS: f"{label} refused its command line{status}",
        }.get(self.kind, f"{label} exited as it started{status}")


def diagnose(
    screen: str,
    status: int | None,
    command: str,
    found: bool | None = None,
    wording: Wording = CLAUDE,
) -> StartFailure:
    """What a dead pane's ``screen`` and exit ``status`` say about starting ``command`` (the
    project's ``claudeCommand``, or the ``wording``'s agent's); ``found``: whether the command
    is on PATH (None: not asked)."""
    words = tuple(last_words(screen))
    failure = _diagnosis(words, status, f"`{_tick_free(command)}`", found, wording)
    return StartFailure(failure[0], status, words, failure[1], wording.label)


def _diagnosis(
    words: tuple[str, ...], status: int | None, program: str, found: bool | None, say: Wording
) -> tuple[str, str]:
    """The failure's kind and what to do about it."""
    text = "\n".join(words)
    if "Unable to connect to Anthropic services" in text or "Failed to connect to api." in text:
        advice = (
            "Check the network of the machine the bot runs on (DNS, firewall, a proxy in "
            "HTTPS_PROXY). Where Claude Code has never run for the "
            "bot's user, run `claude` once in a terminal as that user (log in, pick a theme): "
            "that first start is the check that failed. Then send your message again."
        )
        return UNREACHABLE, advice
    if status == 127 or found is False or re.search(r"not found|No such file or dir", text):
        advice = (
            f"{program} was not found: set `{say.command_key}` in the bridge's config to the "
            f"path `command -v {say.program}` prints in a terminal, or install {say.label} "
            f"({say.install}). The bot looks it up on its own PATH."
        )
        return NOT_FOUND, advice
    if status == 126 or "Permission denied" in text:
        return NOT_EXECUTABLE, (
            f"{program} is not a program you may run: fix `{say.command_key}` in the config."
        )
    if re.search(say.bad_arguments, text, re.M):
        advice = (
            f"{say.label} did not accept the options it was started with: check "
            f"`{say.args_key}`{say.checked} in the config against `{say.program} --help`."
        )
        return BAD_ARGUMENTS, advice
    advice = (
        f"Run {program} in a terminal in the project's directory to see why; "
        f"`discord-bridge doctor` checks the set-up and {say.selftest}."
    )
    return EXITED, advice


def last_words(screen: str, limit: int = WORDS_SHOWN) -> list[str]:
    """The screen's last ``limit`` lines that say something: blank lines, the welcome art
    (block characters, dots and stars) and tmux's "Pane is dead" line left out."""
    lines = [" ".join(line.split()) for line in screen.splitlines()]
    said = [line for line in lines if _WORD.search(line) and not _DEAD.match(line)]
    return [_cut(line) for line in said[-limit:]]


def discord_text(failure: StartFailure, lead: str) -> str:
    """What happened after ``lead`` ("⚠️ Not delivered to Claude Code"), Claude Code's own
    words in a code block, and what to do."""
    head = f"{lead}: {failure.headline()}."
    if failure.words:
        quoted = "\n".join(failure.words).replace("```", "'''")
        body = f"Its last words:\n```\n{quoted}\n```"
    else:
        body = "It printed nothing before it exited."
    return f"{head}\n{body}\n**What to do:** {failure.advice}"


def _cut(line: str) -> str:
    return line if len(line) <= LINE_SHOWN else line[: LINE_SHOWN - 1] + "…"


def _tick_free(text: str) -> str:
    return text.replace("`", "'")[:200]
