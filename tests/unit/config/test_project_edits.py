"""Adding and removing a project (``/project add | remove``): the checks on what Discord sends,
the config file edit (atomic, every other key kept) and the loaded config the bot runs on."""

from __future__ import annotations

import json
import os
import threading

import pytest

from bridge import config
from bridge.config import projects as edits

OWNER, A, B, NEW = (
    "100000000000000002",
    "100000000000000003",
    "100000000000000004",
    "100000000000000009",
)


def raw_config(a: str, b: str) -> dict:
    return {
        "schemaVersion": 2,
        "servers": [
            {
                "name": "main",
                "discord": {"botToken": "tok", "ownerUserId": OWNER},
                "projects": [
                    {
                        "name": "alpha",
                        "channelId": A,
                        "projectPath": a,
                        "threads": [{"name": "t", "channelId": "100000000000000005"}],
                    },
                    {"name": "beta", "channelId": B, "projectPath": b, "custom": {"x": 1}},
                ],
                "userKey": [1, 2],
            }
        ],
        "unknownTop": "kept",
    }


@pytest.fixture
def dirs(tmp_path):
    a, b, new = tmp_path / "alpha", tmp_path / "beta", tmp_path / "new"
    for d in (a, b, new):
        d.mkdir()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw_config(str(a), str(b)), indent=2))
    return tmp_path, path


def test_check_directory_gives_the_real_path_of_an_existing_directory(tmp_path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "file").write_text("x")
    assert edits.check_directory(f"  {tmp_path}/link  ") == str(real)
    assert edits.check_directory(f"{tmp_path}/real/../real/") == str(real)
    home = os.path.expanduser("~")
    assert edits.check_directory("~") == os.path.realpath(home)
    for bad, why in (
        ("code/app", "not an absolute path"),
        ("", "absolute path"),
        (f"{tmp_path}/missing", "does not exist"),
        (f"{tmp_path}/file", "not a directory"),
        (f"{tmp_path}/real\0", "absolute path"),
        (f"{tmp_path}/re\nal", "absolute path"),
    ):
        with pytest.raises(edits.Refused, match=why):
            edits.check_directory(bad)


def test_the_bridges_own_directories_are_no_project(tmp_path) -> None:
    home = tmp_path / "bridge-home"
    (home / "sub").mkdir(parents=True)
    for inside in (home, home / "sub"):
        with pytest.raises(edits.Refused, match="inside the bridge's own directory"):
            edits.check_not_private(str(inside), [str(tmp_path / "state"), str(home)])
    edits.check_not_private(str(tmp_path), [str(home)])  # holding it is fine (like ~)
    edits.check_not_private(str(tmp_path / "bridge-home2"), [str(home)])


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("My App", "my-app"),
        ("svc: api.v2; #1", "svc-api-v2-1"),
        ("'quoted'\t\"x\"", "quoted-x"),
        ("日本語 プロジェクト", "日本語-プロジェクト"),
        ("under_score--dash", "under_score-dash"),
        ("...", ""),
        ("x" * 150, "x" * 100),
    ],
)
def test_project_name_is_a_discord_channel_and_a_tmux_window_name(given: str, name: str) -> None:
    assert edits.project_name(given) == name
    assert not any(c in name for c in config.FORBIDDEN + " ")


def test_check_new_refuses_a_mapped_directory_or_a_taken_name_but_allows_nesting(dirs) -> None:
    tmp, path = dirs
    cfg = config.load(str(path), env={})
    server = cfg.servers[0]
    (tmp / "alpha-link").symlink_to(tmp / "alpha")
    with pytest.raises(edits.Refused, match="already project \\*\\*alpha\\*\\*"):
        edits.check_new(cfg, server, str(tmp / "alpha"), "x")
    # A project configured through a symlink is found by its real path too.
    raw = raw_config(str(tmp / "alpha-link"), str(tmp / "beta"))
    linked = config.BridgeConfig(raw, env={})
    with pytest.raises(edits.Refused, match="already project"):
        edits.check_new(linked, linked.servers[0], str(tmp / "alpha"), "x")
    with pytest.raises(edits.Refused, match="already named"):
        edits.check_new(cfg, server, str(tmp / "new"), "beta")
    with pytest.raises(edits.Refused, match="name"):
        edits.check_new(cfg, server, str(tmp / "new"), "")
    inner = tmp / "alpha" / "inner"
    inner.mkdir()
    edits.check_new(cfg, server, str(inner), "inner")  # nested: allowed
    assert edits.channel_in_use(cfg, A) == "project **alpha**'s channel"
    assert edits.channel_in_use(cfg, "100000000000000005") == "a thread of project **alpha**"
    assert edits.channel_in_use(cfg, NEW) is None


