"""Issue 12 §1 and §2 from the phone: what a turn changed (summary, Diff button, /diff) and
what it cost (status message, /usage, the panel). Issue 18: a hostile repository's
config runs nothing, a repository holding the bridge's dirs never gets the token, the
diff's code block holds whatever the repository holds.

Real CLI against the fake Messages API (its Bash and Write tools change a real git
repository), real hooks (UserPromptSubmit and Stop snapshot the working tree), real bot,
the emulator's messages, clicks and slash commands.
"""

from __future__ import annotations

import re
import subprocess

from bridge_testkit import is_status, wait_until
from bridge_testkit.discord_markdown import outside_code
from fake_anthropic import text, tool_use
from tests.e2e.test_control import command

# On the pinned CLI only: the hooks and statusLine fields they use are the relay's and the
# footer's, which run on both versions elsewhere (the suite's time is budgeted: < 15 min).

COST = re.compile(r"✅ Done in \d+ s · \d+ tools? · \$\d+\.\d\d")


def git(path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(path), *args], check=True, capture_output=True, text=True
    ).stdout


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
    command = (
        f"cd {path} && printf 'print(3)\\n' >> app.py && printf '\\000\\001\\002' > blob.bin"
        f" && echo noise > debug.log{more}"
    )
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
    record = rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )
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
    assert "not code" not in outside_code(shown), shown  # the diff's own ``` cannot break out
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
        "isolation": "worktree",
        "permission": "bypassPermissions",
    }
    raw["servers"][0]["projects"][0]["progress"] = False  # the summary comes on the reply
    rig.write_config(raw)
    rig.start_bot()
    thread = rig.discord.create_thread(rig.ids["project-a"], "Feature")
    work = repo / ".claude" / "worktrees" / "feature"
    who = "-c user.name=c -c user.email=c@c.example"
    commit = (
        f"cd {work} && echo one > committed.txt && git add committed.txt"
        f" && git {who} commit -qm one && echo two > loose.txt"
    )
    rig.api.script(
        tool_use("Bash", {"command": commit, "description": "Commit one, leave one"}),
        text("one committed, one loose"),
    )
    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "work on the feature")
    record = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=thread["id"],
        content_contains="one committed",
        timeout=90,
    )
    reply = record["message"]
    assert "📝 2 files changed, +2 −0" in reply["content"], reply
    assert "+two" in click_answer(rig, reply)["content"]

    since = rig.discord.mark()
    result = rig.discord.run_command(thread["id"], "diff")
    answer = rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )
    shown = answer["message"]["content"]
    assert shown.startswith("📝 2 files changed, +2 −0 (since the worktree's base commit)"), shown
    assert "+one" in shown and "+two" in shown
    assert command(rig, "diff") == "No changes (uncommitted, against HEAD)."  # the project's


DRIVERS = ("x=y", "", "a b", "Evil", "-x", "x.y")  # names -c cannot neutralise, and others
PHISH = "[click here](https://evil.example/phish)"


