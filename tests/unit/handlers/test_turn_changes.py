"""The turn's snapshots as the hooks take them: start at the prompt, compare at Stop."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from bridge.handlers import turn_changes
from bridge.state import private_files, runtime
from bridge.state.status_cache import write_status
from bridge_testkit import hook_input

CHANNEL = "1300000000000000001"
REPO = Path(__file__).resolve().parents[3]


def git(path: Path, *args: str) -> None:
    identity = ["-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "-C", str(path), *identity, *args], capture_output=True, check=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    (path / "a.txt").write_text("a\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "initial")
    return path


def context(tmp_path: Path, cwd: Path, session: str = "s-1", progress: bool = True):
    rt = runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()
    event = hook_input("Stop", session_id=session, cwd=cwd)
    home = tmp_path / "bridge-home"
    return SimpleNamespace(
        event=event,
        runtime=rt,
        channel_id=CHANNEL,
        home=str(home),
        project=SimpleNamespace(progress=progress),
        cfg=SimpleNamespace(path=str(home / "config.json")),
        defer=lambda job: job(),
    )  # (as outside a hook process)


def test_a_turn_that_changes_files_is_summed_up_once(tmp_path, repo) -> None:
    ctx = context(tmp_path, repo)
    write_status(ctx.runtime, "s-1", {"cost_usd": 0.25})
    assert turn_changes.cost_so_far(ctx) == 0.25
    turn_changes.at_prompt(ctx)
    (repo / "a.txt").write_text("a\nb\n")
    (repo / "new.txt").write_text("new\n")
    found = turn_changes.at_stop(ctx)
    assert found["summary"] == "📝 2 files changed, +2 −0"
    assert found["files"] == 2 and found["on_reply"] is True  # shorter than a status message
    assert len(found["old"]) == len(found["new"]) == 40
    row = turn_changes.diff_button(CHANNEL, found)
    assert row["components"][0]["custom_id"] == (
        f"db:diff:{CHANNEL}:{found['old'][:20]}:{found['new'][:20]}"
    )
    assert turn_changes.at_stop(ctx) is None  # consumed


def test_an_unfinished_turns_snapshot_is_kept_by_the_next_prompt(tmp_path, repo) -> None:
    ctx = context(tmp_path, repo)
    turn_changes.at_prompt(ctx)
    (repo / "a.txt").write_text("interrupted\n")  # no Stop came (Escape)
    turn_changes.at_prompt(ctx)
    (repo / "b.txt").write_text("b\n")
    found = turn_changes.at_stop(ctx)
    assert found["files"] == 2  # both turns' changes, none lost


def test_another_session_or_no_change_or_no_git_gives_no_summary(tmp_path, repo) -> None:
    ctx = context(tmp_path, repo)
    turn_changes.at_prompt(ctx)
    assert turn_changes.at_stop(context(tmp_path, repo, session="s-2")) is None
    assert turn_changes.at_stop(ctx) is None  # nothing changed
    plain = tmp_path / "plain"
    plain.mkdir()
    other = context(tmp_path, plain)
    turn_changes.at_prompt(other)  # outside git: no git process, no record
    assert private_files.read_json(turn_changes.record_path(other.runtime, CHANNEL)) is None
    assert not turn_changes.in_git_tree(str(plain)) and turn_changes.in_git_tree(str(repo / "x"))
    (plain / "x").write_text("x")
    assert turn_changes.at_stop(other) is None


def test_with_progress_off_the_summary_goes_on_the_reply(tmp_path, repo) -> None:
    ctx = context(tmp_path, repo, progress=False)
    turn_changes.at_prompt(ctx)
    record = turn_changes.record_path(ctx.runtime, CHANNEL)
    data = private_files.read_json(record)
    data["t"] -= 60  # a long turn
    private_files.write_atomic(record, json.dumps(data).encode())
    (repo / "a.txt").write_text("b\n")
    assert turn_changes.at_stop(ctx)["on_reply"] is True
    turn_changes.at_prompt(context(tmp_path, repo))
    data = private_files.read_json(record)
    data["t"] -= 60
    private_files.write_atomic(record, json.dumps(data).encode())
    (repo / "a.txt").write_text("c\n")
    assert turn_changes.at_stop(context(tmp_path, repo))["on_reply"] is False  # the status has it


def test_git_past_its_budget_gives_no_summary_and_no_error(tmp_path, repo, monkeypatch) -> None:
    monkeypatch.setattr(turn_changes, "PROMPT_BUDGET", 0.0)
    ctx = context(tmp_path, repo)
    turn_changes.at_prompt(ctx)  # no time for git: the hook goes on
    record = private_files.read_json(turn_changes.record_path(ctx.runtime, CHANNEL))
    assert "no time left" in record["why"]
    (repo / "a.txt").write_text("changed\n")
    assert turn_changes.at_stop(ctx) is None


def test_stop_knows_at_once_whether_the_reply_must_wait_for_git(tmp_path, repo) -> None:
    ctx = context(tmp_path, repo)
    turn_changes.at_prompt(ctx)
    (repo / "a.txt").write_text("short\n")
    pending = turn_changes.compare_in_background(ctx)
    assert pending.on_reply is True  # a short turn: its reply carries the summary
    assert pending()["summary"] == "📝 1 file changed, +1 −1"

    turn_changes.at_prompt(ctx)
    record = turn_changes.record_path(ctx.runtime, CHANNEL)
    data = private_files.read_json(record)
    data["t"] -= 60
    private_files.write_atomic(record, json.dumps(data).encode())
    (repo / "a.txt").write_text("long\n")
    pending = turn_changes.compare_in_background(ctx)
    assert pending.on_reply is False  # the status message shows it: the reply goes first
    assert pending()["on_reply"] is False

    outside = tmp_path / "plain"
    outside.mkdir()
    pending = turn_changes.compare_in_background(context(tmp_path, outside))
    assert pending.on_reply is False and pending() is None


def test_the_prompt_does_not_wait_for_git_and_no_tool_runs_before_the_snapshot(
    tmp_path, repo
) -> None:
    """The real hooks, with a git that takes 2 s a call (a loaded machine, a large
    repository): UserPromptSubmit answers without waiting for its snapshot (a process of
    its own takes it), the turn's first PreToolUse waits until it is taken, so what the
    tool then writes is the turn's change and nothing before it is."""
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\nsleep 2\nexec {shutil.which("git")} "$@"\n')
    (shim / "git").chmod(0o755)
    home = tmp_path / "bridge-home"
    home.mkdir(mode=0o700)
    (home / "config.json").write_text(
        json.dumps(
            {
                "schemaVersion": 2,
                "servers": [
                    {
                        "discord": {
                            "botToken": "t",
                            "ownerUserId": "100000000000000002",
                            "apiBaseUrl": "http://127.0.0.1:9/api/v10",
                        },
                        "projects": [{"name": "p", "channelId": CHANNEL, "projectPath": str(repo)}],
                    }
                ],
            }
        )
    )
    env = {
        "PATH": f"{shim}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "DISCORD_BRIDGE_CHANNEL_ID": CHANNEL,
    }

    def hook(script: str, event: dict) -> float:
        start = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-I",
                "-S",
                str(REPO / "hooks" / script),
                "--home",
                str(home),
                "--runtime-dir",
                str(tmp_path / "run"),
                "--state-dir",
                str(tmp_path / "state"),
            ],
            input=json.dumps(event).encode(),
            capture_output=True,
            timeout=30,
            cwd=repo,
            env=env,
        )
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        return time.monotonic() - start

    ctx = context(tmp_path, repo)
    record = turn_changes.record_path(ctx.runtime, CHANNEL)
    prompt = hook_input("UserPromptSubmit", session_id="s-1", cwd=repo, prompt="add a line")
    assert hook("session_event.py", prompt) < 2.0  # two git calls of 2 s each: not waited for
    assert private_files.read_json(record) is None  # still being taken
    hook(
        "pre_tool_use.py",
        hook_input(
            "PreToolUse",
            session_id="s-1",
            cwd=repo,
            tool_name="Write",
            tool_use_id="toolu_1",
            tool_input={"file_path": str(repo / "a.txt")},
        ),
    )
    assert private_files.read_json(record)["tree"]  # taken before the tool could write
    (repo / "a.txt").write_text("a\nb\n")  # the tool
    assert turn_changes.at_stop(ctx)["summary"] == "📝 1 file changed, +1 −0"
