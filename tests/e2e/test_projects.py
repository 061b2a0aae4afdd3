"""``/project add | remove | list`` from Discord, with the real CLI, tmux, the emulator and the
bot: a project added from Discord gets its channel (or an existing one) and answers there at
once, survives a restart, and a removed one stops and no longer types anything."""

from __future__ import annotations

import json
import os
import time

from bridge_testkit import wait_until
from fake_anthropic import echo, last_user_text, text, tool_use
from fake_anthropic.claude_cli import prepare_home


def run(
    rig, name: str, options: dict | None = None, channel: str = "general", user: str = "alice"
) -> dict:
    """Use a slash command in a channel (a seeded name or an id); the message the user sees
    (the ephemeral answer, or the follow-up that replaced "thinking…")."""
    since = rig.discord.mark()
    result = rig.discord.run_command(rig.ids.get(channel, channel), name, options, user=user)
    assert result["ephemeral"], result
    if result["response_type"] == 4:  # answered at once (a refusal)
        return result["message"]
    assert result["response_type"] == 5, result
    record = rig.discord.wait(
        since=since, kind="message_update", interaction_id=result["interaction_id"], timeout=60
    )
    return record["message"]


def say(rig, *args, **kwargs) -> str:
    return run(rig, *args, **kwargs)["content"]


def file_projects(rig) -> list[dict]:
    raw = json.loads((rig.bridge_home / "config.json").read_text())
    return raw["servers"][0]["projects"]


def bot_said(rig, channel_id: str, since: int, timeout: float = 60, **f) -> dict:
    record = rig.discord.wait(
        since=since,
        kind="message_create",
        channel_id=channel_id,
        author_id=rig.ids["bot_id"],
        timeout=timeout,
        **f,
    )
    return record["message"]


def test_add_a_project_chat_in_its_new_channel_restart_list_and_remove_it(rig, tmp_path) -> None:
    rig.api.script(echo("A: "), echo("B: "))
    new_dir = tmp_path / "code" / "My App"
    new_dir.mkdir(parents=True)
    prepare_home(rig.claude_home, [new_dir], version=rig.claude_version)  # trusted at the desk
    raw = rig.config()
    raw["replies"]["custom"] = {"kept": True}  # a key the bridge does not know
    raw["servers"][0]["generalChannelId"] = rig.ids["general"]  # the control panel
    rig.write_config(raw)
    rig.start_bot()
    panel = bot_said(rig, rig.ids["general"], 0, timeout=30)
    assert "**my-app**" not in panel["content"]

    since = rig.discord.mark()
    answer = say(rig, "project add", {"path": str(new_dir)})
    assert answer.startswith("✅ Added project **my-app**"), answer
    created = rig.discord.wait(since=since, kind="channel_create", timeout=10)["thread"]
    assert created["name"] == "my-app"
    assert created["parent_id"] == rig.ids["category_id"]  # next to the project channels
    channel = created["id"]
    assert f"<#{channel}>" in answer and str(new_dir) in answer
    welcome = bot_said(rig, channel, since, timeout=10)
    assert str(new_dir) in welcome["content"]
    rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=panel["id"],
        content_contains="⚫ **my-app** · stopped",
        timeout=30,
    )

    # In the file at once, the rest of it kept; nothing started.
    entry = file_projects(rig)[-1]
    assert entry == {"name": "my-app", "channelId": channel, "projectPath": str(new_dir)}
    assert json.loads((rig.bridge_home / "config.json").read_text())["replies"]["custom"] == {
        "kept": True
    }
    assert rig.tmux.find(channel) is None

    # The running bot maps it: a message there reaches Claude Code in that directory.
    since = rig.discord.mark()
    rig.discord.post_message(channel, "hello new project")
    # (the turn's status quotes the reply too: "⏳ Working … > A: hello new project")
    wait_until(
        lambda: any(m["content"] == "A: hello new project" for m in rig.discord.messages(channel)),
        60,
        "the reply in the new project's channel",
    )
    pane = rig.tmux.find(channel)
    assert pane is not None and pane.window_name == "my-app"
    assert rig.tmux.current_path(pane.pane_id) == str(new_dir)

    listing = say(rig, "project list")
    assert "**3 projects**" in listing, listing
    line = next(x for x in listing.splitlines() if "my-app" in x)
    assert f"<#{channel}>" in line and f"`{new_dir}`" in line, line
    assert line.startswith(("🟢", "🟡")), line  # running: idle, or still finishing its turn
    assert "⚫ **project-a**" in listing and "stopped" in listing

    # A restart loads it from the file: the channel still answers (the session adopted).
    rig.stop_bot()
    rig.start_bot()
    since = rig.discord.mark()
    rig.discord.post_message(channel, "after restart")
    bot_said(rig, channel, since, content_contains="B: after restart")
    assert last_user_text(rig.api.requests[-1]).endswith("after restart")

    # Remove it with its channel: the session stops, the directory stays, the channel goes.
    question = run(rig, "project remove", channel=channel)
    assert "Remove project **my-app**" in question["content"], question
    assert "1 running session" in question["content"]
    since = rig.discord.mark()
    clicked = rig.discord.click(question["id"], f"db:proj:delete:{channel}")
    assert clicked["response_type"] == 6, clicked
    done = rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=question["id"],
        content_contains="Removed",
        timeout=30,
    )["message"]
    assert done["content"].startswith("✅ Removed project **my-app**: stopped 1 session")
    assert not done["components"]
    rig.discord.wait(since=since, kind="channel_delete", channel_id=channel, timeout=30)
    assert rig.tmux.find(channel) is None
    assert new_dir.is_dir()
    assert [p["name"] for p in file_projects(rig)] == ["project-a", "project-b"]


