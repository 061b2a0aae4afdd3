"""The turn's snapshots as the hooks take them: start at the prompt, compare at Stop."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from bridge.handlers import turn_changes
from bridge.state import private_files, runtime
from bridge.state.status_cache import write_status
from bridge_testkit import hook_input

CHANNEL = "1300000000000000001"


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
    return SimpleNamespace(event=event, runtime=rt, channel_id=CHANNEL, home=str(home),
                           project=SimpleNamespace(progress=progress),
                           cfg=SimpleNamespace(path=str(home / "config.json")))  # fmt: skip


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
