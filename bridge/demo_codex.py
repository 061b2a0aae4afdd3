"""The scripted model of ``discord-bridge try --demo --agent codex``: Codex's short tour.

The fake Responses API (``fake_openai``) asks :class:`CodexTour` for each answer. As the Claude
demo's tour (:mod:`bridge.demo_tour`) it reads the request as a model would, keeping no state:
the owner's last typed prompt picks the step (``run``: a command Codex must ask for; anything
else: a reply listing the steps), and the tool outputs since that prompt say how far the step
has got. Every answer starts with the demo's mark, and the one command it asks for is fixed
here, never built from what was typed.
"""

from __future__ import annotations

import re
from typing import Any

from bridge.demo_tour import MARK
from fake_openai import Turn, exec_command, text, tool_outputs
from fake_openai.inputs import CONTEXT_PREFIXES

COMMAND = "touch demo.txt && ls"
# Codex's own approval: the call asks to run outside its sandbox, with this justification
JUSTIFICATION = "Make a file in the demo project"
SHOWN_OUTPUT = 300  # characters of the command's output the reply quotes

TRY = """• `hello`: a reply
• `run a command`: Codex asks before it runs one: **Allow** it (or **Deny** it)"""
WELCOME = (
    "👋 **This is a demo of Codex**: a scripted model answers instead of OpenAI's, in a "
    "throwaway project, so nothing is used up and none of your files is touched. Your first "
    "message starts Codex, which asks once to review the bridge's hooks (**Hooks need "
    "review**): this demo wrote them into its own private Codex home, and Codex runs none "
    "before you trust them. **Trust all and continue**, then type one of these:\n"
    f'{TRY}\nEvery answer here starts with "{MARK}".'
)

Request = dict[str, Any]
Item = dict[str, Any]


def reply(body: str) -> Turn:
    """The turn's answer, marked as the demo's."""
    return text(f"{MARK}\n{body}")


class CodexTour:
    """``responder`` for the fake Responses API: the next turn for a request."""

    def __call__(self, request: Request) -> Turn:
        prompt, since = prompt_and_after(request)
        if re.search(r"\brun\b", prompt, re.IGNORECASE):
            return self.command(since)
        return reply(f"Hello! I am the demo's scripted model, in Codex. Type one of these:\n{TRY}")

    def command(self, since: list[Item]) -> Turn:
        outputs = list(tool_outputs({"input": since}).values())
        if not outputs:
            return exec_command(COMMAND, escalate=JUSTIFICATION)
        output = outputs[-1]
        if "Rejected" in output or "rejected" in output:
            return reply("You said no, so the command did not run.")
        shown = output.split("Output:\n", 1)[-1].strip()[:SHOWN_OUTPUT]
        return reply(f"After your **Allow**, `{COMMAND}` printed:\n```\n{shown}\n```")


def prompt_and_after(request: Request) -> tuple[str, list[Item]]:
    """The owner's last typed prompt and the input items after it (the model's calls and
    their outputs). Codex's own context (AGENTS.md, the environment) is not typed."""
    items = [item for item in request.get("input") or [] if isinstance(item, dict)]
    for index in range(len(items) - 1, -1, -1):
        typed = typed_text(items[index])
        if typed:
            return typed, items[index + 1 :]
    return "", []


def typed_text(item: Item) -> str:
    if item.get("type", "message") != "message" or item.get("role") != "user":
        return ""
    content = item.get("content")
    parts = content if isinstance(content, list) else [{"text": content or ""}]
    words = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return "" if words.lstrip().startswith(CONTEXT_PREFIXES) else words
