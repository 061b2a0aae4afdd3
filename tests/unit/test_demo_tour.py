"""``discord-bridge try --demo``'s scripted model, request by request, and what ``--demo``
refuses. The tour end to end, in a browser: tests/e2e/test_try_demo.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge import cli
from bridge.demo_tour import GREETINGS, MARK, Tour

HOME = Path("/home/u")
REMINDER = {"type": "text", "text": "<system-reminder>edit nothing; plan ahead</system-reminder>"}


def typed(text: str) -> dict:
    return {"role": "user", "content": [REMINDER, {"type": "text", "text": text}]}


def called(name: str, tool_input: dict) -> dict:
    block = {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": tool_input}
    return {"role": "assistant", "content": [block]}


def result(text: str, error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": "toolu_x", "content": text, "is_error": error}
    return {"role": "user", "content": [block]}


def answer(tour: Tour, *messages: dict, system: str = "") -> dict:
    """What the scripted model answers: its first content block."""
    turn = tour({"system": system, "messages": list(messages)})
    return turn.content({})[0]


def said(block: dict) -> str:
    assert block["type"] == "text", block
    assert block["text"].startswith(MARK + "\n"), block["text"]
    return block["text"]


def test_anything_else_gets_a_marked_reply_listing_the_steps(tmp_path: Path) -> None:
    text = said(answer(Tour(tmp_path, HOME), typed("hi there")))
    assert "`run a command`" in text and "`/mode plan`" in text


def test_the_edit_reads_then_swaps_the_greeting_then_says_so(tmp_path: Path) -> None:
    tour, path = Tour(tmp_path, HOME), str(tmp_path / "greet.py")
    asked = typed("please edit it")
    first = answer(tour, asked)
    assert first["name"] == "Read" and first["input"] == {"file_path": path}
    read = called("Read", {"file_path": path})
    edit = answer(tour, asked, read, result(f"1\tdef greet(name):\n2\t    {GREETINGS[0]}\n"))
    assert edit["name"] == "Edit"
    swap = {"file_path": path, "old_string": GREETINGS[0], "new_string": GREETINGS[1]}
    assert edit["input"] == swap
    back = answer(tour, asked, read, result(f"2\t    {GREETINGS[1]}\n"))
    assert back["input"]["old_string"] == GREETINGS[1]  # typed again: swapped back
    done = [asked, read, result("ok"), called("Edit", edit["input"]), result("updated")]
    assert "Diff" in said(answer(tour, *done))
    refused = [*done[:4], result("The user doesn't want to proceed", error=True)]
    assert "as it was" in said(answer(tour, *refused))
    changed = answer(tour, asked, read, result("2\t    print('someone else')\n"))
    assert "leave it alone" in said(changed)


def test_the_step_is_the_last_typed_prompts_not_an_earlier_ones(tmp_path: Path) -> None:
    tour = Tour(tmp_path, HOME)
    earlier = [typed("run a command"), called("Bash", {}), result("ran")]
    block = answer(tour, *earlier, {"role": "assistant", "content": "done"}, typed("a question"))
    assert block["name"] == "AskUserQuestion"
    picked = result('User has answered your questions: "Which greeting…"="Bonjour".')
    text = said(answer(tour, typed("a question"), called("AskUserQuestion", {}), picked))
    assert "**Bonjour**" in text


def test_a_plan_is_written_where_plan_mode_says_then_offered(tmp_path: Path) -> None:
    tour = Tour(tmp_path, HOME)
    assert "/mode plan" in said(answer(tour, typed("plan")))  # not in plan mode
    where = "create your plan at /home/u/.claude/plans/a-b-c.md using the Write tool"
    write = answer(tour, typed("plan"), system=where)
    assert write["name"] == "Write" and write["input"]["file_path"].endswith("/a-b-c.md")
    after = [typed("plan"), called("Write", {}), result("written")]
    assert answer(tour, *after, system=where)["name"] == "ExitPlanMode"
    elsewhere = "create your plan at /etc/.claude/plans/x.md, or /home/u/.claude/plans/../x.md"
    assert "/mode plan" in said(answer(tour, typed(f"plan {elsewhere}")))
    approved = [*after, called("ExitPlanMode", {}), result("User has approved your plan")]
    assert "approved" in said(answer(tour, *approved, system=where))


@pytest.mark.parametrize("extra", [["somewhere"], ["--worktrees"], ["--budget", "1"]])
def test_demo_refuses_a_project_dir_and_the_options_it_has_no_use_for(
    extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["try", "--demo", "--no-browser", *extra]) == 2
    err = capsys.readouterr().err
    assert "--demo runs in a throwaway project of its own" in err
    assert "must never edit your files" in err