def test_without_manage_channels_an_existing_channel_is_mapped_and_checks_refuse(
    rig, tmp_path
) -> None:
    rig.api.script(text("mapped and answering"))
    new_dir = tmp_path / "svc"
    new_dir.mkdir()
    prepare_home(rig.claude_home, [new_dir], version=rig.claude_version)
    (tmp_path / "a-file").write_text("x")
    raw = rig.config()
    raw["servers"][0]["discord"]["allowedUserIds"] = [rig.ids["carol"]]
    rig.write_config(raw)
    rig.start_bot()
    before = file_projects(rig)

    # What a user could get wrong, each refused with the reason; the file is untouched.
    refusals = {
        "relative/dir": "not an absolute path",
        str(tmp_path / "missing"): "does not exist",
        str(tmp_path / "a-file"): "not a directory",
        str(rig.projects["project-a"]): "already project **project-a**",
        str(rig.state_dir / "outputs"): "inside the bridge's own directory",
    }
    for path, why in refusals.items():
        assert why in say(rig, "project add", {"path": path}), path
    assert "already project **project-b**" in say(
        rig, "project add", {"path": str(new_dir), "channel": rig.ids["project-b"]}
    )
    # Projects are the owner's: an allowed user is refused, someone else too.
    assert say(rig, "project add", {"path": str(new_dir)}, user="carol").startswith("Only this")
    assert say(rig, "project list", user="bob").startswith("Only this")

    # The file cannot take it (the user is editing it by hand): the channel made for it goes.
    path = rig.bridge_home / "config.json"
    good = path.read_text()
    path.write_text(good + "oops")
    since = rig.discord.mark()
    answer = say(rig, "project add", {"path": str(new_dir)})
    assert "Not added" in answer and "not valid JSON" in answer, answer
    made = rig.discord.wait(since=since, kind="channel_create", timeout=10)["channel_id"]
    rig.discord.wait(since=since, kind="channel_delete", channel_id=made, timeout=10)
    assert path.read_text() == good + "oops"
    path.write_text(good)

    # Without Manage Channels: a clear message, nothing created or written.
    rig.discord.settings(manage_channels=False)
    since = rig.discord.mark()
    answer = say(rig, "project add", {"path": str(new_dir), "name": "Svc: API"})
    assert "**Manage Channels**" in answer and "channel:" in answer, answer
    assert file_projects(rig) == before
    assert rig.discord.records(since=since, kind="channel_create") == []

    # Mapping an existing channel needs no permission; the name is cleaned for Discord/tmux.
    answer = say(
        rig,
        "project add",
        {"path": str(new_dir), "name": "Svc: API", "channel": rig.ids["project-c"]},
    )
    assert answer.startswith("✅ Added project **svc-api**"), answer
    assert file_projects(rig)[-1] == {
        "name": "svc-api",
        "channelId": rig.ids["project-c"],
        "projectPath": str(new_dir),
    }
    sent = rig.post("are you there?", project="project-c")
    rig.wait_bot_message("project-c", content_contains="mapped and answering", timeout=60)
    rig.wait_reaction(sent)
    assert rig.tmux.find(rig.ids["project-c"]).window_name == "svc-api"


