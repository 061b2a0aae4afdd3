"""Request and decision files: one decision per request whoever races for it, private files,
no link followed, ids checked before any path is built, and the rules that close a prompt
the terminal answered (bridge/decisions.py)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time

import pytest

from bridge import fastjson
from bridge.state import decisions, private_files, runtime
from bridge.state.decisions import Decision, Request
from bridge_testkit import hook_input, not_from_claude

SESSION = "cbe55835-1c2d-4e5f-8a9b-0123456789ab"
OTHER_SESSION = "8eee36f1-e3c7-4476-b0d3-591be9f4b59b"
BASH_INPUT = {"command": "touch made-by-bash.txt", "description": "Create a file"}


@pytest.fixture
def rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "rt")).ensure()


def D(raw: dict) -> Decision:
    decision = Decision.from_dict(raw)
    assert decision is not None, raw
    return decision


def request(rt: runtime.Runtime, **fields) -> Request:
    """A pending request as the PermissionRequest hook writes it (this process waits)."""
    now = time.time()
    raw = {
        "id": decisions.new_id(),
        "kind": "permission",
        "session_id": SESSION,
        "channel_id": "100000000000000003",
        "tool_name": "Bash",
        "tool_input": BASH_INPUT,
        "permission_suggestions": [],
        "created": now,
        "deadline": now + 900,
        "timeout": 900,
        "pid": os.getpid(),
        **fields,
    }
    req = Request.from_dict(raw)
    assert req is not None, raw
    decisions.write_request(rt, req)
    return req


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: the pid names no process now
    return child.pid


def files_in(rt: runtime.Runtime) -> list[str]:
    return sorted(os.listdir(rt.prompts))


# --- ids ------------------------------------------------------------------------------------


def test_new_ids_are_valid_and_distinct() -> None:
    ids = {decisions.new_id() for _ in range(500)}
    assert len(ids) == 500
    assert all(decisions.is_valid_id(i) and len(i) == decisions.ID_LENGTH for i in ids)


@pytest.mark.parametrize(
    "bad",
    [
        "../x",
        "../../../etc/passwd",
        "abcdefghijk/",
        "ABCDEFGHIJKL",
        "abcdefGhijkl",
        "abcdefghijk",  # 11
        "abcdefghijklm",  # 13
        "",
        "abcdef.hijkl",
        "abcdef\x00hijkl",
        "abcdéfghijkl",
        "١٢٣٤٥٦٧٨٩٠١٢",  # digits, but not ASCII ones
    ],
)
def test_invalid_ids_are_refused_before_any_path_is_built(rt, tmp_path, bad: str) -> None:
    assert not decisions.is_valid_id(bad)
    assert decisions.read_request(rt, bad) is None
    for call in (
        lambda: decisions.decide(rt, bad, D({"outcome": "allow"})),
        lambda: decisions.read_decision(rt, bad),
        lambda: decisions.decision_path(rt, bad),
        lambda: decisions.write_request(rt, Request(id=bad)),
        lambda: decisions.close(rt, bad),
        lambda: decisions.write_answers(rt, bad, {"0": "x"}),
        lambda: decisions.read_answers(rt, bad),
    ):
        with pytest.raises(ValueError, match="not a request id"):
            call()
    assert files_in(rt) == []
    assert sorted(os.listdir(tmp_path)) == ["rt"]  # nothing written beside the runtime dir


# --- deciding -------------------------------------------------------------------------------


def test_decide_decides_exactly_once_and_keeps_the_first_decision(rt) -> None:
    req = request(rt)
    assert decisions.decide(rt, req.id, D({"outcome": "allow", "by": "1"})) is True
    assert decisions.decide(rt, req.id, D({"outcome": "deny", "by": "2"})) is False
    assert decisions.decide(rt, req.id, D({"outcome": decisions.TIMED_OUT})) is False
    assert decisions.read_decision(rt, req.id) == D({"outcome": "allow", "by": "1"})
    # no temporary file is left behind by the winner or the losers
    assert files_in(rt) == [req.id + ".decision", req.id + ".json"]


def test_request_and_decision_files_are_private(rt) -> None:
    req = request(rt)
    decisions.decide(rt, req.id, D({"outcome": "allow"}))
    decisions.write_answers(rt, req.id, {"0": "Postgres"})
    for suffix in (decisions.REQUEST, decisions.DECISION, decisions.ANSWERS):
        info = os.lstat(os.path.join(rt.prompts, req.id + suffix))
        assert info.st_mode & 0o777 == 0o600, suffix
    assert os.path.samefile(
        decisions.decision_path(rt, req.id), rt.path("prompts", req.id) + ".decision"
    )


def _race_in_process(root: str, request_id: str, n: int, barrier, results) -> None:
    rt = runtime.Runtime(root)
    barrier.wait()
    results.put((n, decisions.decide(rt, request_id, D({"outcome": "allow", "by": str(n)}))))


def test_processes_racing_to_decide_decide_once(rt) -> None:
    ctx = multiprocessing.get_context("fork")
    for _ in range(2):
        req = request(rt)
        barrier, results = ctx.Barrier(6), ctx.Queue()
        workers = [
            ctx.Process(target=_race_in_process, args=(rt.root, req.id, n, barrier, results))
            for n in range(6)
        ]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=10) for _ in workers]
        for worker in workers:
            worker.join(10)
            assert worker.exitcode == 0
        winners = [n for n, won in outcomes if won]
        assert len(winners) == 1
        assert decisions.read_decision(rt, req.id) == D({"outcome": "allow", "by": str(winners[0])})
        decisions.close(rt, req.id)
    assert files_in(rt) == []


def test_threads_racing_to_decide_decide_once(rt) -> None:
    for _ in range(10):
        req = request(rt)
        barrier, won = threading.Barrier(12), []

        def click(n: int, rid: str = req.id, barrier=barrier, won=won) -> None:
            barrier.wait()
            if decisions.decide(rt, rid, D({"outcome": "allow", "by": str(n)})):
                won.append(n)

        threads = [threading.Thread(target=click, args=(n,)) for n in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert len(won) == 1
        assert decisions.read_decision(rt, req.id).by == str(won[0])
        decisions.close(rt, req.id)
    assert files_in(rt) == []


def test_a_symlink_planted_at_the_decision_path_is_never_written_through(rt, tmp_path) -> None:
    req = request(rt)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, decisions.decision_path(rt, req.id))
    assert decisions.decide(rt, req.id, D({"outcome": "allow"})) is False
    assert victim.read_text() == "precious"
    assert decisions.read_decision(rt, req.id) is None  # and never read through either
    # a dangling link is no way in either
    victim.unlink()
    assert decisions.decide(rt, req.id, D({"outcome": "allow"})) is False
    assert not victim.exists()
    assert sorted(files_in(rt)) == [req.id + ".decision", req.id + ".json"]


def test_a_symlink_at_the_request_path_is_replaced_not_followed(rt, tmp_path) -> None:
    victim = tmp_path / "victim.json"
    victim.write_text("precious")
    rid = decisions.new_id()
    os.symlink(victim, os.path.join(rt.prompts, rid + ".json"))
    assert decisions.read_request(rt, rid) is None
    decisions.write_request(rt, Request(id=rid, session_id=SESSION))
    assert victim.read_text() == "precious"
    assert not os.path.islink(os.path.join(rt.prompts, rid + ".json"))
    assert decisions.read_request(rt, rid) == Request(id=rid, session_id=SESSION)


def test_unreadable_or_foreign_files_read_as_nothing(rt) -> None:
    rid = decisions.new_id()
    for suffix, data in ((".json", b"[1, 2]"), (".decision", b"{not json"), (".answers", b"7")):
        with open(os.path.join(rt.prompts, rid + suffix), "wb") as handle:
            handle.write(data)
    assert decisions.read_request(rt, rid) is None
    assert decisions.read_decision(rt, rid) is None
    assert decisions.read_answers(rt, rid) == {}
    assert decisions.open_prompts(rt) == []


# --- pending --------------------------------------------------------------------------------


def test_is_pending_until_decided(rt) -> None:
    req = request(rt)
    assert decisions.is_pending(rt, req)
    decisions.decide(rt, req.id, D({"outcome": "deny"}))
    assert not decisions.is_pending(rt, req)


def test_is_pending_false_past_the_deadline(rt) -> None:
    assert not decisions.is_pending(rt, request(rt, deadline=time.time() - 1))
    assert not decisions.is_pending(rt, request(rt, deadline=None or 0))


def test_is_pending_false_when_the_waiting_hook_is_gone(rt) -> None:
    assert not decisions.is_pending(rt, request(rt, pid=dead_pid()))
    assert not decisions.is_pending(rt, request(rt, pid=0))
    assert not decisions.is_pending(rt, request(rt, pid=-1))


def test_open_prompts_lists_only_live_undecided_requests(rt) -> None:
    live = request(rt)
    other_live = request(rt, session_id=OTHER_SESSION)
    decided = request(rt)
    decisions.decide(rt, decided.id, D({"outcome": "allow"}))
    request(rt, deadline=time.time() - 5)
    request(rt, pid=dead_pid())
    # files that are not requests: a temp file, a stray name, a decision without request
    for name in (f".{live.id}.json.1.1.tmp", "notes.json", decisions.new_id() + ".decision"):
        with open(os.path.join(rt.prompts, name), "w") as handle:
            handle.write("{}")
    found = decisions.open_prompts(rt)
    assert sorted(r.id for r in found) == sorted([live.id, other_live.id])
    assert next(r for r in found if r.id == live.id) == live


def test_open_prompts_without_a_runtime_dir(tmp_path) -> None:
    assert decisions.open_prompts(runtime.Runtime(str(tmp_path / "never-made"))) == []


def test_close_removes_every_file_of_the_request_and_only_those(rt) -> None:
    req, kept = request(rt), request(rt)
    decisions.write_answers(rt, req.id, {"0": "Postgres"})
    decisions.decide(rt, req.id, D({"outcome": "answers"}))
    decisions.write_answers(rt, kept.id, {"1": "SQLite"})
    decisions.close(rt, req.id)
    assert files_in(rt) == sorted([kept.id + ".answers", kept.id + ".json"])
    decisions.close(rt, req.id)  # twice is harmless
    decisions.close(rt, decisions.new_id())  # so is one that never existed


def test_partial_answers_round_trip(rt) -> None:
    req = request(rt, kind="question")
    assert decisions.read_answers(rt, req.id) == {}
    decisions.write_answers(rt, req.id, {"0": "Postgres", "1": "Docs, Tests"})
    assert decisions.read_answers(rt, req.id) == {"0": "Postgres", "1": "Docs, Tests"}


# --- the terminal answered first ------------------------------------------------------------


TURN_FIELDS = {"UserPromptSubmit": {"prompt": "go on"}, "StopFailure": {"error": "rate_limit"}}


def event(name: str, session: str = SESSION, **fields) -> dict:
    """A hook input of ``name`` as Claude Code sends it (the turn's events: with what they
    carry besides the common fields)."""
    return hook_input(name, session_id=session, cwd="/p", **{**TURN_FIELDS.get(name, {}), **fields})


def closed_by(rt: runtime.Runtime, req: dict) -> str | None:
    decision = decisions.read_decision(rt, req.id)
    if decision is None:
        return None
    assert decision.outcome == decisions.ANSWERED_ELSEWHERE
    return decision.event


@pytest.mark.parametrize("name", ["PostToolUse", "PostToolUseFailure"])
def test_post_tool_use_closes_only_the_same_tool_call(rt, name: str) -> None:
    bash = request(rt)
    read = request(rt, tool_name="Read", tool_input={"file_path": "/etc/hosts"})
    # a parallel tool finishing, or the same tool with another input, closes nothing
    assert (
        decisions.mark_stale(rt, event(name, tool_name="Read", tool_input={"file_path": "/x"}))
        == []
    )
    assert (
        decisions.mark_stale(rt, event(name, tool_name="Bash", tool_input={"command": "ls"})) == []
    )
    assert decisions.mark_stale(rt, event(name, tool_name="Write", tool_input=BASH_INPUT)) == []
    without_input = event(name, tool_name="Bash", tool_input={})
    del without_input["tool_input"]  # not from Claude Code: no input at all
    assert decisions.mark_stale(rt, not_from_claude(without_input)) == []
    assert closed_by(rt, bash) is None and closed_by(rt, read) is None
    # the same call, in another session: still nothing
    other = event(name, OTHER_SESSION, tool_name="Bash", tool_input=dict(BASH_INPUT))
    assert decisions.mark_stale(rt, other) == []
    # the same call in this session: that prompt, and only it
    same = event(name, tool_name="Bash", tool_input=dict(BASH_INPUT), tool_use_id="toolu_1")
    assert decisions.mark_stale(rt, same) == [bash.id]
    assert closed_by(rt, bash) == name and closed_by(rt, read) is None
    assert decisions.mark_stale(rt, same) == []  # already decided: decided once


@pytest.mark.parametrize("name", ["UserPromptSubmit", "Stop", "StopFailure"])
def test_a_later_event_closes_every_prompt_of_its_session_only(rt, name: str) -> None:
    mine = [request(rt), request(rt, tool_name="Write", tool_input={"file_path": "/p/a"})]
    theirs = request(rt, session_id=OTHER_SESSION)
    closed = decisions.mark_stale(rt, event(name))
    assert sorted(closed) == sorted(r.id for r in mine)
    assert [closed_by(rt, r) for r in mine] == [name, name]
    assert closed_by(rt, theirs) is None and decisions.is_pending(rt, theirs)


@pytest.mark.parametrize("name", ["UserPromptSubmit", "Stop"])
def test_a_background_subagent_and_the_main_thread_never_close_each_others_prompts(
    rt, name: str
) -> None:
    """2.1.330 runs subagents in the background: their hook events carry the session id of
    the main thread plus an ``agent_id``, and run while the main thread's prompt waits."""
    main = request(rt)
    sub = request(rt, agent_id="a4a29fb14da70c8bc")
    subagent_event = event(name, agent_id="a4a29fb14da70c8bc", agent_type="general-purpose")
    assert decisions.mark_stale(rt, subagent_event) == [sub.id]
    assert closed_by(rt, main) is None and decisions.is_pending(rt, main)
    sub_again = request(rt, agent_id="a4a29fb14da70c8bc")
    other_sub = request(rt, agent_id="b000000000000000b")
    assert decisions.mark_stale(rt, event(name)) == [main.id]
    assert closed_by(rt, sub_again) is None and closed_by(rt, other_sub) is None


