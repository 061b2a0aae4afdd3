"""Which session a channel or thread is, tmux-safe names, and a worktree removed outside the
bridge (real tmux on a private socket, no Claude Code needed)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from bridge.config import BridgeConfig
from bridge.sessions.manager import SessionManager
from bridge.sessions.targets import SessionTarget, window_label
from bridge.state import private_files, runtime, session_state

PARENT, LISTED, NEW = "100000000000000003", "100000000000000004", "100000000000000077"


def make_config(tmp_path, socket: str) -> BridgeConfig:
    raw = {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "tok", "ownerUserId": "100000000000000002"},
                "tmux": {"session": "unit", "socketName": socket},
                "projects": [
                    {
                        "name": "alpha",
                        "channelId": PARENT,
                        "projectPath": str(tmp_path),
                        "model": "sonnet",
                        "thread": {"isolation": "worktree"},
                        "threads": [{"name": "listed", "channelId": LISTED, "model": "opus"}],
                    }
                ],
            }
        ],
    }
    return BridgeConfig(raw, str(tmp_path / "config.json"), env={})


@pytest.fixture
def manager(tmp_path):
    socket = f"dbunit-{uuid.uuid4().hex[:8]}"
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    cfg = make_config(tmp_path, socket)
    yield SessionManager(cfg, cfg.servers[0], rt)
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    Path(f"/tmp/tmux-{os.getuid()}/{socket}").unlink(missing_ok=True)


def test_targets_of_channel_listed_thread_new_thread_and_unmapped(manager) -> None:
    channel = manager.target_for(PARENT)
    assert (channel.key, channel.thread_id, channel.isolation) == (PARENT, None, "none")
    assert channel.window_name == "alpha"
    listed = manager.target_for(LISTED)
    assert (listed.thread_id, listed.model, listed.isolation) == (LISTED, "opus", "worktree")
    new = manager.target_for(NEW, parent_id=PARENT, name="Ship it: v2.0 ; rm -rf")
    assert new.model == "sonnet" and new.thread_name == "Ship it: v2.0 ; rm -rf"
    assert new.window_name == "alpha-Ship-it-v2-0-rm-rf"
    assert manager.target_for(NEW) is None  # unknown thread, no parent given
    assert manager.target_for(NEW, parent_id="100000000000000099") is None


def test_window_labels_never_carry_tmux_syntax() -> None:
    for name in ("a:b.c;d", "#{pane_id}", "'\"\\\t\n", "..", "   "):
        label = window_label(name, "1323802873070354440")
        assert label and not any(c in label for c in ":.;'\"\\\t\n#{} ")


def test_worktree_removed_outside_ends_the_session_and_tells_the_thread(manager, tmp_path) -> None:
    target = SessionTarget.for_thread(manager.server.projects[0], NEW, "gone", None)
    pane = manager.tmux.start(NEW, target.window_name, str(tmp_path), ["sleep", "60"], {})
    worktree = {
        "name": "gone",
        "path": str(tmp_path / "missing"),
        "branch": "worktree-gone",
        "base": "0" * 40,
        "repo": str(tmp_path),
    }
    manager._record_start(target, pane, worktree["path"], worktree)
    told: list[tuple[str, str]] = []

    async def notify(channel: str, text: str) -> None:
        told.append((channel, text))

    manager.notify = notify
    assert asyncio.run(manager.check_worktrees()) == [NEW]
    assert manager.tmux.find(NEW) is None
    record = session_state.load(manager.runtime, NEW)
    assert record["worktree"] is None and record["wanted"] == "stopped"
    assert [c for c, _ in told] == [NEW] and "removed outside the bridge" in told[0][1]
    assert asyncio.run(manager.check_worktrees()) == []  # told once


def test_worktree_cwd_stays_inside_the_worktree_when_the_project_path_is_a_symlink(
    tmp_path,
) -> None:
    real = tmp_path / "real" / "repo"
    (real / "sub").mkdir(parents=True)
    (real / "sub" / "f.txt").write_text("x\n")
    identity = ["-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "initial"]):
        subprocess.run(["git", "-C", str(real), *identity, *args], check=True, capture_output=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")  # e.g. /tmp → /private/tmp on macOS
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    for path, inside in (
        (tmp_path / "link" / "repo", ""),
        (tmp_path / "link" / "repo" / "sub", "sub"),
    ):
        cfg = make_config(tmp_path, "unused")
        cfg.servers[0].projects[0].path = str(path)
        manager = SessionManager(cfg, cfg.servers[0], rt)
        target = manager.target_for(NEW, parent_id=PARENT, name="linked")
        cwd, worktree = manager._prepare_cwd(target)
        assert os.path.realpath(worktree["path"]).startswith(str(real / ".claude" / "worktrees"))
        assert cwd == os.path.join(worktree["path"], inside).rstrip("/")
        assert os.path.isdir(cwd)


def test_closing_a_thread_removes_its_worktree_under_the_session_lock(
    manager, tmp_path, monkeypatch
) -> None:
    """A message arriving right after the archive (it un-archives the thread) waits for the
    clean-up, instead of starting Claude Code in a worktree about to be removed."""
    from types import SimpleNamespace

    from bridge.bot.control.threads import ThreadEvents
    from bridge.sessions import worktrees

    repo = tmp_path / "repo"
    repo.mkdir()
    identity = ["-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    (repo / "a.txt").write_text("a\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "initial"]):
        subprocess.run(["git", "-C", str(repo), *identity, *args], check=True, capture_output=True)
    worktree = worktrees.add(str(repo), f"t-{NEW}")
    target = SessionTarget.for_thread(manager.server.projects[0], NEW, "t", None)
    pane = manager.tmux.start(NEW, target.window_name, worktree["path"], ["sleep", "60"], {})
    manager._record_start(target, pane, worktree["path"], worktree)
    held: list[bool] = []
    remove = worktrees.remove

    def watched_remove(wt: dict, force: bool = False) -> None:
        held.append(manager.lock(NEW).locked())
        remove(wt, force)

    monkeypatch.setattr(worktrees, "remove", watched_remove)
    events = ThreadEvents(SimpleNamespace(), manager)
    asyncio.run(events.closed(NEW, PARENT, deleted=False))
    assert held == [True]
    assert not os.path.exists(worktree["path"]) and manager.tmux.find(NEW) is None


def test_a_worktree_removed_while_the_bot_was_down_is_not_recreated_on_restart(
    manager, tmp_path
) -> None:
    import json

    from bridge.sessions import worktrees
    from bridge.state import session_record

    repo = tmp_path / "repo"
    repo.mkdir()
    identity = ["-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    (repo / "a.txt").write_text("a\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "initial"]):
        subprocess.run(["git", "-C", str(repo), *identity, *args], check=True, capture_output=True)
    manager.server.projects[0].path = str(repo)
    target = manager.target_for(NEW, parent_id=PARENT, name="t")
    worktree = worktrees.add(str(repo), worktrees.worktree_name("t", NEW))
    pane = manager.tmux.start(NEW, target.window_name, worktree["path"], ["sleep", "60"], {})
    manager._record_start(target, pane, worktree["path"], worktree)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n")
    session = {"session_id": "abc", "transcript_path": str(transcript)}
    private_files.write_atomic(
        session_record.record_path(manager.runtime, NEW), json.dumps(session).encode()
    )
    # Bot down; Claude exits; the owner removes the worktree and its branch by hand.
    manager.tmux.kill(pane.pane_id)
    worktrees.remove(worktree, force=True)
    told: list[str] = []

    async def notify(channel: str, text: str) -> None:
        told.append(channel)

    manager.notify = notify
    asyncio.run(manager.restore())
    assert not os.path.exists(worktree["path"])  # not brought back to resume into
    assert manager.tmux.find(NEW) is None
    assert asyncio.run(manager.check_worktrees()) == [NEW]
    assert told == [NEW]  # the thread is told its session ended


def test_a_thread_keeps_the_worktree_and_branch_it_was_given(manager, tmp_path) -> None:
    """A thread's worktree is named once, when it is made: a thread of an older bridge keeps
    its ``<name>-<thread id>`` branch, a renamed thread keeps its branch, and a worktree folder
    deleted by hand is made again on the thread's own branch (its commits still there)."""
    from bridge.sessions import worktrees
    from bridge_testkit.gitrepo import git, make_repo

    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    manager.server.projects[0].path = str(repo)
    old = worktrees.add(str(repo), worktrees.worktree_name("Old work", NEW))  # an older bridge's
    session_state.update(manager.runtime, NEW, worktree=old)
    renamed = manager.target_for(NEW, parent_id=PARENT, name="Renamed since")
    (repo / ".git" / "info" / "exclude").write_text("")  # as an older bridge left it
    assert git(repo, "status", "--porcelain") == "?? .claude/\n"
    assert manager._prepare_cwd(renamed) == (old["path"], old)
    assert git(repo, "status", "--porcelain") == ""  # hidden at its next start
    git(
        Path(old["path"]),
        "-c",
        "user.name=T",
        "-c",
        "user.email=t@example.invalid",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "thread work",
    )
    git(repo, "worktree", "remove", "--force", old["path"])  # the folder, by hand
    cwd, again = manager._prepare_cwd(renamed)
    assert again["branch"] == f"worktree-old-work-{NEW}" and cwd == old["path"]
    assert git(Path(cwd), "log", "-1", "--format=%s").strip() == "thread work"
    fresh = manager.target_for(LISTED)  # a thread with no worktree yet: named after it
    assert manager._prepare_cwd(fresh)[1]["branch"] == "worktree-listed"