def test_remove_asks_then_stops_the_session_and_unmaps_the_channel(rig) -> None:
    rig.api.script(text("b is running"), text("b's thread too"), text("a still works"))
    rig.start_bot()
    rig.post("start b", project="project-b")
    rig.wait_bot_message("project-b", content_contains="b is running", timeout=60)
    thread = rig.discord.create_thread(rig.ids["project-b"], "side task")["id"]
    since = rig.discord.mark()
    rig.discord.post_message(thread, "work here too")
    bot_said(rig, thread, since, content_contains="b's thread too")
    assert rig.pane("project-b") is not None and rig.tmux.find(thread) is not None

    question = run(rig, "project remove", channel="project-b")
    assert "Remove project **project-b**" in question["content"], question
    assert "2 running sessions" in question["content"], question
    ids = {c["custom_id"] for row in question["components"] for c in row["components"]}
    key = rig.ids["project-b"]
    assert ids == {f"db:proj:{a}:{key}" for a in ("remove", "delete", "cancel")}
    # Only the owner's click counts; Cancel changes nothing.
    refused = rig.discord.click(question["id"], f"db:proj:remove:{key}", user="bob")
    assert refused["ephemeral"] and refused["message"]["content"].startswith("Only this")
    rig.discord.click(question["id"], f"db:proj:cancel:{key}")
    assert rig.pane("project-b") is not None and len(file_projects(rig)) == 2

    # By name, from another channel (the way to remove a project whose channel is gone).
    offered = rig.discord.autocomplete(
        rig.ids["general"], "project remove", {"project": "b"}, "project"
    )
    assert [c["value"] for c in offered["choices"]] == ["project-b"], offered
    offered = rig.discord.autocomplete(
        rig.ids["general"], "project remove", {"project": ""}, "project", user="bob"
    )
    assert offered["choices"] == [], offered
    question = run(rig, "project remove", {"project": "project-b"})
    assert f"<#{key}>" in question["content"], question
    since = rig.discord.mark()
    assert rig.discord.click(question["id"], f"db:proj:remove:{key}")["response_type"] == 6
    done = rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=question["id"],
        content_contains="Removed",
        timeout=30,
    )["message"]
    assert "stopped 2 sessions" in done["content"] and "untouched" in done["content"]
    wait_until(lambda: rig.pane("project-b") is None, 10, "project-b's pane to close")
    assert rig.tmux.find(thread) is None  # its thread's session stopped too
    assert [p["name"] for p in file_projects(rig)] == ["project-a"]
    assert rig.projects["project-b"].is_dir()
    assert key in {c["id"] for c in rig.discord.channels()}  # the channel stays

    # Unmapped: a message there types nothing, while project-a still answers.
    ignored = rig.post("anyone?", project="project-b")
    rig.post("hello a")
    rig.wait_bot_message(content_contains="a still works", timeout=60)
    assert rig.pane("project-b") is None
    assert rig.discord.reactions(key, ignored["id"]) == []
    assert "not one of this bot's projects" in say(rig, "project remove", channel="project-b")
    listing = say(rig, "project list")
    assert "**1 project**" in listing and "project-b" not in listing, listing
    # The last project stays: a config needs one.
    assert "only project" in say(rig, "project remove", channel="project-a")


