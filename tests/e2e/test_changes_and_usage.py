"""Issue 12 §1 and §2 from the phone: what a turn changed (summary, Diff button, /diff) and
what it cost (status message, /usage, the panel).

Real CLI against the fake Messages API (its Bash and Write tools change a real git
repository), real hooks (UserPromptSubmit and Stop snapshot the working tree), real bot,
the emulator's messages, clicks and slash commands.
"""

from __future__ import annotations

import re
import subprocess

from bridge_testkit import is_status, wait_until
from fake_anthropic import text, tool_use
from tests.e2e.test_control import command

FENCE = re.compile(r"(?<!`)```(?!`)")  # a real fence: not one defused with zero-width spaces
# On the pinned CLI only: the hooks and statusLine fields they use are the relay's and the
# footer's, which run on both versions elsewhere (the suite's time is budgeted: < 15 min).

COST = re.compile(r"✅ Done in \d+ s · \d+ tools? · \$\d+\.\d\d")


def git(path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def make_repo(path) -> None:
    git(path, "init", "-q")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    (path / "app.py").write_text("print('one')\nprint('two')\n")
    (path / ".gitignore").write_text("*.log\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "start")


def bypass(rig, *projects: str, **extra: object) -> None:
    raw = rig.config()
    for entry in raw["servers"][0]["projects"]:
        if entry["name"] in projects:
            entry["permission"] = "bypassPermissions"
    raw["servers"][0].update(extra)
    rig.write_config(raw)


def changing_turn(path, delay: float, more: str = "") -> list:
    """A turn that edits a tracked file, writes an untracked text file (holding a fence and
    @everyone), a binary file and an ignored log: three files count (``more``: a command
    that changes more)."""
    command = (f"cd {path} && printf 'print(3)\\n' >> app.py && printf '\\000\\001\\002' > blob.bin"
               f" && echo noise > debug.log{more}")  # fmt: skip
    note = "hello @everyone\n```\nnot code\n"
    return [
        tool_use("Bash", {"command": command, "description": "Change files"}, delay=delay),
        tool_use("Write", {"file_path": str(path / "new.txt"), "content": note}, delay=delay),
        text("changed three files", delay=delay),
    ]


def click_answer(rig, message: dict, user: str = "alice") -> dict:
    """Click the message's Diff button; the (first) ephemeral answer the user sees."""
    button = message["components"][0]["components"][0]
    assert button["label"] == "Diff", message
    since = rig.discord.mark()
    result = rig.discord.click(message["id"], button["custom_id"], user=user)
    assert result["ephemeral"], result
    if result["response_type"] == 4:
        return result["message"]
    assert result["response_type"] == 5, result
    record = rig.discord.wait(since=since, kind="message_update",
                              interaction_id=result["interaction_id"], timeout=60)  # fmt: skip
    return record["message"]


def test_a_turn_that_changes_files_ends_with_a_summary_a_diff_button_and_its_cost(rig) -> None:
    path = rig.projects["project-a"]
    make_repo(path)
    general = rig.ids["general"]
    bypass(rig, "project-a", generalChannelId=general)
    rig.api.script(*changing_turn(path, delay=1.0))
    rig.start_bot()
    rig.post("change some files")
    rig.wait_bot_message(content_contains="changed three files", timeout=90)

    def closed() -> dict | None:
        found = [m for m in rig.bot_messages(status=True) if is_status(m)]
        return next((m for m in found if COST.match(m["content"])), None)

    status = wait_until(closed, 30, "the status message closed with the turn's cost")
    assert "📝 3 files changed, +4 −0" in status["content"], status["content"]
    assert " · 2 tools · $" in status["content"]  # Bash and Write

    # The Diff button: the owner gets the turn's diff; the binary file is named, not dumped.
    answer = click_answer(rig, status)
    shown = answer["content"]
    assert shown.startswith("📝 3 files changed, +4 −0 (this turn)"), shown
    assert "```diff" in shown and "+print(3)" in shown and "+hello @everyone" in shown
    assert "Binary files /dev/null and b/blob.bin differ" in shown
    assert "debug.log" not in shown  # ignored by .gitignore
    assert len(FENCE.findall(shown)) % 2 == 0, shown  # the diff's own ``` cannot break out
    assert answer.get("mention_everyone") is not True
    assert click_answer(rig, status, user="bob")["content"].startswith("Only this bridge's owner")

    # /diff: the uncommitted changes against HEAD (the same three files now).
    uncommitted = command(rig, "diff")
    assert uncommitted.startswith("📝 3 files changed, +4 −0 (uncommitted, against HEAD)")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "claude's work")
    assert command(rig, "diff") == "No changes (uncommitted, against HEAD)."
    assert command(rig, "diff", {"base": "HEAD~1"}).startswith(
        "📝 3 files changed, +4 −0 (working tree against `HEAD~1`)"
    )
    assert "not a revision" in command(rig, "diff", {"base": "--output=/tmp/x"})

    # /usage: this session's cost and context, today's total, plan usage not reported.
    usage = command(rig, "usage")
    assert re.search(r"This session: \$\d+\.\d\d so far · context \d+% used", usage), usage
    assert re.search(r"Today \(\d{4}-\d\d-\d\d\): \$\d+\.\d\d across 1 session of", usage), usage
    assert "Plan usage: not reported" in usage
    day_files = list((rig.state_dir / "usage").glob("*/*.json"))
    assert len(day_files) == 1, day_files

    # The panel: the session's compact usage line.
    line = re.compile(r"\*\*project-a\*\*.* · ctx \d+% · \$\d+\.\d\d")
    panel = lambda: any(line.search(m["content"]) for m in rig.discord.messages(general))  # noqa: E731
    wait_until(panel, 30, "the panel's usage line")

    # The button survives a restart of the bot (the diff is still that turn's).
    rig.stop_bot()
    rig.start_bot()
    again = click_answer(rig, status)
    assert again["content"].startswith("📝 3 files changed, +4 −0 (this turn)"), again


def test_a_short_turn_carries_the_summary_on_its_reply_and_no_git_says_why(rig) -> None:
    """With progress off there is no status message: the reply carries summary and button.
    A session outside git gets no summary, and /diff says why."""
    path = rig.projects["project-a"]
    make_repo(path)
    raw = rig.config()
    for entry in raw["servers"][0]["projects"]:
        entry["permission"] = "bypassPermissions"
        entry["progress"] = False
    rig.write_config(raw)
    rig.api.script(*changing_turn(path, delay=0, more=" && seq 1 3000 > numbers.txt"))
    rig.start_bot()
    rig.post("change some files")
    reply = rig.wait_bot_message(content_contains="changed three files", timeout=90)
    assert "📝 4 files changed, +3004 −0" in reply["content"], reply
    # Too long to show inline: a .diff file, the message lists the files.
    answer = click_answer(rig, reply)
    assert "`turn-" in answer["content"] and ".diff`" in answer["content"], answer
    assert "+3000 −0  numbers.txt" in answer["content"] and "binary  blob.bin" in answer["content"]
    (attached,) = answer["attachments"]
    assert attached["filename"].endswith(".diff")
    whole = rig.discord.file_bytes(attached).decode()
    assert "+print(3)" in whole and "+2999\n+3000" in whole

    other = rig.projects["project-b"]
    rig.api.script(
        tool_use("Bash", {"command": f"echo x > {other}/made.txt", "description": "Make"}),
        text("made one file"),
    )
    rig.post("make a file", "project-b")
    plain = rig.wait_bot_message("project-b", content_contains="made one file", timeout=90)
    assert "📝" not in plain["content"] and not plain["components"], plain
    said = command(rig, "diff", channel="project-b")
    assert "is not in a git repository" in said, said


def test_a_worktree_thread_reviews_its_own_worktree(rig) -> None:
    """A thread with worktree isolation: the turn's summary is the worktree's, /diff there
    compares with the commit its branch started from (Claude's own commit included), and the
    project's channel, whose tree holds the worktree, sees no change of its own."""
    repo = rig.projects["project-a"]
    make_repo(repo)
    raw = rig.config()
    raw["servers"][0]["projects"][0]["thread"] = {
        "isolation": "worktree", "permission": "bypassPermissions"
    }  # fmt: skip
    raw["servers"][0]["projects"][0]["progress"] = False  # the summary comes on the reply
    rig.write_config(raw)
    rig.start_bot()
    thread = rig.discord.create_thread(rig.ids["project-a"], "Feature")
    work = repo / ".claude" / "worktrees" / f"feature-{thread['id']}"
    who = "-c user.name=c -c user.email=c@c.example"
    commit = (f"cd {work} && echo one > committed.txt && git add committed.txt"
              f" && git {who} commit -qm one && echo two > loose.txt")  # fmt: skip
    rig.api.script(
        tool_use("Bash", {"command": commit, "description": "Commit one, leave one"}),
        text("one committed, one loose"),
    )
    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "work on the feature")
    record = rig.discord.wait(since=since, kind="message_create", channel_id=thread["id"],
                              content_contains="one committed", timeout=90)  # fmt: skip
    reply = record["message"]
    assert "📝 2 files changed, +2 −0" in reply["content"], reply
    assert "+two" in click_answer(rig, reply)["content"]

    since = rig.discord.mark()
    result = rig.discord.run_command(thread["id"], "diff")
    answer = rig.discord.wait(since=since, kind="message_update",
                              interaction_id=result["interaction_id"], timeout=60)  # fmt: skip
    shown = answer["message"]["content"]
    assert shown.startswith("📝 2 files changed, +2 −0 (since the worktree's base commit)"), shown
    assert "+one" in shown and "+two" in shown
    assert command(rig, "diff") == "No changes (uncommitted, against HEAD)."  # the project's
