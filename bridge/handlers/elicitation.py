"""Elicitation: an MCP server asks the owner for input; the answer comes from Discord.

Measured on 2.1.332 (for this hook too): the hook fires when the server's
``elicitation/create`` arrives and Claude Code *waits for it* (spinner "running Elicitation
hook", input box on screen, no dialog); only a hook that gives no answer makes it draw its own
dialog. So the prompt waits like a permission prompt (``permission.ask``: a request file, the
decision file the bot writes on a click, the same timeout) and answers:

    Send (form)  accept + content, checked against the form's schema by the bot first:
                 Claude Code passes a hook's content on to the server as it is
    Done (url)   accept (the owner followed the link)
    Decline      decline          Cancel   cancel
    Answer in the terminal, or no Discord: no answer, and Claude Code shows its dialog

An Esc in the terminal interrupts the turn but does not stop the hook; an answer-less hook
that exits after that still makes Claude Code draw the dialog of the interrupted call, in an
idle session (measured), so an interrupted wait answers ``cancel``. The prompt's own timeout
cancels too (``prompts.onTimeout: terminal``: no answer, the dialog).
"""

from __future__ import annotations

from bridge.handlers import permission
from bridge.handlers.context import HookContext
from bridge.state import decisions
from bridge.state.decisions import Decision, Request

FIELDS = ("mcp_server_name", "message", "mode", "url", "elicitation_id", "requested_schema")


def on_elicitation(context: HookContext) -> dict | None:
    request = new_request(context)
    payload = render(request)
    decision = permission.ask(context, request, payload)
    return None if decision is None else cli_answer(request, decision)


def new_request(context: HookContext) -> Request:
    """The request, holding what the server sent (as Claude Code gave it) in ``tool_input``."""
    event = context.event
    sent = {key: event[key] for key in FIELDS if event.get(key) is not None}
    request = permission.new_request(context, kind="elicitation", tool_input=sent)
    request.tool_name = None
    return request


def render(request: Request) -> dict:
    from bridge.claude import elicitation as forms
    from bridge.discord.render.elicitation import elicitation_prompt

    schema = request.tool_input.get("requested_schema")
    return elicitation_prompt(request, forms.defaults(forms.fields(schema)))


def cli_answer(request: Request, decision: Decision) -> dict | None:
    """The Elicitation hook output for what ended the prompt (None: Claude Code's dialog)."""
    outcome = decision.outcome
    if outcome == decisions.ACCEPTED:
        answer: dict = {"action": "accept"}
        if request.tool_input.get("mode") != "url":
            content = decision.content or {}
            if problems(request, content):  # the bot checked it; a decision file is not signed
                return _output({"action": "cancel"})
            answer["content"] = content
        return _output(answer)
    if outcome == decisions.DECLINED:
        return _output({"action": "decline"})
    if outcome == decisions.TO_TERMINAL:
        return None
    if outcome == decisions.TIMED_OUT and decision.left_to_terminal:
        return None
    # Cancelled, timed out, interrupted in the terminal, the session gone: cancel (no answer
    # would make Claude Code draw the dialog of a call that is over).
    return _output({"action": "cancel"})


def problems(request: Request, content: dict) -> list[str]:
    """What keeps ``content`` from being the answer to the request's form."""
    from bridge.claude import elicitation as forms

    return forms.check(forms.fields(request.tool_input.get("requested_schema")), content)


def _output(answer: dict) -> dict:
    return {"hookSpecificOutput": {"hookEventName": "Elicitation", **answer}}
