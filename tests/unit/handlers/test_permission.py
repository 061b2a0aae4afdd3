"""The hook side of a decision (bridge/permission.py): the exact JSON Claude Code reads for each
choice, ``permissionTools`` asking, the wait on the decision file, and the
whole PermissionRequest walk with Discord replaced by a stub."""

from __future__ import annotations

import copy
import os
import signal
import threading
import time

import pytest

from bridge import config, fastjson
from bridge.handlers import decision_wait, permission
from bridge.handlers.context import HookContext
from bridge.state import decisions, runtime
from bridge.state.decisions import Decision, Request
from bridge_testkit import hook_input, not_from_claude

SESSION = "cbe55835-1c2d-4e5f-8a9b-0123456789ab"
CHANNEL = "100000000000000003"
QUESTIONS = {
    "questions": [
        {
            "question": "Which database should we use?",
            "header": "Database",
            "options": [{"label": "Postgres"}, {"label": "SQLite"}],
            "multiSelect": False,
        },
        {
            "question": "Which extras?",
            "header": "Extras",
            "options": [{"label": "Docs"}, {"label": "Tests"}],
            "multiSelect": True,
        },
    ]
}
PLAN = {"plan": "# Plan\n\n1. Add README.md\n", "planFilePath": "/p/.claude/plans/x.md"}
RULES = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "touch perm-*"}],
    "behavior": "allow",
    "destination": "session",
}
SET_MODE = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}


def req(tool: str = "Bash", tool_input: dict | None = None, **fields) -> Request:
    request = Request.from_dict(
        {
            "id": decisions.new_id(),
            "kind": {"AskUserQuestion": "question", "ExitPlanMode": "plan"}.get(tool, "permission"),
            "session_id": SESSION,
            "tool_name": tool,
            "tool_input": {"command": "touch perm-a.txt"} if tool_input is None else tool_input,
            "permission_suggestions": [RULES, SET_MODE],
            "timeout": 900.0,
            **fields,
        }
    )
    assert request is not None
    return request


def D(raw: dict) -> Decision:
    """A decision as the bot, a later hook event or the timeout writes it."""
    decision = Decision.from_dict(raw)
    assert decision is not None, raw
    return decision


def cli_answer(request: Request, decision: dict) -> dict | None:
    return permission.cli_answer(request, D(decision))


def answer(decision: dict) -> dict:
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


# --- the JSON Claude Code reads -------------------------------------------------------------


def test_allow() -> None:
    assert cli_answer(req(), {"outcome": "allow", "by": "1"}) == answer({"behavior": "allow"})


@pytest.mark.parametrize(
    ("scope", "destination"),
    [("s", "session"), ("l", "localSettings"), ("p", "projectSettings"), ("u", "userSettings")],
)
def test_always_allow_adds_the_rule_at_the_chosen_destination(scope: str, destination: str):
    request = req()
    decision = {"outcome": "always", "suggestion": 0, "scope": scope, "by": "1"}
    assert cli_answer(request, decision) == answer(
        {
            "behavior": "allow",
            "updatedPermissions": [
                {
                    "type": "addRules",
                    "rules": [{"toolName": "Bash", "ruleContent": "touch perm-*"}],
                    "behavior": "allow",
                    "destination": destination,
                }
            ],
        }
    )
    assert request.permission_suggestions[0]["destination"] == "session"  # not mutated


def test_always_with_a_set_mode_suggestion_stays_for_the_session() -> None:
    decision = {"outcome": "always", "suggestion": 1, "scope": "u"}
    assert cli_answer(req(), decision) == answer(
        {"behavior": "allow", "updatedPermissions": [SET_MODE]}
    )


@pytest.mark.parametrize("index", [-1, 2, 99])
def test_always_with_no_such_suggestion_gives_no_decision(index: int) -> None:
    assert cli_answer(req(), {"outcome": "always", "suggestion": index}) is None
    assert cli_answer(req(permission_suggestions=[]), {"outcome": "always"}) is None