def command_lines(pid: int) -> list[str]:
    """The command lines of process ``pid`` and every process under it."""
    children: dict[int, list[int]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(name))
    lines, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/cmdline", "rb") as handle:
                lines.append(handle.read().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
        todo += children.get(current, [])
    return lines


def test_removing_a_project_ends_its_queue_schedules_and_conversation(rig, tmp_path) -> None:
    """The channel mapped again to another folder starts clean: its old conversation is not
    resumed there, its queued prompt is not typed, its schedule is gone and never fires."""
    rig.api.script(
        echo("Old saw: "),
        tool_use(
            "Bash", {"command": "python3 -c 'import time; time.sleep(90)'", "description": "Wait"}
        ),
        echo("New saw: "),
        echo("New saw: "),
        echo("New saw: "),
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    prepare_home(rig.claude_home, [elsewhere], version=rig.claude_version)
    rig.start_bot()
    channel = rig.ids["project-b"]
    rig.post("remember the word pineapple", project="project-b")
    rig.wait_bot_message("project-b", content_contains="Old saw: remember", timeout=60)
    record_file = rig.state_dir / "sessions" / f"{channel}.json"
    old_session = json.loads(record_file.read_text())["session_id"]

    # A turn that runs on; a prompt queued behind it; a schedule that would start the session.
    rig.wait_reaction(rig.post("run the slow thing", project="project-b"))
    rig.api.wait_requests(2, timeout=60)
    rig.post(">> queued for the old folder", project="project-b")
    notice = rig.wait_bot_message("project-b", content_contains="⏭ Queued (#1)")
    options = {"prompt": "scheduled for the old folder", "delay": "40s", "start": True}
    scheduled = say(rig, "schedule in", options, channel="project-b")
    assert scheduled.startswith("⏰ Scheduled `"), scheduled
    sid = scheduled.split("`")[1]
    due = json.loads((rig.state_dir / "schedules" / f"{sid}.json").read_text())["next_run"]

    # The question says what goes with it; the confirm ends all of it.
    question = run(rig, "project remove", channel="project-b")
    for words in ("1 running session stops", "1 queued prompt", "1 schedule", "1 conversation"):
        assert words in question["content"], question["content"]
    since = removed = rig.discord.mark()
    rig.discord.click(question["id"], f"db:proj:remove:{channel}")
    done = rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=question["id"],
        content_contains="Removed",
        timeout=30,
    )["message"]
    assert "dropped 1 queued prompt" in done["content"], done["content"]
    rig.discord.wait(
        since=since,
        kind="message_update",
        message_id=notice["id"],
        content_contains="✖ Not typed",
        timeout=30,
    )
    wait_until(lambda: rig.pane("project-b") is None, 10, "project-b's pane to close")

    # The same channel, another folder: a new conversation there, nothing of the old one.
    answer = say(rig, "project add", {"path": str(elsewhere), "channel": channel})
    assert answer.startswith("✅ Added project **elsewhere**"), answer
    since = rig.discord.mark()
    rig.post("hello from elsewhere", project="project-b")
    rig.wait_bot_message(
        "project-b", content_contains="New saw: hello from elsewhere", since=since, timeout=90
    )
    pane = rig.pane("project-b")
    assert pane is not None and rig.tmux.current_path(pane.pane_id) == str(elsewhere)
    launched = command_lines(rig.tmux.pane_pid(pane.pane_id))
    assert not [line for line in launched if "--resume" in line], launched
    new_record = json.loads(record_file.read_text())
    assert new_record["session_id"] != old_session
    assert os.path.samefile(new_record["cwd"], elsewhere)
    sent = [json.dumps(r["messages"]) for r in rig.api.requests[2:]]
    assert sent and not [m for m in sent if "pineapple" in m or "old folder" in m], sent

    # The schedule is gone: not listed, no file, and its time passes with nothing typed.
    listed = rig.discord.run_command(channel, "schedule list")["message"]["content"]
    assert "None." in listed and sid not in listed, listed
    assert not (rig.state_dir / "schedules" / f"{sid}.json").exists()
    wait_until(lambda: time.time() > due + 5, 60, "the schedule's time to pass")
    said = [
        r["message"]["content"] for r in rig.discord.records(since=removed, kind="message_create")
    ]
    assert not [n for n in said if "Scheduled prompt `" in n], said  # its note, run or skipped
    assert not [r for r in rig.api.requests if "old folder" in last_user_text(r)]
