"""Threads as sessions of their own, worktree isolation and resume after a restart, seen from
Discord (emulator), tmux (pane, cwd, env), git and the fake Anthropic API."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bridge.claude.screen import is_prompt_ready
from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text


def wait_reply(rig, channel_id: str, contains: str, since: int, timeout: float = 90.0) -> dict:
    """The bot's first message in ``channel_id`` (a channel or thread) containing ``contains``."""
    try:
        record = rig.discord.wait(
            since=since,
            kind="message_create",
            channel_id=channel_id,
            author_id=rig.ids["bot_id"],
            content_contains=contains,
            timeout=timeout,
        )
    except TimeoutError as err:
        screens = "\n".join(
            f"--- pane {p.window_name} ---\n{rig.tmux.capture(p.pane_id)}" for p in rig.tmux.panes()
        )
        seen = [last_user_text(r)[:80] for r in rig.api.requests]
        raise AssertionError(
            f"{err}\nrequests: {seen}\nunscripted: {rig.api.unscripted}\n{screens}\n"
            f"{rig.diagnostics()}"
        ) from None
    return record["message"]


def pane_env(rig, key: str) -> dict[str, str]:
    """The environment of the Claude Code process in the session's pane."""
    pane = rig.tmux.find(key)
    pid = subprocess.run(
        ["tmux", "-L", rig.socket, "display-message", "-p", "-t", pane.pane_id, "#{pane_pid}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def git(path: Path, *args: str) -> str:
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
    done = subprocess.run(
        ["git", "-C", str(path), *identity, *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(path: Path) -> None:
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("project\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "initial")


def test_thread_is_its_own_session_and_replies_stay_apart(rig) -> None:
    rig.api.script(*[echo() for _ in range(4)])
    rig.start_bot()
    parent = rig.ids["project-a"]
    thread = rig.discord.create_thread(parent, "fix: the login #1")

    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "hello from the thread")
    wait_reply(rig, thread["id"], "Model saw: hello from the thread", since)
    rig.post("hello from the parent")
    wait_reply(rig, parent, "Model saw: hello from the parent", since)
    # The other order, without waiting in between.
    rig.post("parent again")
    rig.discord.post_message(thread["id"], "thread again")
    wait_reply(rig, thread["id"], "Model saw: thread again", since)
    wait_reply(rig, parent, "Model saw: parent again", since)

    bot = rig.ids["bot_id"]
    in_thread = [
        m["content"] for m in rig.discord.messages(thread["id"]) if m["author"]["id"] == bot
    ]
    in_parent = [m["content"] for m in rig.discord.messages(parent) if m["author"]["id"] == bot]
    assert all("parent" not in c for c in in_thread)
    assert all("thread" not in c for c in in_parent)
    assert sum("Model saw:" in c for c in in_thread) >= 2  # (progress messages quote it)
    assert sum("Model saw:" in c for c in in_parent) >= 2
    # Two windows, the thread's named from project and thread (tmux-safe), its env marked.
    names = sorted(p.window_name for p in rig.tmux.panes())
    assert names == ["project-a", "project-a-fix-the-login-1"]
    env = pane_env(rig, thread["id"])
    assert env["DISCORD_BRIDGE_THREAD_ID"] == thread["id"]
    assert env["DISCORD_BRIDGE_CHANNEL_ID"] == parent
    assert "DISCORD_BRIDGE_THREAD_ID" not in pane_env(rig, parent)
    # The thread was appended to the project's threads[] with its effective settings.
    saved = json.loads((rig.bridge_home / "config.json").read_text())
    threads = saved["servers"][0]["projects"][0]["threads"]
    path = str(rig.projects["project-a"])
    assert threads == [
        {
            "name": "fix: the login #1",
            "channelId": thread["id"],
            "projectPath": path,
            "isolation": "none",
        }
    ]


def test_three_threads_at_once_each_answer_in_their_own_thread(rig) -> None:
    rig.api.script(*[echo() for _ in range(6)])
    rig.start_bot()
    threads = [rig.discord.create_thread(rig.ids["project-a"], f"task {n}") for n in range(3)]
    since = rig.discord.mark()
    for n, thread in enumerate(threads):
        rig.discord.post_message(thread["id"], f"work on task number {n}")
    for n, thread in enumerate(threads):
        wait_reply(rig, thread["id"], f"Model saw: work on task number {n}", since, timeout=80)
    assert len(rig.tmux.panes()) == 3
    bot = rig.ids["bot_id"]
    for n, thread in enumerate(threads):
        said = [
            m["content"] for m in rig.discord.messages(thread["id"]) if m["author"]["id"] == bot
        ]
        assert any(f"Model saw: work on task number {n}" in c for c in said)
        others = {f"task number {k}" for k in range(3)} - {f"task number {n}"}
        assert not any(other in c for c in said for other in others)
    saved = json.loads((rig.bridge_home / "config.json").read_text())
    listed = {t["channelId"] for t in saved["servers"][0]["projects"][0]["threads"]}
    assert listed == {t["id"] for t in threads}  # three appends, none lost


def test_worktree_thread_clean_removed_dirty_kept_until_remove_anyway(rig) -> None:
    repo = rig.projects["project-a"]
    make_repo(repo)
    raw = rig.config()
    raw["servers"][0]["projects"][0]["thread"] = {"isolation": "worktree"}
    rig.write_config(raw)
    rig.api.script(*[echo() for _ in range(2)])
    rig.start_bot()

    # A clean worktree: the session runs in it; archiving removes it.
    clean = rig.discord.create_thread(rig.ids["project-a"], "Clean work")
    since = rig.discord.mark()
    rig.discord.post_message(clean["id"], "where am I")
    wait_reply(rig, clean["id"], "Model saw: where am I", since)
    clean_path = repo / ".claude" / "worktrees" / "clean-work"
    pane = rig.tmux.find(clean["id"])
    assert rig.tmux.current_path(pane.pane_id) == str(clean_path)
    assert git(clean_path, "branch", "--show-current").strip() == "worktree-clean-work"
    assert git(repo, "status", "--porcelain") == ""  # no `?? .claude/` in the owner's checkout
    rig.discord.archive_thread(clean["id"])
    # (the folder goes first, its branch a moment later: git keeps a checked-out branch)
    wait_until(
        lambda: not clean_path.exists() and "worktree-clean-work" not in git(repo, "branch"),
        what="the clean worktree and its branch to be removed",
    )
    assert rig.tmux.find(clean["id"]) is None

    # A dirty one is kept, the thread is told what would be lost; Remove anyway removes it.
    dirty = rig.discord.create_thread(rig.ids["project-a"], "Dirty work")
    since = rig.discord.mark()
    rig.discord.post_message(dirty["id"], "make a mess")
    wait_reply(rig, dirty["id"], "Model saw: make a mess", since)
    dirty_path = repo / ".claude" / "worktrees" / "dirty-work"
    (dirty_path / "notes.txt").write_text("unsaved thoughts\n")
    since = rig.discord.mark()
    rig.discord.archive_thread(dirty["id"])
    question = wait_reply(rig, dirty["id"], "would lose", since, timeout=30)
    assert "notes.txt" in question["content"]
    assert dirty_path.exists() and rig.tmux.find(dirty["id"]) is None
    buttons = [c["custom_id"] for row in question["components"] for c in row["components"]]
    assert buttons == [f"db:wt:remove:{dirty['id']}", f"db:wt:keep:{dirty['id']}"]

    refused = rig.discord.click(question["id"], buttons[0], user="bob")
    assert refused["ephemeral"] and dirty_path.exists()
    result = rig.discord.click(question["id"], buttons[0])
    assert result["response_type"] == 6
    edited = rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=question["id"],
        content_contains="Removed",
        timeout=30,
    )["message"]
    assert edited["components"] == []
    assert not dirty_path.exists()
    assert "worktree-dirty-work" not in git(repo, "branch", "--list")


def test_killed_thread_pane_is_resumed_after_a_bot_restart(rig) -> None:
    rig.api.script(*[echo() for _ in range(2)])
    rig.start_bot()
    thread = rig.discord.create_thread(rig.ids["project-a"], "long story")
    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "remember the word pineapple")
    wait_reply(rig, thread["id"], "Model saw: remember the word pineapple", since)

    rig.stop_bot()
    rig.tmux.kill(rig.tmux.find(thread["id"]).pane_id)
    assert rig.tmux.find(thread["id"]) is None
    rig.start_bot()
    pane = wait_until(lambda: rig.tmux.find(thread["id"]), what="the thread's session to return")
    rig.tmux.wait_for(pane.pane_id, is_prompt_ready, 60)
    assert "remember the word pineapple" in rig.tmux.capture(pane.pane_id)  # the old conversation

    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "which word was it")
    wait_reply(rig, thread["id"], "Model saw: which word was it", since)
    request = rig.api.requests[-1]
    assert last_user_text(request) == "which word was it"
    assert "remember the word pineapple" in json.dumps(request["messages"])


def test_threads_archived_or_deleted_while_the_bot_was_down_end_their_sessions(rig) -> None:
    rig.api.script(*[echo() for _ in range(3)])
    rig.start_bot()
    archived = rig.discord.create_thread(rig.ids["project-a"], "done here")
    deleted = rig.discord.create_thread(rig.ids["project-a"], "gone too")
    idle = rig.discord.create_thread(rig.ids["project-a"], "went quiet")
    since = rig.discord.mark()
    rig.discord.post_message(archived["id"], "first task")
    rig.discord.post_message(deleted["id"], "second task")
    rig.discord.post_message(idle["id"], "third task")
    wait_reply(rig, archived["id"], "Model saw: first task", since)
    wait_reply(rig, deleted["id"], "Model saw: second task", since)
    wait_reply(rig, idle["id"], "Model saw: third task", since)

    rig.stop_bot()
    rig.tmux.kill(rig.tmux.find(deleted["id"]).pane_id)  # dead pane: would be resumed
    rig.discord.archive_thread(archived["id"])  # live pane: would be adopted
    rig.discord.delete_thread(deleted["id"])
    rig.discord.archive_thread(idle["id"], user=None)  # Discord's auto-archive: not the owner
    # At start the bot resumes sessions first, then starts startup projects: project-b up
    # means a resume of the deleted thread would have happened.
    raw = json.loads((rig.bridge_home / "config.json").read_text())
    raw["servers"][0]["projects"][1]["startup"] = True
    rig.write_config(raw)
    since = rig.discord.mark()
    rig.start_bot()
    wait_until(lambda: rig.tmux.find(archived["id"]) is None, 30, "the archived thread's pane")
    wait_reply(rig, idle["id"], "by Discord after inactivity", since, timeout=30)
    project_b = wait_until(lambda: rig.pane("project-b"), 30, "project-b to start")
    rig.tmux.wait_for(project_b.pane_id, is_prompt_ready, 60)
    assert rig.tmux.find(deleted["id"]) is None, rig.bot_output()
    assert rig.tmux.find(archived["id"]) is None
    assert rig.tmux.find(idle["id"]) is not None  # kept running, the owner asked


def buttons_of(message: dict) -> list[str]:
    return [c["custom_id"] for row in message["components"] for c in row["components"]]


def ignore_env_files(repo: Path) -> None:
    (repo / ".gitignore").write_text(".env\n*.sqlite\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore local files")


def test_archive_by_someone_else_or_by_discord_keeps_the_session_and_asks(rig) -> None:
    repo = rig.projects["project-a"]
    make_repo(repo)
    raw = rig.config()
    raw["servers"][0]["projects"][0]["thread"] = {"isolation": "worktree"}
    rig.write_config(raw)
    rig.api.script(*[echo() for _ in range(3)])
    rig.start_bot()
    thread = rig.discord.create_thread(rig.ids["project-a"], "Shared work", user="bob")
    key = thread["id"]
    since = rig.discord.mark()
    rig.discord.post_message(key, "start the work")
    wait_reply(rig, key, "Model saw: start the work", since)
    path = repo / ".claude" / "worktrees" / "shared-work"
    pane = rig.tmux.find(key).pane_id

    # The thread's creator (not an owner) archives it: nothing ends, the owner is asked.
    since = rig.discord.mark()
    rig.discord.archive_thread(key, user="bob")
    question = wait_reply(rig, key, "archived by", since, timeout=30)
    assert f"<@{rig.ids['bob']}>" in question["content"]
    assert "keeps running" in question["content"] and str(path) in question["content"]
    assert buttons_of(question) == [f"db:arch:{a}:{key}" for a in ("stop", "remove", "keep")]
    assert rig.tmux.find(key).pane_id == pane and path.is_dir()
    rig.discord.click(question["id"], f"db:arch:keep:{key}")
    rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=question["id"],
        content_contains="Kept",
        timeout=30,
    )

    # Discord's inactivity auto-archive (no audit-log entry): nothing ends either.
    since = rig.discord.mark()
    rig.discord.archive_thread(key, user=None)
    question = wait_reply(rig, key, "by Discord after inactivity", since, timeout=30)
    assert rig.tmux.find(key).pane_id == pane and path.is_dir()
    refused = rig.discord.click(question["id"], f"db:arch:remove:{key}", user="bob")
    assert refused["ephemeral"] and rig.tmux.find(key) is not None
    rig.discord.click(question["id"], f"db:arch:stop:{key}")  # the owner decides
    rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=question["id"],
        content_contains="Session stopped",
        timeout=30,
    )
    assert rig.tmux.find(key) is None and path.is_dir()  # stopped; the worktree stays

    # Without View Audit Log even the owner's archive cannot be told apart: asked, not ended.
    since = rig.discord.mark()
    rig.discord.post_message(key, "back to it")
    wait_reply(rig, key, "Model saw: back to it", since)
    rig.discord.settings(audit_log_access=False)
    since = rig.discord.mark()
    rig.discord.archive_thread(key)  # by alice, the owner
    question = wait_reply(rig, key, "someone the bridge cannot tell", since, timeout=30)
    assert rig.tmux.find(key) is not None and path.is_dir()
    assert "View Audit Log" in rig.bot_output()
    rig.discord.click(question["id"], f"db:arch:remove:{key}")
    rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=question["id"],
        content_contains="Removed its worktree",
        timeout=30,
    )
    assert rig.tmux.find(key) is None and not path.exists()