def test_deny_and_tell_claude_what_to_do_instead() -> None:
    deny = {"outcome": "deny", "message": "Denied from Discord by Ann.", "by": "1"}
    assert cli_answer(req(), deny) == answer(
        {"behavior": "deny", "message": "Denied from Discord by Ann."}
    )
    assert cli_answer(req(), {"outcome": "deny"}) == answer(
        {"behavior": "deny", "message": "Denied from Discord."}
    )
    tell = {"outcome": "tell", "message": "run the tests first", "by": "1"}
    assert cli_answer(req(), tell) == answer({"behavior": "deny", "message": "run the tests first"})


def test_answers_are_the_original_input_plus_the_answers_map() -> None:
    request = req("AskUserQuestion", copy.deepcopy(QUESTIONS), permission_suggestions=[])
    answers = {"Which database should we use?": "Mongo", "Which extras?": "Docs, Tests"}
    result = cli_answer(request, {"outcome": "answers", "answers": answers, "by": "1"})
    assert result == answer(
        {"behavior": "allow", "updatedInput": {**QUESTIONS, "answers": answers}}
    )
    assert request.tool_input == QUESTIONS  # the request itself is left as it was


def test_plan_approval_is_allow_with_empty_input_and_the_mode() -> None:
    request = req("ExitPlanMode", PLAN, permission_suggestions=[])
    for mode in ("acceptEdits", "default"):
        assert cli_answer(request, {"outcome": "approve", "mode": mode}) == answer(
            {
                "behavior": "allow",
                "updatedInput": {},
                "updatedPermissions": [{"type": "setMode", "mode": mode, "destination": "session"}],
            }
        )


def test_plan_approval_with_notes_carries_the_plan_with_the_notes() -> None:
    """Measured on 2.1.332: Claude Code takes ``updatedInput.plan`` as the plan "edited by
    user" and gives it to the model in the approval's own tool result, before it acts."""
    request = req("ExitPlanMode", PLAN, permission_suggestions=[])
    decision = {"outcome": "approve", "mode": "default", "message": "  keep the old API  "}
    assert cli_answer(request, decision) == answer(
        {
            "behavior": "allow",
            "updatedInput": {
                "plan": "# Plan\n\n1. Add README.md\n\n"
                "## Notes from the review\n\nkeep the old API\n"
            },
            "updatedPermissions": [
                {"type": "setMode", "mode": "default", "destination": "session"}
            ],
        }
    )


def test_keep_planning_is_deny_with_the_feedback() -> None:
    request = req("ExitPlanMode", PLAN, permission_suggestions=[])
    decision = {"outcome": "keep_planning", "message": "add tests first", "by": "1"}
    assert cli_answer(request, decision) == answer(
        {"behavior": "deny", "message": "add tests first"}
    )


def test_timeout_denies_with_a_message_the_model_reads_unless_left_to_the_terminal() -> None:
    assert cli_answer(req(), {"outcome": "timeout", "left_to_terminal": False}) == answer(
        {"behavior": "deny", "message": "No answer from Discord within 15 min."}
    )
    assert cli_answer(req(timeout=90), {"outcome": "timeout"}) == answer(
        {"behavior": "deny", "message": "No answer from Discord within 90 s."}
    )
    assert cli_answer(req(), {"outcome": "timeout", "left_to_terminal": True}) is None


@pytest.mark.parametrize("event", ["PostToolUse", "Stop", "interrupted", "session ended"])
def test_answered_elsewhere_gives_no_decision(event: str) -> None:
    decision = {"outcome": decisions.ANSWERED_ELSEWHERE, "event": event}
    assert cli_answer(req(), decision) is None


def test_an_unknown_outcome_gives_no_decision() -> None:
    assert cli_answer(req(), {"outcome": "maybe"}) is None
    assert Decision.from_dict({}) is None  # no outcome: not a decision, so nothing to answer


def test_every_answer_is_plain_json() -> None:
    for decision in (
        {"outcome": "always", "suggestion": 0, "scope": "l"},
        {"outcome": "approve", "mode": "acceptEdits"},
        {"outcome": "answers", "answers": {"Which database should we use?": "ü 🚀"}},
    ):
        result = cli_answer(req("AskUserQuestion", QUESTIONS), decision)
        assert fastjson.loads(fastjson.dumps(result)) == result


