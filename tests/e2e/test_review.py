"""Issue 20 §1 from the phone: line comments on a turn's diff, gathered in a draft review that
survives a bot restart, sent to Claude as one prompt.

Real CLI against the fake Messages API (its Bash tool changes a real git repository), real
hooks (the turn's snapshots), real bot, the emulator's clicks, selects and modals: the
select shows only the files it lists, the modal takes what a user types.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from bridge.state import decisions, runtime
from bridge.state.decisions import Request
from bridge_testkit import wait_until
from fake_anthropic import Turn, echo, last_user_text, text, tool_use
from tests.e2e.test_changes_and_usage import make_repo

DRAFT = "📝 **Draft review**"
ADDED = re.compile(r"💬 Added to the \[draft review\]\(https://discord\.com/channels/\d+/\d+/\d+\)")


def components(message: dict) -> list[dict]:
    return [c for row in message.get("components") or [] for c in row["components"]]


def component(message: dict, label: str = "", kind: int = 2) -> dict:
    """The message's button whose label starts with ``label`` (``kind`` 3: its select)."""
    for found in components(message):
        if found["type"] == kind and (kind == 3 or found.get("label", "").startswith(label)):
            return found
    raise AssertionError(f"no {label or 'select'} in {components(message)}")


def answered(rig, result: dict, since: int) -> dict:
    """The message a deferred (thinking) interaction was answered with."""
    if result["response_type"] == 4:
        return result["message"]
    assert result["response_type"] == 5, result
    record = rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )
    return record["message"]


def pick(rig, message: dict, name: str) -> dict:
    """Pick a file in the diff's select: the ephemeral answer with its numbered lines."""
    select = component(message, kind=3)
    (value,) = [o["value"] for o in select["options"] if o["label"] == name]
    since = rig.discord.mark()
    return answered(rig, rig.discord.select(message["id"], select["custom_id"], [value]), since)


def comment(rig, shown: dict, lines: str, words: str) -> tuple[dict, str]:
    """**Comment…** under a file's lines, the form filled in: (the form, what it answered)."""
    opened = rig.discord.click(shown["id"], component(shown, "Comment")["custom_id"])
    assert opened["response_type"] == 9, opened
    since = rig.discord.mark()
    done = rig.discord.submit_modal(opened, {"lines": lines, "text": words})
    return opened["modal"], answered(rig, done, since)["content"]


def with_select(rig, result: dict, since: int) -> dict:
    """The message of a deferred answer (``/diff``'s may be several) that holds a select."""

    def found() -> dict | None:
        for record in rig.discord.records(since=since):
            message = record.get("message") or {}
            if record.get("interaction_id") == result["interaction_id"] and any(
                c["type"] == 3 for c in components(message)
            ):
                return message
        return None

    return wait_until(found, 60, "the answer with the file select")


def draft_message(rig, contains: str) -> dict:
    def found() -> dict | None:
        return next((m for m in rig.bot_messages() if contains in m["content"]), None)

    return wait_until(found, 30, f"a draft review message with {contains!r}")


def open_prompt(rig) -> Request:
    """A permission prompt of project-a's session, open as its hook leaves it on disk."""
    rt = runtime.Runtime(str(rig.runtime_dir), str(rig.state_dir))
    request = Request(
        id=decisions.new_id(),
        kind="permission",
        channel_id=rig.ids["project-a"],
        tool_name="Bash",
        created=time.time(),
        deadline=time.time() + 600,
        pid=os.getpid(),
    )
    decisions.write_request(rt, request)
    return request


def read_the_review() -> Turn:
    """Claude reads the file the short prompt points to."""

    def build(request: dict) -> list[dict]:
        path = re.search(r"written out in (\S+\.md)", last_user_text(request))
        assert path, "no review file in the prompt"
        return [
            {
                "type": "tool_use",
                "id": f"toolu_read_{time.time_ns()}",
                "name": "Read",
                "input": {"file_path": path[1]},
            }
        ]

    return Turn(build=build, stop_reason="tool_use")