def test_stopping_a_session_closes_the_prompts_its_hooks_left_open(manager, tmp_path) -> None:
    """A Claude Code ended while its PermissionRequest hook waits leaves that hook running a
    little (it looks for its Claude Code once a second): its request must not hold the keys of
    the channel's next session (a project removed and another added in its channel had its
    first message refused as "asking for permission")."""
    from bridge.state import decisions
    from bridge.state.decision_records import Request

    manager.tmux.start(PARENT, "alpha", str(tmp_path), ["sleep", "600"], {})
    hook = subprocess.Popen(["sleep", "60"])  # the hook, orphaned but alive
    try:
        request = Request.from_dict(
            {
                "id": decisions.new_id(),
                "kind": "permission",
                "channel_id": PARENT,
                "pid": hook.pid,
                "deadline": time.time() + 600,
                "tool_name": "Bash",
                "tool_input": {"command": "touch x"},
            }
        )
        decisions.write_request(manager.runtime, request)
        other = Request.from_dict(
            {**request.to_dict(), "id": decisions.new_id(), "channel_id": LISTED}
        )
        decisions.write_request(manager.runtime, other)
        assert decisions.asking(manager.runtime, PARENT, 30)  # the key gate would refuse
        assert asyncio.run(manager.stop(PARENT))
        assert decisions.asking(manager.runtime, PARENT, 30) == []
        assert decisions.asking(manager.runtime, LISTED, 30)  # another session's stays open
    finally:
        hook.kill()