def test_another_tool_call_starting_closes_nothing(rt) -> None:
    """Issue 13.13: PreToolUse of another call (a parallel tool, the next call queued behind
    the dialog) must not close the prompt; its own PostToolUse, or the turn's end, does."""
    bash = request(rt)
    for tool, tool_input in (
        ("Read", {"file_path": "/x"}),
        ("Bash", {"command": "ls"}),
        ("Bash", dict(BASH_INPUT)),
    ):
        starting = event("PreToolUse", tool_name=tool, tool_input=tool_input, tool_use_id="t9")
        assert decisions.mark_stale(rt, starting) == []
    assert closed_by(rt, bash) is None and decisions.is_pending(rt, bash)
    done = event("PostToolUse", tool_name="Bash", tool_input=dict(BASH_INPUT))
    assert decisions.mark_stale(rt, done) == [bash.id]
    assert closed_by(rt, bash) == "PostToolUse"
    later = request(rt, tool_name="Write", tool_input={"file_path": "/p/a"})
    read = event("PreToolUse", tool_name="Read", tool_input={"file_path": "/x"})
    assert decisions.mark_stale(rt, read) == []
    assert decisions.mark_stale(rt, event("Stop")) == [later.id]


def test_a_decision_already_made_is_not_overwritten(rt) -> None:
    req = request(rt)
    decisions.decide(rt, req.id, D({"outcome": "allow", "by": "1"}))
    assert decisions.mark_stale(rt, event("Stop")) == []
    assert decisions.read_decision(rt, req.id) == D({"outcome": "allow", "by": "1"})