def test_comments_on_two_files_survive_a_restart_and_reach_claude_as_one_prompt(rig) -> None:
    path = rig.projects["project-a"]
    make_repo(path)  # app.py: print('one'), print('two')
    raw = rig.config()
    raw["servers"][0]["projects"][0].update(permission="bypassPermissions", progress=False)
    rig.write_config(raw)
    change = (
        f"cd {path} && printf 'print(3)\\nprint(4)\\n' >> app.py"
        " && printf 'alpha\\nbeta\\ngamma\\n' > notes.txt"
    )
    rig.api.script(
        tool_use("Bash", {"command": change, "description": "Change two files"}),
        text("changed two files"),
        text("on it"),
        read_the_review(),
        echo(prefix="Read: "),
    )
    rig.start_bot()
    rig.post("change two files")
    reply = rig.wait_bot_message(content_contains="changed two files", timeout=90)
    assert "📝 2 files changed, +5 −0" in reply["content"], reply

    # Diff: the turn's diff, and under it a select of its two files.
    since = rig.discord.mark()
    clicked = rig.discord.click(reply["id"], component(reply, "Diff")["custom_id"])
    diff = answered(rig, clicked, since)
    assert "+print(3)" in diff["content"], diff
    names = [o["label"] for o in component(diff, kind=3)["options"]]
    assert names == ["app.py", "notes.txt"], names

    # A file: its hunks numbered by its new lines; a comment on line 2.
    shown = pick(rig, diff, "notes.txt")
    assert "+2 │ beta" in shown["content"], shown["content"]
    form, said = comment(rig, shown, "2", "beta should shout: BETA")
    assert form["title"] == "Comment on notes.txt", form
    assert ADDED.match(said) and "(1 comment)" in said, said
    first = draft_message(rig, DRAFT)
    assert "1 comment on 1 file" in first["content"] and "`notes.txt` 2 — beta" in first["content"]
    assert component(first, "Send review")["label"] == "Send review (1)"

    rig.stop_bot()
    rig.start_bot()

    # After the restart: the same diff's select, a line past the end refused, the comment
    # kept for the form's next opening, then the right lines.
    shown = pick(rig, diff, "app.py")
    assert "+3 │ print(3)" in shown["content"] and "+4 │ print(4)" in shown["content"]
    _, said = comment(rig, shown, "9", "use logging, not print")
    assert "app.py has 4 lines now: line 9 is past its end" in said, said
    assert "Your comment is kept" in said
    retry = next(
        r for r in rig.discord.records(kind="message_update") if said in r["message"]["content"]
    )["message"]
    opened = rig.discord.click(retry["id"], component(retry, "Comment")["custom_id"])
    inputs = {
        c["custom_id"]: c.get("value")
        for row in opened["modal"]["components"]
        for c in row["components"]
    }
    assert inputs == {"lines": "9", "text": "use logging, not print"}, inputs
    since = rig.discord.mark()
    done = rig.discord.submit_modal(opened, {"lines": "3-4", "text": "use logging, not print"})
    assert "(2 comments)" in answered(rig, done, since)["content"]
    second = draft_message(rig, "2 comments on 2 files")
    assert second["id"] == first["id"]  # one message, edited
    assert "`app.py` 3–4 — use logging" in second["content"], second["content"]

    # Claude (or you) edits again before the review goes: notes.txt's line 2 changes, two
    # lines above app.py's comment move it down.
    (path / "notes.txt").write_text("alpha\nBETA?\ngamma\n")
    (path / "app.py").write_text("import logging\n" + (path / "app.py").read_text())

    # A prompt open in the session: nothing typed, the draft kept.
    asking = open_prompt(rig)
    since = rig.discord.mark()
    assert (
        rig.discord.click(second["id"], component(second, "Send review")["custom_id"])[
            "response_type"
        ]
        == 6
    )
    refused = rig.discord.wait(
        since=since, kind="message_create", content_contains="not sent", timeout=30
    )["message"]
    assert "Answer the permission prompt first" in refused["content"], refused
    assert "draft review is kept" in refused["content"]
    decisions.close(runtime.Runtime(str(rig.runtime_dir), str(rig.state_dir)), asking.id)

    requests = len(rig.api.requests)
    assert (
        rig.discord.click(second["id"], component(second, "Send review")["custom_id"])[
            "response_type"
        ]
        == 6
    )
    saw = last_user_text(rig.api.wait_requests(requests + 1, timeout=60)[requests])
    assert saw.startswith("Review of your changes: 2 comments on 2 files."), saw
    assert "1. notes.txt, line 2 (changed since this comment was written):" in saw, saw
    assert "   2 | BETA?\n   When commented, they read:\n   2 | beta\n" in saw, saw
    assert "Comment: beta should shout: BETA" in saw
    assert "2. app.py, lines 4-5 (lines 3-4 when commented):" in saw, saw
    assert "   4 | print(3)\n   5 | print(4)\n   Comment: use logging, not print" in saw, saw

    def closed() -> dict | None:
        now = next(m for m in rig.bot_messages() if m["id"] == first["id"])
        return now if "Review sent" in now["content"] else None

    sent = wait_until(closed, 30, "the draft message to say it was sent")
    assert sent["content"].startswith("✅ **Review sent** to Claude by "), sent["content"]
    assert not sent["components"]
    assert not list((rig.state_dir / "state" / "reviews").glob("*.json"))
    rig.wait_bot_message(content_contains="on it", timeout=60)

    # A review taller than the input box has room for (here: a small terminal attached) is
    # written to a file in the session's uploads, and a short prompt points Claude to it.
    _, said = comment(rig, shown, "2", "and this one too")
    assert ADDED.match(said) and "(1 comment)" in said, said
    fresh = draft_message(rig, "1 comment on 1 file")
    assert fresh["id"] != first["id"]  # a new draft, a new message
    subprocess.run(
        [
            "tmux",
            "-L",
            rig.socket,
            "resize-window",
            "-t",
            rig.pane().pane_id,
            "-x",
            "80",
            "-y",
            "14",
        ],
        check=True,
    )
    requests = len(rig.api.requests)
    rig.discord.click(fresh["id"], component(fresh, "Send review")["custom_id"])
    saw = last_user_text(rig.api.wait_requests(requests + 1, timeout=60)[requests])
    written = re.search(r"written out in (\S+\.md)", saw)
    assert saw.startswith("Review of your changes: 1 comment on 1 file, written out in "), saw
    assert written and written[1].startswith(str(rig.state_dir / "uploads")), saw
    read = last_user_text(rig.api.wait_requests(requests + 2, timeout=60)[requests + 1])
    assert "[tool_result]" in read and "Comment: and this one too" in read, read
    assert "2. " not in read and "1. app.py, line 3 (line 2 when commented" in read, read

    # /diff of more files than a select holds: 25 a page, Next ▶ shows the rest (a file of
    # the second page cannot be picked before: the select does not show it).
    (path / "many").mkdir()
    for i in range(26):
        (path / "many" / f"f{i:02}.txt").write_text(f"file {i}\n")
    since = rig.discord.mark()
    listed = with_select(rig, rig.discord.run_command(rig.ids["project-a"], "diff"), since)
    options = component(listed, kind=3)["options"]
    assert len(options) == 25 and component(listed, kind=3)["placeholder"].endswith("of 2)")
    assert "many/f25.txt" not in [o["label"] for o in options]
    with pytest.raises(RuntimeError, match="does not show"):
        rig.discord.select(listed["id"], component(listed, kind=3)["custom_id"], ["27"])
    since = rig.discord.mark()
    assert (
        rig.discord.click(listed["id"], component(listed, "Next")["custom_id"])["response_type"]
        == 6
    )
    paged = rig.discord.wait(
        since=since, kind="message_update", message_id=listed["id"], timeout=30
    )["message"]
    assert "many/f25.txt" in [o["label"] for o in component(paged, kind=3)["options"]]
    shown = pick(rig, paged, "many/f25.txt")
    assert "+1 │ file 25" in shown["content"], shown["content"]
