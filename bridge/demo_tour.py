"""The scripted model of ``discord-bridge try --demo``: a tour of the bridge, no Claude needed.

The fake Messages API (``fake_anthropic``) asks :class:`Tour` for each answer. It reads the
request as a model would: the owner's last typed prompt picks a step of the tour by a keyword
in it (``edit``, ``question``, ``plan``, ``slow``, ``run``), and the tool calls made since that
prompt say how far the step has got (the edit reads the file, then edits it, then replies).
It keeps no state of its own, so a message typed twice, a click refused or a turn interrupted
starts the step again. Every text it answers starts with :data:`MARK`: no one should take a
scripted answer for Claude's.

Everything it does stays inside the demo's own project (``greet.py``, a ``demo.txt`` touched):
the tool calls it asks for are fixed here, never built from what was typed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fake_anthropic import Turn, last_user_text, text, tool_use

MARK = "(demo: a scripted model answered)"
GREETING_FILE = "greet.py"
GREETINGS = ('print("Hello, " + name)', 'print(f"Hello, {name}!")')  # what the edit swaps
PROJECT_FILES = {
    "README.md": "# demo\n\nA throwaway project for `discord-bridge try --demo`.\n",
    GREETING_FILE: f"def greet(name):\n    {GREETINGS[0]}\n    return 0\n",
}
SLOW_SECONDS = 15.0  # the slow step's wait: time to queue a message behind it with >>
COMMAND = {"command": "touch demo.txt && ls", "description": "Make a file in the demo project"}
QUESTION = {
    "question": "Which greeting should greet.py use?",
    "header": "Greeting",
    "options": [
        {"label": "Hello", "description": "as it is"},
        {"label": "Bonjour", "description": "in French"},
        {"label": "Hola", "description": "in Spanish"},
    ],
    "multiSelect": False,
}
PLAN = (
    "# Friendlier greetings\n\n1. Greet by name with an exclamation mark\n"
    "2. Add a farewell\n3. Add a test for both\n"
)

TRY = """• `hello`: a reply
• `run a command`: a permission prompt, **Allow** it
• `edit`: an edit and its diff, then the turn's **Diff** button, where a line can be commented on
• `slow`, then `>> and then this` while it works: a message queued behind the turn
• `question`: a question to answer with a button
• `/mode plan` (pick plan), then `plan`: a plan to approve"""
WELCOME = (
    "👋 **This is a demo**: a scripted model answers instead of Claude, in a throwaway "
    "project, so nothing is used up and none of your files is touched. Type one of these:\n"
    f'{TRY}\nEvery answer here starts with "{MARK}". The $ figures are what Claude Code '
    "counts for those answers: nothing is charged."
)

Request = dict[str, Any]


def reply(body: str, delay: float = 0.0) -> Turn:
    """The turn's answer, marked as the demo's."""
    return text(f"{MARK}\n{body}", delay=delay)


class Tour:
    """``responder`` for the fake API: the next turn for a request, in ``project``; Claude
    Code's HOME is ``home``, where plan mode keeps its plans."""

    def __init__(self, project: Path, home: Path) -> None:
        self.project = project
        # The plan file plan mode's system reminder names: only one in the demo's HOME
        # (the request holds what the owner typed too, which must never pick a path).
        homes = sorted({str(home), os.path.realpath(home)})  # /tmp is /private/tmp on macOS
        plans = "|".join(re.escape(f"{path}/.claude/plans/") for path in homes)
        self.plan_file = re.compile(rf"(?<![\w/.-])((?:{plans})[\w-]+\.md)\b")
        self.steps: dict[str, Callable[[Request, list[str], str], Turn]] = {
            "plan": self.plan,
            "question": self.question,
            "edit": self.edit,
            "slow": self.slow,
            "run": self.command,
        }

    def __call__(self, request: Request) -> Turn:
        prompt, since = prompt_and_after(request)
        tools = tool_calls(since)
        result = last_result(request)
        for keyword, step in self.steps.items():
            if re.search(rf"\b{keyword}", prompt, re.IGNORECASE):
                return step(request, tools, result)
        return reply(f"Hello! I am the demo's scripted model. Type one of these:\n{TRY}")

    def command(self, _request: Request, tools: list[str], result: str) -> Turn:
        if not tools:
            return tool_use("Bash", COMMAND)
        if is_error(result):
            return reply("You said no, so the command did not run.")
        shown = result.removeprefix("[tool_result]").strip()[:300]
        return reply(f"After your **Allow**, `{COMMAND['command']}` printed:\n```\n{shown}\n```")

    def edit(self, _request: Request, tools: list[str], result: str) -> Turn:
        path = str(self.project / GREETING_FILE)
        if not tools:
            return tool_use("Read", {"file_path": path})
        if tools[-1] == "Read":
            old, new = GREETINGS if GREETINGS[0] in result else GREETINGS[::-1]
            if old not in result:
                return reply(f"{GREETING_FILE} is not as I left it, so I leave it alone.")
            edit = {"file_path": path, "old_string": old, "new_string": new}
            return tool_use("Edit", edit)
        if is_error(result):
            return reply(f"You said no, so {GREETING_FILE} is as it was.")
        return reply(
            f"I changed the greeting in {GREETING_FILE}. Press **Diff** on this turn to see "
            "the change and comment on a line: your comments go back to the model as a review."
        )

    def question(self, _request: Request, tools: list[str], result: str) -> Turn:
        if not tools:
            return tool_use("AskUserQuestion", {"questions": [QUESTION]})
        picked = re.search(r'"=\s*"([^"]*)"', result)
        answer = picked[1] if picked else result.removeprefix("[tool_result]").strip()[:200]
        return reply(f"Your answer reached the model: **{answer}**.")

    def plan(self, request: Request, tools: list[str], result: str) -> Turn:
        plan_file = self.plan_file.search(json.dumps(request))
        if plan_file is None:
            return reply("Plans are made in plan mode: type `/mode plan`, then `plan` again.")
        if not tools:
            return tool_use("Write", {"file_path": plan_file[1], "content": PLAN})
        if tools[-1] == "Write":
            return tool_use("ExitPlanMode", {})
        if is_error(result):
            return reply("Back to planning, with your words in mind. Type `plan` for a new one.")
        return reply("The plan was approved: here Claude would now start on step 1.")

    def slow(self, _request: Request, _tools: list[str], _result: str) -> Turn:
        return reply(
            f"That took {SLOW_SECONDS:.0f} seconds. A message sent with `>>` meanwhile waited "
            "for this turn to end and comes next.",
            delay=SLOW_SECONDS,
        )


