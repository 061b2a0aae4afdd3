"""gnsrtk config layouts used as they are: a "global" project at the home directory with
projects nested inside it, and schemaVersion 1 files. Real bot, real CLI, real hooks."""

from __future__ import annotations

import json
from pathlib import Path

from fake_anthropic import echo
from fake_anthropic.claude_cli import TmuxServer, prepare_home


def wait_reply(rig, channel_id: str, contains: str, since: int, timeout: float = 90.0) -> dict:
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
        raise AssertionError(f"{err}\n{rig.diagnostics()}\n{rig.bot_output()[-3000:]}") from None
    return record["message"]


def bot_texts(rig, channel_id: str) -> list[str]:
    bot = rig.ids["bot_id"]
    return [m["content"] for m in rig.discord.messages(channel_id) if m["author"]["id"] == bot]


def own_claude(rig, tmux: TmuxServer, name: str, cwd: Path, prompt: str) -> None:
    """The user's own Claude Code, started by hand (no bridge markers in its environment),
    asked one thing: its hooks find the project by ``cwd`` alone."""
    env = {k: v for k, v in rig.env.items() if not k.startswith("DISCORD_BRIDGE_CHANNEL")}
    tmux.new_session(name, cwd, ["claude"], env=env)
    tmux.wait_ready(name, 60)
    tmux.submit(name, prompt)


def test_nested_projects_route_by_the_longest_project_path(rig, tmp_path) -> None:
    home = rig.claude_home
    inner = home / "code" / "inner"
    (inner / "src").mkdir(parents=True)
    (home / "notes").mkdir()
    prepare_home(home, [home, inner, inner / "src", home / "notes"])  # trusted: no dialog
    raw = rig.config()
    raw["servers"][0]["projects"] = [  # gnsrtk's example: the global project first
        {"name": "global", "channelId": rig.ids["project-b"], "projectPath": "~"},
        {"name": "inner", "channelId": rig.ids["project-a"], "projectPath": str(inner)},
    ]
    rig.write_config(raw)
    rig.api.script(*[echo() for _ in range(3)])
    rig.start_bot()  # refused before ("overlaps")

    # The bot's own session of the inner project runs in its directory, its window its own.
    since = rig.discord.mark()
    rig.post("hello inner", project="project-a")
    wait_reply(rig, rig.ids["project-a"], "Model saw: hello inner", since)
    pane = rig.tmux.find(rig.ids["project-a"])
    assert pane.window_name == "inner"
    assert rig.tmux.current_path(pane.pane_id) == str(inner)
    assert rig.tmux.find(rig.ids["project-b"]) is None

    # Sessions the user started by hand: their hooks have no markers, only a cwd.
    with TmuxServer() as tmux:
        own_claude(rig, tmux, "deep", inner / "src", "from deep inside")
        wait_reply(rig, rig.ids["project-a"], "Model saw: from deep inside", since)
        own_claude(rig, tmux, "notes", home / "notes", "from my notes")
        wait_reply(rig, rig.ids["project-b"], "Model saw: from my notes", since)
    assert not any("from my notes" in t for t in bot_texts(rig, rig.ids["project-a"]))
    assert not any("inside" in t or "inner" in t for t in bot_texts(rig, rig.ids["project-b"]))


def test_schema_version_1_config_runs_and_is_rewritten_as_v2_with_a_backup(rig) -> None:
    server = rig.config()["servers"][0]
    del server["name"]  # gnsrtk's v1 had none
    server["projects"][0]["thread"] = {"permission": "acceptEdits"}
    v1 = {"schemaVersion": 1, "replies": {"footer": False}, **server}
    path = rig.bridge_home / "config.json"
    original = json.dumps(v1, indent=2)
    path.write_text(original)
    rig.api.script(*[echo() for _ in range(2)])
    rig.start_bot()  # refused before (schemaVersion: expected 2)

    parent = rig.ids["project-a"]
    since = rig.discord.mark()
    rig.post("hello old config")
    wait_reply(rig, parent, "Model saw: hello old config", since)  # the hooks read v1 too
    assert path.read_text() == original  # nothing to write yet: the file is left alone

    thread = rig.discord.create_thread(parent, "first thread")
    rig.discord.post_message(thread["id"], "hello from the thread")
    wait_reply(rig, thread["id"], "Model saw: hello from the thread", since)

    saved = json.loads(path.read_text())
    assert saved["schemaVersion"] == 2 and "projects" not in saved and "discord" not in saved
    assert saved["replies"] == {"footer": False}
    (written,) = saved["servers"]
    assert written["discord"] == server["discord"] and written["tmux"] == server["tmux"]
    entry = written["projects"][0]["threads"][0]
    assert entry == {  # its effective settings, as gnsrtk saves them
        "name": "first thread",
        "channelId": thread["id"],
        "projectPath": str(rig.projects["project-a"]),
        "permission": "acceptEdits",
        "isolation": "none",
    }
    backup = rig.bridge_home / "config.json.v1.bak"
    assert backup.read_text() == original
    log = rig.bot_output()
    assert "schemaVersion 1" in log and str(backup) in log