# --- a session's context --------------------------------------------------------------------


def make_context(tmp_path, event: dict, permission_tools=("Bash",), **prompts_cfg) -> HookContext:
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "unused", "ownerUserId": "100000000000000002"},
                "permissionTools": list(permission_tools),
                "projects": [{"name": "p", "channelId": CHANNEL, "projectPath": str(tmp_path)}],
            }
        ],
        **({"prompts": prompts_cfg} if prompts_cfg else {}),
    }
    cfg = config.BridgeConfig(raw, env={})
    env = {runtime.ENV_RUNTIME_DIR: str(tmp_path / "rt")}
    return HookContext(event, cfg, cfg.servers[0].projects[0], None, env)


def pre_tool_use(tool: str, tool_input: dict | None = None) -> dict:
    return hook_input("PreToolUse", session_id=SESSION, tool_name=tool, tool_input=tool_input or {})


ASK = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": "discord-bridge: Bash is in permissionTools",
    }
}


def test_permission_tools_always_ask(tmp_path) -> None:
    tools = ("Bash", "mcp__github__*", "AskUserQuestion", "ExitPlanMode", "*")
    assert permission.on_pre_tool_use(make_context(tmp_path, pre_tool_use("Bash"), tools)) == ASK
    mcp = permission.on_pre_tool_use(
        make_context(tmp_path, pre_tool_use("mcp__github__create_issue"), ("mcp__github__*",))
    )
    assert mcp["hookSpecificOutput"]["permissionDecision"] == "ask"
    for tool in ("Read", "BashOutput", "mcp__gitlab__x"):
        context = make_context(tmp_path, pre_tool_use(tool), ("Bash", "mcp__github__*"))
        assert permission.on_pre_tool_use(context) is None, tool
    for tool in (None, 7, ["Bash"]):  # a tool name that is not a string: never "ask"
        event = not_from_claude({**pre_tool_use("Bash"), "tool_name": tool})
        context = make_context(tmp_path, event, ("Bash", "mcp__github__*"))
        assert permission.on_pre_tool_use(context) is None, tool
    # questions and plans show their own dialog: never "ask", whatever the list says
    for tool in ("AskUserQuestion", "ExitPlanMode"):
        assert permission.on_pre_tool_use(make_context(tmp_path, pre_tool_use(tool), tools)) is None


def test_pre_tool_use_of_another_call_leaves_the_prompt_open(tmp_path) -> None:
    """Issue 13.13: a Read starting while the Bash dialog waits says nothing about it."""
    context = make_context(tmp_path, pre_tool_use("Read"), ())
    rt = context.runtime.ensure()
    request = req(deadline=time.time() + 60, pid=os.getpid())
    decisions.write_request(rt, request)
    assert permission.on_pre_tool_use(context) is None
    assert decisions.read_decision(rt, request.id) is None
    assert decisions.is_pending(rt, request)


def test_new_request_records_what_the_bot_and_the_hook_need(tmp_path) -> None:
    event = hook_input(
        "PermissionRequest",
        session_id=SESSION,
        tool_name="ExitPlanMode",
        tool_input=PLAN,
        transcript_path="/t.jsonl",
    )
    context = make_context(tmp_path, event, timeoutSeconds=120, onTimeout="terminal")
    before = time.time()
    request = permission.new_request(context)
    assert decisions.is_valid_id(request.id)
    assert request.kind == "plan" and request.tool_input == PLAN
    assert request.permission_suggestions == []  # no key in the event for plans
    assert (request.session_id, request.channel_id, request.project) == (
        SESSION,
        CHANNEL,
        "p",
    )
    assert request.pid == os.getpid() and request.transcript_path == "/t.jsonl"
    assert before <= request.created <= time.time()
    assert request.deadline == request.created + 120
    assert (request.timeout, request.on_timeout) == (120, "terminal")
    assert request.agent_id is None  # the main thread's
    context.event["agent_id"] = "a4a29fb14da70c8bc"  # a subagent's dialog
    assert permission.new_request(context).agent_id == "a4a29fb14da70c8bc"
    for tool, kind in (
        ("AskUserQuestion", "question"),
        ("Bash", "permission"),
        (None, "permission"),
    ):
        context.event["tool_name"] = tool
        assert permission.new_request(context).kind == kind