# ----- reading the request -----------------------------------------------------------------


def prompt_and_after(request: Request) -> tuple[str, list[dict]]:
    """The owner's last typed prompt and the messages after it."""
    messages = request.get("messages") or []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and is_prompt(message):
            return typed_text(message), messages[index + 1 :]
    return "", []


def blocks_of(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def is_prompt(message: dict) -> bool:
    """Typed text, not a tool's result (the CLI's system reminders are not typed)."""
    blocks = blocks_of(message)
    return not any(b.get("type") == "tool_result" for b in blocks) and bool(typed_text(message))


def typed_text(message: dict) -> str:
    texts = [b.get("text", "") for b in blocks_of(message) if b.get("type") == "text"]
    return "\n".join(t for t in texts if not t.lstrip().startswith("<system-reminder>"))


def tool_calls(messages: list[dict]) -> list[str]:
    """The names of the tools the model called in ``messages``, in order."""
    return [
        str(block.get("name"))
        for message in messages
        if message.get("role") == "assistant"
        for block in blocks_of(message)
        if block.get("type") == "tool_use"
    ]


def last_result(request: Request) -> str:
    """The last tool result, flattened (``[tool_result is_error] …`` for a refused one)."""
    return last_user_text(request)


def is_error(result: str) -> bool:
    return result.startswith("[tool_result is_error]")