def test_mark_stale_with_nothing_open(rt, tmp_path) -> None:
    assert decisions.mark_stale(rt, event("PreToolUse", tool_name="Read", tool_input={})) == []
    assert decisions.mark_stale(runtime.Runtime(str(tmp_path / "none")), event("Stop")) == []


def test_a_question_answered_in_the_terminal_is_closed_by_its_post_tool_use(rt) -> None:
    """PostToolUse of AskUserQuestion carries the original input plus ``answers`` and
    ``annotations``, so exact input equality would never match it."""
    asked = {
        "question": "Which database?",
        "header": "Database",
        "multiSelect": False,
        "options": [{"label": "Postgres"}, {"label": "SQLite"}],
    }
    questions = {"questions": [asked]}
    req = request(rt, kind="question", tool_name="AskUserQuestion", tool_input=questions)
    post = event(
        "PostToolUse",
        tool_name="AskUserQuestion",
        tool_input={**questions, "answers": {"Which database?": "Postgres"}, "annotations": {}},
    )
    assert decisions.mark_stale(rt, post) == [req.id]


def test_a_plan_approved_in_the_terminal_is_closed_by_its_post_tool_use(rt) -> None:
    """ExitPlanMode: the hook sees ``{"plan", "planFilePath"}``, PostToolUse the model's
    original ``{}``."""
    plan = {"plan": "# Plan\n\n1. Add README.md\n", "planFilePath": "/p/.claude/plans/x.md"}
    req = request(rt, kind="plan", tool_name="ExitPlanMode", tool_input=plan)
    assert decisions.mark_stale(rt, event("PostToolUse", tool_name="Read", tool_input={})) == []
    post = event("PostToolUse", tool_name="ExitPlanMode", tool_input={})
    assert decisions.mark_stale(rt, post) == [req.id]