# --- waiting for the decision ---------------------------------------------------------------


@pytest.fixture
def rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "rt")).ensure()


def waiting(rt: runtime.Runtime, **fields) -> dict:
    request = req(**{"deadline": time.time() + 30, "pid": os.getpid(), **fields})
    decisions.write_request(rt, request)
    return request


def test_a_decision_made_before_the_wait_is_returned_at_once(rt) -> None:
    request = waiting(rt)
    decisions.decide(rt, request.id, D({"outcome": "allow", "by": "1"}))
    assert decision_wait.wait_for_decision(rt, request) == D({"outcome": "allow", "by": "1"})


def test_a_click_wakes_the_waiting_hook_without_polling(rt) -> None:
    request = waiting(rt)
    timer = threading.Timer(0.2, decisions.decide, (rt, request.id, D({"outcome": "deny"})))
    start = time.monotonic()
    timer.start()
    try:
        assert decision_wait.wait_for_decision(rt, request) == D({"outcome": "deny"})
    finally:
        timer.cancel()
    assert time.monotonic() - start < 0.2 + decision_wait.POLL_MS / 1000 * 0.6  # well before a poll


@pytest.mark.parametrize(("on_timeout", "left"), [("deny", False), ("terminal", True)])
def test_the_deadline_decides_a_timeout(rt, on_timeout: str, left: bool) -> None:
    request = waiting(rt, deadline=time.time() - 0.01, on_timeout=on_timeout)
    expected = D({"outcome": decisions.TIMED_OUT, "left_to_terminal": left})
    assert decision_wait.wait_for_decision(rt, request) == expected
    assert decisions.read_decision(rt, request.id) == expected  # a late click loses


def test_a_click_that_landed_at_the_deadline_wins(rt) -> None:
    request = waiting(rt, deadline=time.time() - 0.01)
    decisions.decide(rt, request.id, D({"outcome": "allow"}))
    assert decision_wait.wait_for_decision(rt, request) == D({"outcome": "allow"})


def interrupt_record(text: str = "[Request interrupted by user for tool use]") -> str:
    """The user line Claude Code 2.1.330 appends on Esc / a terminal "No" (captured)."""
    content = [{"type": "text", "text": text}]
    record = {
        "type": "user",
        "isSidechain": False,
        "sessionId": SESSION,
        "message": {"role": "user", "content": content},
    }
    return fastjson.dumps(record) + "\n"