def hostile_home(rig) -> tuple:
    """A repository at the rig's root, as a dotfiles repository at ~ would hold the bridge's
    home, runtime and state dirs, with project-a a plain folder in it. Its config defines a
    filter driver per name (clean, smudge and process each leave a marker), an fsmonitor, a
    textconv and an external diff; its attributes put a driver on every file."""
    root, markers = rig.tmp, rig.tmp.parent / f"{rig.tmp.name}-markers"
    markers.mkdir()
    git(root, "init", "-q")
    # The bridge's dirs are not ignored (the point); the rig's other files are.
    kept = ("project-a", "bridge-home", "runtime", "state", ".gitignore", ".gitattributes")
    (root / ".gitignore").write_text("/*\n" + "".join(f"!/{name}\n" for name in kept))
    project = rig.projects["project-a"]
    attributes = ["* diff=evil"]
    for i, name in enumerate(DRIVERS):
        (project / f"f{i}.txt").write_text(f"file {i}\n")
        attributes.append(f"project-a/f{i}.txt filter={name}")  # ("a b" cannot be named)
    (root / ".gitattributes").write_text("\n".join(attributes) + "\n")
    git(root, "add", ".gitignore", ".gitattributes", "project-a")  # the bridge's: untracked
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "dotfiles")
    # Each marker records who ran it: the process chain up from the command.
    (markers / "mark.sh").write_text(
        'p=$$; while [ "$p" -gt 1 ]; do tr "\\0" " " < /proc/$p/cmdline; echo;'
        ' p=$(cut -d" " -f4 /proc/$p/stat); done >> "$(dirname "$0")/$1"\n'
    )
    mark = lambda what: f'"sh {markers}/mark.sh {what}; cat"'  # noqa: E731
    config = [
        f"[core]\n\tfsmonitor = {mark('fsmonitor')}\n",
        f'[diff "evil"]\n\ttextconv = {mark("textconv")}\n\tcommand = {mark("diff")}\n',
    ]
    for i, name in enumerate(DRIVERS):
        config.append(
            f'[filter "{name}"]\n\tclean = {mark(f"{i}-clean")}\n'
            f"\tsmudge = {mark(f'{i}-smudge')}\n\tprocess = {mark(f'{i}-process')}\n"
            "\trequired = true\n"
        )
    with open(root / ".git" / "config", "a") as handle:
        handle.write("".join(config))
    return root, markers


def ran_by_bridge(markers) -> dict[str, str]:
    """The repository's commands the bridge ran (a hook or the bot in the process chain),
    with that chain. (Claude Code's own ``git diff HEAD`` runs a filter too: not ours.)"""
    chains = {p.name: p.read_text() for p in markers.iterdir() if p.name != "mark.sh"}
    return {k: v for k, v in chains.items() if "/hooks/" in v or "bridge.cli" in v}


def test_a_hostile_repository_holding_the_bridge_runs_nothing_and_shows_no_secret(rig) -> None:
    """Issue 18 G1, G4, G6 and the bridge's own dirs, as a user meets them: a turn of the
    real CLI (UserPromptSubmit and Stop snapshot the tree), then /diff, in a repository whose
    config names filter drivers ``x=y`` and ``""`` (no ``-c`` can neutralise those) and which
    holds the bridge's home (the token), runtime and state dirs; /diff of a file holding a
    run of five backticks around a masked link."""
    root, markers = hostile_home(rig)
    plain = rig.projects["project-b"]
    make_repo(plain)
    (plain / "notes.md").write_text(f"`````\n{PHISH}\n`````\n")
    raw = rig.config()
    raw["servers"][0]["projects"][0].update(permission="bypassPermissions", progress=False)
    rig.write_config(raw)
    project = rig.projects["project-a"]
    edit = " && ".join(f"echo more >> f{i}.txt" for i in range(len(DRIVERS)))
    rig.api.script(
        tool_use("Bash", {"command": f"cd {project} && {edit}", "description": "Edit"}),
        text("edited the files"),
    )
    rig.start_bot()
    rig.post("edit the files")
    reply = rig.wait_bot_message(content_contains="edited the files", timeout=90)
    assert "📝 6 files changed, +6 −0" in reply["content"], reply["content"]  # the hooks'

    shown = command(rig, "diff")
    assert shown.startswith("📝 6 files changed, +6 −0 (uncommitted, against HEAD)"), shown
    token = rig.emu.bot_token
    assert token not in shown and "bridge-home" not in shown and "runtime/" not in shown
    objects = subprocess.run(
        ["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    assert token.encode() not in objects  # never copied into the repository's store
    assert ran_by_bridge(markers) == {}  # no command of the repository ran

    # Five backticks in the repository's text: the masked link stays inside the code block.
    shown = command(rig, "diff", channel="project-b")
    assert shown.startswith("📝 1 file changed, +3 −0") and "evil.example" in shown, shown
    assert "evil.example" not in outside_code(shown), shown

    # .git/index → /dev/zero: /diff answers at once instead of copying without end.
    index = root / ".git" / "index"
    index.unlink()
    index.symlink_to("/dev/zero")
    assert "index is a symlink: not followed" in command(rig, "diff")
    assert ran_by_bridge(markers) == {}