def test_mark_stale_reads_decisions_back_as_json(rt) -> None:
    req = request(rt)
    decisions.mark_stale(rt, event("UserPromptSubmit"))
    with open(decisions.decision_path(rt, req.id), "rb") as handle:
        assert fastjson.loads(handle.read()) == {
            "outcome": decisions.ANSWERED_ELSEWHERE,
            "event": "UserPromptSubmit",
        }


def test_mark_stale_removes_requests_whose_hook_was_killed(rt) -> None:
    orphan = request(rt, pid=dead_pid(), session_id="another-session")
    live = request(rt, session_id="another-session")
    decisions.mark_stale(rt, event("Stop"))
    assert decisions.read_request(rt, orphan.id) is None  # nobody waits for it: gone
    assert decisions.read_request(rt, live.id) == live  # another session's live prompt stays


# --- the records ----------------------------------------------------------------------------


def test_a_request_file_reads_back_as_the_same_record_and_the_same_json(rt) -> None:
    """The file format is what the bridge wrote before the records: plain JSON, same keys."""
    req = request(
        rt,
        agent_id="a4a29fb14da70c8bc",
        project="proj",
        message_id="555",
        transcript_path="/t.jsonl",
        on_timeout="terminal",
    )
    with open(os.path.join(rt.prompts, req.id + ".json"), "rb") as handle:
        raw = fastjson.loads(handle.read())
    assert raw == {
        "id": req.id,
        "kind": "permission",
        "session_id": SESSION,
        "agent_id": "a4a29fb14da70c8bc",
        "channel_id": "100000000000000003",
        "cli": "claude",
        "project": "proj",
        "tool_name": "Bash",
        "tool_input": BASH_INPUT,
        "permission_suggestions": [],
        "transcript_path": "/t.jsonl",
        "created": req.created,
        "deadline": req.deadline,
        "timeout": 900,
        "on_timeout": "terminal",
        "pid": os.getpid(),
        "message_id": "555",
    }
    assert decisions.read_request(rt, req.id) == req


