"""Thread settings: which session a channel is, the 3-layer merge, and appending a thread to
the config file without changing anything else in it."""

from __future__ import annotations

import copy
import difflib
import json

import pytest

from bridge import config

PARENT, THREAD, OTHER = "100000000000000003", "100000000000000004", "100000000000000005"
RAW = {
    "schemaVersion": 2,
    "servers": [
        {
            "name": "main",
            "discord": {"botToken": "tok", "ownerUserId": "100000000000000002"},
            "projects": [
                {
                    "name": "alpha",
                    "channelId": PARENT,
                    "projectPath": "/srv/alpha",
                    "model": "sonnet",
                    "permission": "acceptEdits",
                    "thread": {"model": "haiku", "isolation": "worktree"},
                    "threads": [
                        {
                            "name": "t",
                            "channelId": THREAD,
                            "permission": "plan",
                            "projectPath": "/srv/alpha-two",
                        },
                    ],
                },
                {"name": "beta", "channelId": OTHER, "projectPath": "/srv/beta"},
            ],
            "userKey": {"kept": [1, 2]},
        }
    ],
    "unknownTop": "kept",
}


def load(raw: dict = RAW) -> config.BridgeConfig:
    return config.BridgeConfig(copy.deepcopy(raw), env={})


def test_find_channel_tells_project_channels_and_listed_threads_apart() -> None:
    server = load().servers[0]
    project, entry = config.find_channel(server, PARENT)
    assert project.name == "alpha" and entry is None
    project, entry = config.find_channel(server, int(THREAD))
    assert project.name == "alpha" and entry.name == "t" and entry.channel_id == THREAD
    assert config.find_channel(server, "100000000000000099") is None


def test_a_listed_thread_reads_as_a_typed_entry() -> None:
    alpha, beta = load().servers[0].projects
    (entry,) = alpha.threads
    assert isinstance(entry, config.ThreadEntry) and beta.threads == []
    assert (entry.channel_id, entry.name, entry.path) == (THREAD, "t", "/srv/alpha-two")
    # Left out of the entry: None here, the project's thread defaults in thread_settings.
    assert (entry.model, entry.permission, entry.isolation, entry.startup) == (
        None,
        "plan",
        None,
        False,
    )
    assert entry.raw == RAW["servers"][0]["projects"][0]["threads"][0]


def test_merge_thread_entry_over_project_thread_over_project() -> None:
    alpha, beta = load().servers[0].projects
    listed = config.thread_settings(alpha, alpha.threads[0])
    assert listed == {
        "model": "haiku",  # project.thread beats the project
        "permission": "plan",  # threads[i] beats both
        "isolation": "worktree",
        "projectPath": "/srv/alpha-two",  # threads[i] may move it
        "agent": "claude",  # the project's (the default)
    }
    new = config.thread_settings(alpha, None)
    assert new == {
        "model": "haiku",
        "permission": "acceptEdits",
        "isolation": "worktree",
        "projectPath": "/srv/alpha",
        "agent": "claude",
    }
    own_model = config.ThreadEntry({"channelId": THREAD, "model": "opus"})
    assert config.thread_settings(beta, own_model) == {
        "model": "opus",
        "permission": None,
        "isolation": "none",
        "projectPath": "/srv/beta",
        "agent": "claude",
    }


def test_append_thread_adds_one_entry_and_keeps_the_rest_of_the_file(tmp_path) -> None:
    path = tmp_path / "config.json"
    original = json.dumps(RAW, indent=2, ensure_ascii=False) + "\n"
    path.write_text(original)
    entry_id = "100000000000000010"
    entry = {"name": "new thread ✨", "channelId": entry_id}
    assert config.append_thread(str(path), 0, "beta", entry) is True

    text = path.read_text()
    saved = json.loads(text)
    expected = copy.deepcopy(RAW)
    expected["servers"][0]["projects"][1]["threads"] = [entry]
    assert saved == expected
    assert list(saved) == list(RAW)  # key order kept
    # Textually: the new lines, and a comma after the line before them; nothing else.
    diff = list(difflib.unified_diff(original.splitlines(), text.splitlines(), n=0))[2:]
    removed = [line[1:].strip() for line in diff if line.startswith("-")]
    added = [line[1:].strip() for line in diff if line.startswith("+")]
    assert removed == ['"projectPath": "/srv/beta"']
    new_lines = ['"threads": [', "{", '"name": "new thread ✨",', f'"channelId": "{entry_id}"']
    assert added == ['"projectPath": "/srv/beta",', *new_lines, "}", "]"]
    assert (path.stat().st_mode & 0o777) == 0o600
    assert config.append_thread(str(path), 0, "beta", entry) is False  # already listed
    assert path.read_text() == text