def test_owner_archive_keeps_a_worktree_holding_ignored_files(rig) -> None:
    repo = rig.projects["project-a"]
    make_repo(repo)
    ignore_env_files(repo)
    raw = rig.config()
    raw["servers"][0]["projects"][0]["thread"] = {"isolation": "worktree"}
    rig.write_config(raw)
    rig.api.script(echo())
    rig.start_bot()
    thread = rig.discord.create_thread(rig.ids["project-a"], "Local secrets")
    since = rig.discord.mark()
    rig.discord.post_message(thread["id"], "set things up")
    wait_reply(rig, thread["id"], "Model saw: set things up", since)
    path = repo / ".claude" / "worktrees" / "local-secrets"
    (path / ".env").write_text("API_KEY=only-copy\n")
    (path / "dev.sqlite").write_bytes(b"SQLite format 3\0")
    assert git(path, "status", "--porcelain", "--untracked-files=all") == ""  # looks clean

    since = rig.discord.mark()
    rig.discord.archive_thread(thread["id"])  # by the owner: the session ends
    question = wait_reply(rig, thread["id"], "would lose", since, timeout=30)
    assert ".env" in question["content"] and "dev.sqlite" in question["content"]
    assert rig.tmux.find(thread["id"]) is None
    assert (path / ".env").read_text() == "API_KEY=only-copy\n"
    assert buttons_of(question) == [f"db:wt:remove:{thread['id']}", f"db:wt:keep:{thread['id']}"]