def test_unknown_keys_are_kept_and_missing_ones_take_their_defaults(rt) -> None:
    rid = decisions.new_id()
    raw = {"id": rid, "session_id": SESSION, "from_a_newer_bridge": {"x": [1]}}
    private_files.write_atomic(
        os.path.join(rt.prompts, rid + ".json"), fastjson.dumps(raw).encode()
    )
    req = decisions.read_request(rt, rid)
    assert req is not None
    assert (req.kind, req.tool_input, req.permission_suggestions) == ("permission", {}, [])
    assert (req.deadline, req.pid, req.timeout, req.agent_id) == (0.0, 0, 900.0, None)
    assert not decisions.is_pending(rt, req)  # no deadline, no hook: not waiting
    decisions.write_request(rt, req)
    assert decisions.read_request(rt, rid).extra == {"from_a_newer_bridge": {"x": [1]}}
    decision = Decision.from_dict({"outcome": "allow", "by": "1", "note": "kept"})
    assert decision is not None and decision.to_dict() == {
        "outcome": "allow",
        "by": "1",
        "note": "kept",
    }


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "shell"},  # not a kind the bot can show
        {"kind": 3},
        {"deadline": "tomorrow"},
        {"deadline": True},
        {"pid": "123"},
        {"pid": 1.5},
        {"tool_input": ["Bash"]},
        {"permission_suggestions": {"type": "addRules"}},
        {"session_id": 7},
        {"channel_id": 100000000000000003},
        {"timeout": [900]},
        {"message_id": {"id": "555"}},
    ],
)
def test_a_request_of_the_wrong_shape_reads_as_nothing(rt, fields: dict) -> None:
    """Never a crash: not listed, not pending, nothing for a later event to close."""
    rid = decisions.new_id()
    raw = {
        "id": rid,
        "kind": "permission",
        "session_id": SESSION,
        "channel_id": "1",
        "deadline": time.time() + 60,
        "pid": os.getpid(),
        **fields,
    }
    private_files.write_atomic(
        os.path.join(rt.prompts, rid + ".json"), fastjson.dumps(raw).encode()
    )
    assert decisions.read_request(rt, rid) is None
    assert decisions.open_prompts(rt) == []
    assert decisions.mark_stale(rt, event("Stop")) == []