def test_append_thread_to_a_v1_file_writes_v2_and_keeps_the_original(tmp_path, caplog) -> None:
    server = copy.deepcopy(RAW["servers"][0])
    del server["name"]
    v1 = {"schemaVersion": 1, **server, "unknownTop": "kept"}
    path = tmp_path / "config.json"
    text = json.dumps(v1, indent=4)
    path.write_text(text)
    entry = {"name": "new", "channelId": "100000000000000007"}
    with caplog.at_level("WARNING"):
        assert config.append_thread(str(path), 0, "alpha", entry)
    saved = json.loads(path.read_text())
    assert saved["schemaVersion"] == 2
    assert list(saved) == ["schemaVersion", "servers", "userKey", "unknownTop"]  # order kept
    assert saved["servers"][0]["projects"][0]["threads"][-1] == entry
    assert saved["userKey"] == {"kept": [1, 2]}  # unknown keys stay where they were
    backup = tmp_path / "config.json.v1.bak"
    assert backup.read_text() == text
    assert str(backup) in caplog.text and "schemaVersion 1" in caplog.text
    # Written once: the next thread finds v2 and makes no second backup.
    assert config.append_thread(str(path), 0, "alpha", {"channelId": "100000000000000008"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "config.json.v1.bak"]


def test_append_thread_refuses_an_unknown_project(tmp_path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(RAW))
    with pytest.raises(config.ConfigError, match="no longer in the file"):
        config.append_thread(str(path), 0, "gamma", {"name": "x", "channelId": THREAD})


def test_remember_thread_updates_the_loaded_config() -> None:
    cfg = load()
    beta = cfg.servers[0].projects[1]
    config.remember_thread(beta, {"name": "x", "channelId": "100000000000000011"})
    config.remember_thread(beta, {"name": "x", "channelId": "100000000000000011"})
    assert config.find_channel(cfg.servers[0], "100000000000000011")[0] is beta
    assert len(beta.threads) == 1


def test_concurrent_appends_from_two_bots_lose_no_thread(tmp_path, monkeypatch) -> None:
    """Each configured server has its own bot (and its own asyncio lock) in one process;
    their appends to the one config file must not overwrite each other."""
    import threading
    import time

    path = tmp_path / "config.json"
    path.write_text(json.dumps(RAW, indent=2))
    save = config.save_raw

    def slow_save(p: str, raw: dict) -> None:
        time.sleep(0.2)  # a slow disk: the other append reads the file meanwhile
        save(p, raw)

    monkeypatch.setattr(config, "save_raw", slow_save)
    ids = ["100000000000000011", "100000000000000012"]
    workers = [
        threading.Thread(
            target=config.append_thread, args=(str(path), 0, name, {"name": i, "channelId": i})
        )
        for name, i in zip(("alpha", "beta"), ids, strict=True)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    saved = json.loads(path.read_text())
    listed = [t["channelId"] for p in saved["servers"][0]["projects"] for t in p.get("threads", [])]
    assert set(ids) <= set(listed)


def test_an_entry_that_became_another_bots_is_never_edited(tmp_path) -> None:
    """The user reordered the servers (or changed the token) while the bot ran: its index now
    names another bot's entry. The edit is refused with what to do, the file untouched."""
    path = tmp_path / "config.json"
    other = {
        "name": "other",
        "discord": {"botToken": "another bot's token", "ownerUserId": "100000000000000002"},
        "projects": [{"name": "beta", "channelId": "100000000000000099", "projectPath": "/srv/o"}],
    }
    raw = {**copy.deepcopy(RAW), "servers": [other, copy.deepcopy(RAW["servers"][0])]}
    path.write_text(json.dumps(raw, indent=2))
    before = path.read_bytes()
    entry = {"name": "t", "channelId": "100000000000000010"}
    with pytest.raises(config.ConfigError, match=r"servers\[0\] is another bot's entry"):
        config.append_thread(str(path), 0, "beta", entry, token="tok")
    assert path.read_bytes() == before
    assert config.append_thread(str(path), 1, "beta", entry, token="tok")  # its entry now
    assert json.loads(path.read_text())["servers"][1]["projects"][1]["threads"] == [entry]