def test_add_project_appends_to_the_file_and_keeps_everything_else(dirs) -> None:
    tmp, path = dirs
    before = json.loads(path.read_text())
    entry = edits.new_entry("new", NEW, str(tmp / "new"))
    edits.add_project(str(path), 0, entry)
    after = json.loads(path.read_text())
    assert after["servers"][0]["projects"][-1] == entry
    after["servers"][0]["projects"].pop()
    assert after == before
    assert os.stat(path).st_mode & 0o777 == 0o600
    loaded = config.load(str(path), env={})
    assert loaded.project_for_channel(NEW).path == str(tmp / "new")
    # The file is read afresh: what it holds now is refused, and nothing is written.
    text = path.read_text()
    for again, why in (
        (edits.new_entry("other", "100000000000000010", str(tmp / "new")), "already mapped"),
        (edits.new_entry("new", "100000000000000010", str(tmp / "elsewhere")), "named 'new'"),
        (edits.new_entry("other", A, str(tmp / "elsewhere")), "already used"),
    ):
        with pytest.raises(config.ConfigError, match=why) as err:
            edits.add_project(str(path), 0, again)
        assert err.value.path == str(path)
        assert path.read_text() == text


def test_add_project_to_a_v1_file_writes_v2_and_keeps_the_original(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    project = {"name": "a", "channelId": A, "projectPath": str(tmp_path / "a")}
    v1 = {
        "schemaVersion": 1,
        "discord": {"botToken": "tok", "ownerUserId": OWNER},
        "projects": [project],
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(v1))
    edits.add_project(str(path), 0, edits.new_entry("b", B, str(tmp_path)))
    after = json.loads(path.read_text())
    assert after["schemaVersion"] == 2
    assert [p["name"] for p in after["servers"][0]["projects"]] == ["a", "b"]
    assert json.loads((tmp_path / "config.json.v1.bak").read_text()) == v1


def test_remove_project_takes_out_the_entry_and_its_threads_only(dirs) -> None:
    _, path = dirs
    before = json.loads(path.read_text())
    assert edits.remove_project(str(path), 0, A)
    after = json.loads(path.read_text())
    assert after["servers"][0]["projects"] == before["servers"][0]["projects"][1:]
    after["servers"][0]["projects"] = before["servers"][0]["projects"]
    assert after == before
    assert not edits.remove_project(str(path), 0, A)  # no longer there: nothing written
    with pytest.raises(config.ConfigError, match="at least one project"):
        edits.remove_project(str(path), 0, B)
    assert [p["name"] for p in json.loads(path.read_text())["servers"][0]["projects"]] == ["beta"]


def test_concurrent_edits_are_serialised_and_none_is_lost(dirs) -> None:
    tmp, path = dirs
    entries = []
    for i in range(8):
        d = tmp / f"p{i}"
        d.mkdir()
        entries.append(edits.new_entry(f"p{i}", f"1000000000000001{i:02d}", str(d)))
    threads = [threading.Thread(target=edits.add_project, args=(str(path), 0, e)) for e in entries]
    thread_entry = {"name": "bt", "channelId": "100000000000000200"}
    args = (str(path), 0, "beta", thread_entry)
    threads.append(threading.Thread(target=config.append_thread, args=args))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raw = json.loads(path.read_text())
    names = {p["name"] for p in raw["servers"][0]["projects"]}
    assert names == {"alpha", "beta"} | {f"p{i}" for i in range(8)}
    beta = next(p for p in raw["servers"][0]["projects"] if p["name"] == "beta")
    assert beta["threads"] == [{"name": "bt", "channelId": "100000000000000200"}]


def test_map_and_unmap_live_change_what_the_running_bot_finds(dirs) -> None:
    tmp, path = dirs
    cfg = config.load(str(path), env={})
    server = cfg.servers[0]
    entry = edits.new_entry("new", NEW, str(tmp / "new"))
    project = edits.map_live(cfg, server, entry)
    assert cfg.project_for_channel(NEW) is project and project.server is server
    assert cfg.project_for_cwd(str(tmp / "new" / "src")) is project
    assert server.raw["projects"][-1] is entry
    alpha = server.project_for_channel(A)
    edits.unmap_live(server, alpha)
    assert cfg.project_for_channel(A) is None
    assert config.find_channel(server, "100000000000000005") is None  # its threads went too
    assert [p["name"] for p in server.raw["projects"]] == ["beta", "new"]