def test_a_request_whose_id_is_not_its_file_name_is_not_read(rt) -> None:
    rid, other = decisions.new_id(), decisions.new_id()
    raw = {"id": other, "session_id": SESSION, "deadline": time.time() + 60, "pid": os.getpid()}
    private_files.write_atomic(
        os.path.join(rt.prompts, rid + ".json"), fastjson.dumps(raw).encode()
    )
    assert decisions.read_request(rt, rid) is None
    assert decisions.Request.from_dict({**raw, "id": "../../etc"}) is None


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"outcome": None},
        {"outcome": 1},
        {"outcome": "always", "suggestion": "0"},
        {"outcome": "always", "suggestion": True},
        {"outcome": "answers", "answers": ["a"]},
        {"outcome": "timeout", "left_to_terminal": "yes"},
        {"outcome": "deny", "message": {"text": "no"}},
        [],
        "allow",
    ],
)
def test_a_decision_of_the_wrong_shape_reads_as_nothing(rt, raw: object) -> None:
    """The waiting hook keeps waiting (the deadline still decides) instead of crashing."""
    req = request(rt)
    with open(decisions.decision_path(rt, req.id), "wb") as handle:
        handle.write(fastjson.dumps(raw).encode())
    os.chmod(decisions.decision_path(rt, req.id), 0o600)
    assert decisions.read_decision(rt, req.id) is None
    assert Decision.from_dict(raw) is None


def test_records_copy_their_containers() -> None:
    first, second = Request(id=decisions.new_id()), Request(id=decisions.new_id())
    first.tool_input["x"] = 1
    assert second.tool_input == {}
    raw = {"id": decisions.new_id(), "tool_input": {"a": 1}}
    assert Request.from_dict(raw).tool_input is not raw["tool_input"]