def test_an_interrupt_in_the_transcript_ends_the_wait(rt, tmp_path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(interrupt_record("[Request interrupted by user]"))  # an earlier turn
    request = waiting(rt, transcript_path=str(transcript))

    def interrupt() -> None:
        with open(transcript, "a") as handle:
            handle.write(interrupt_record())

    timer = threading.Timer(0.2, interrupt)
    timer.start()
    try:
        decision = decision_wait.wait_for_decision(rt, request)
    finally:
        timer.cancel()
    assert decision == D({"outcome": decisions.ANSWERED_ELSEWHERE, "event": "interrupted"})


def test_the_interrupt_words_in_a_tool_result_do_not_end_the_wait(rt, tmp_path) -> None:
    """Issue 13.12: a parallel tool's result that echoes a file holding the words (or the
    model quoting them) is not the CLI's interrupt record; the click that follows decides."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")
    request = waiting(rt, transcript_path=str(transcript))
    echoed = "log.txt:\n[Request interrupted by user]\n"
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": echoed}
    result = {
        "type": "user",
        "toolUseResult": {"stdout": echoed},
        "message": {"role": "user", "content": [block]},
    }
    quoted = {
        "type": "assistant",
        "message": {
            "id": "msg_1",
            "content": [{"type": "text", "text": "[Request interrupted by user]"}],
        },
    }

    def echo() -> None:
        with open(transcript, "a") as handle:
            handle.write(fastjson.dumps(result) + "\n" + fastjson.dumps(quoted) + "\n")

    def click() -> None:
        decisions.decide(rt, request.id, D({"outcome": "allow", "by": "1"}))

    timers = [threading.Timer(0.2, echo), threading.Timer(1.5, click)]
    for timer in timers:
        timer.start()
    try:
        decision = decision_wait.wait_for_decision(rt, request)
    finally:
        for timer in timers:
            timer.cancel()
    assert decision == D({"outcome": "allow", "by": "1"})


INTERRUPT_LINE = (  # the CLI's own record of an Esc / terminal "No"
    '{"type":"user","message":{"role":"user","content":'
    '[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}\n'
)


def test_an_interrupt_written_before_the_wait_started_still_ends_it(rt, tmp_path) -> None:
    """Under load the hook can reach its wait after the user already pressed Esc: the
    transcript offset is the one taken when the request was made, before the prompt went out."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_text('{"type":"user","text":"make a file"}\n')
    offset = transcript.stat().st_size
    request = waiting(rt, transcript_path=str(transcript), transcript_offset=offset)
    with open(transcript, "a") as handle:  # the Esc lands while the prompt is being posted
        handle.write(INTERRUPT_LINE)
    decision = decision_wait.wait_for_decision(rt, request)
    assert decision.to_dict() == {"outcome": decisions.ANSWERED_ELSEWHERE, "event": "interrupted"}


def test_an_interrupt_in_a_transcript_created_after_the_prompt_ends_the_wait(rt, tmp_path) -> None:
    """Claude Code 2.1.197 writes the transcript lazily: it may not exist when the hook starts."""
    transcript = tmp_path / "late.jsonl"
    request = waiting(rt, transcript_path=str(transcript), transcript_offset=0)

    def interrupt() -> None:
        transcript.write_text(INTERRUPT_LINE)

    timer = threading.Timer(0.2, interrupt)
    timer.start()
    try:
        decision = decision_wait.wait_for_decision(rt, request)
    finally:
        timer.cancel()
    assert decision.to_dict() == {"outcome": decisions.ANSWERED_ELSEWHERE, "event": "interrupted"}


def test_signals_cancel_only_the_wait_once_and_never_kill_the_hook() -> None:
    """Claude Code sends SIGTERM, often twice, after an Esc: one that lands while the prompt is
    still being posted cancels the wait as soon as it starts, and later ones are ignored so the
    hook can close its Discord message."""
    with decision_wait.CancelledBySignals() as signals:
        os.kill(os.getpid(), signal.SIGTERM)  # during the post: recorded only
        with pytest.raises(decision_wait.Cancelled):
            signals.arm()
        os.kill(os.getpid(), signal.SIGTERM)  # while closing the message: ignored
        os.kill(os.getpid(), signal.SIGHUP)
        signals.arm()  # cancelled once already: never again
        signals.disarm()
    with decision_wait.CancelledBySignals() as signals:
        signals.arm()
        with pytest.raises(decision_wait.Cancelled):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler runs at the next bytecode
        os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


# --- the file an edit changes, as the hook reads it ----------------------------------------


def test_the_file_is_read_only_inside_the_project(tmp_path) -> None:
    """Its text goes to Discord: only a plain text file of the project is read (what Claude
    may read there unasked), never one the model names outside it, through a symlink out of
    it, a FIFO (it would block), a huge or a binary file."""
    project, outside = tmp_path / "proj", tmp_path / "secret"
    project.mkdir()
    outside.mkdir()
    (project / "app.py").write_text("print('hi')\n")
    (outside / "key").write_text("SECRET\n")
    (project / "link").symlink_to(outside / "key")
    (project / "big.txt").write_text("x" * (permission.FILE_READ_MOST + 1))
    (project / "blob.bin").write_bytes(b"\xff\xfe\x00")
    os.mkfifo(project / "fifo")
    roots = [str(project)]
    assert permission.on_disk(str(project / "app.py"), roots).text == "print('hi')\n"
    absent = permission.on_disk(str(project / "new.py"), roots)
    assert absent.absent and absent.text is None
    for path in (
        outside / "key",
        project / "link",
        project / "big.txt",
        project / "blob.bin",
        project / "fifo",
        project / ".." / "secret" / "key",
        project,
    ):
        found = permission.on_disk(str(path), roots)
        assert found.text is None and not found.absent, path
    assert permission.on_disk("app.py", roots).text is None  # not an absolute path
    assert permission.on_disk(str(outside / "new.py"), roots).absent is False


def test_an_edit_in_the_project_is_shown_numbered_and_one_outside_is_not(tmp_path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.py").write_text("one\ntwo\nthree\n")
    (tmp_path / "b.py").write_text("one\ntwo\nthree\n")
    edit = {"old_string": "two", "new_string": "TWO"}
    inside = req("Edit", {"file_path": str(project / "a.py"), **edit})
    payload, _ = permission.render(inside, [str(project)])
    assert "-   2 two\n+   2 TWO" in payload["content"]
    outside = req("Edit", {"file_path": str(tmp_path / "b.py"), **edit})
    payload, _ = permission.render(outside, [str(project)])
    assert "```diff\n-two\n+TWO\n```" in payload["content"]


# --- the whole PermissionRequest walk, Discord stubbed --------------------------------------


def permission_event() -> dict:
    return hook_input(
        "PermissionRequest",
        session_id=SESSION,
        tool_name="Bash",
        tool_input={"command": "touch perm-a.txt", "description": "Create a file"},
        permission_suggestions=[RULES],
    )


def test_permission_request_posts_waits_and_answers_the_click(tmp_path, monkeypatch) -> None:
    context = make_context(tmp_path, permission_event())
    posted = []

    def post(_context, payload, plan_file):
        posted.append((payload, plan_file))
        return {"id": "555"}

    def click() -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            found = decisions.open_prompts(context.runtime)
            if found and found[0].message_id == "555":
                decision = D({"outcome": "always", "suggestion": 0, "scope": "l", "by": "1"})
                decisions.decide(context.runtime, found[0].id, decision)
                return
            time.sleep(0.01)

    monkeypatch.setattr(permission, "_post", post)
    monkeypatch.setattr(permission, "_close_message", lambda *a: pytest.fail("nothing to close"))
    clicker = threading.Thread(target=click)
    clicker.start()
    result = permission.on_permission_request(context)
    clicker.join()
    assert result == answer(
        {"behavior": "allow", "updatedPermissions": [{**RULES, "destination": "localSettings"}]}
    )
    ((payload, files),) = posted
    assert "touch perm-a.txt" in payload["content"] and files == []
    assert os.listdir(context.runtime.prompts) == []  # the hook cleans up after itself


def test_permission_request_leaves_the_terminal_when_discord_fails(tmp_path, monkeypatch):
    context = make_context(tmp_path, permission_event())

    def post(*_args):
        raise OSError("connection refused")

    monkeypatch.setattr(permission, "_post", post)
    assert permission.on_permission_request(context) is None
    assert os.listdir(context.runtime.prompts) == []
    with open(context.runtime.hook_log) as handle:
        assert f"prompt for #{CHANNEL} not posted: connection refused" in handle.read()


def test_permission_request_timeout_closes_the_message_and_denies(tmp_path, monkeypatch):
    context = make_context(tmp_path, permission_event())
    context.cfg.prompt_timeout = 0.05  # the config allows ≥ 10 s; no test should wait that long
    monkeypatch.setattr(decision_wait, "POLL_MS", 50)
    closed = []
    monkeypatch.setattr(permission, "_post", lambda *a: {"id": "555"})
    monkeypatch.setattr(permission, "_close_message", lambda *a: closed.append(a))
    result = permission.on_permission_request(context)
    assert result == answer({"behavior": "deny", "message": "No answer from Discord within 0 s."})
    ((_, request, content, decision),) = closed
    assert request.message_id == "555" and "touch perm-a.txt" in content
    assert decision == D({"outcome": decisions.TIMED_OUT, "left_to_terminal": False})
    assert os.listdir(context.runtime.prompts) == []
