"""The runtime and state dirs: where they are, unsafe places refused, an older layout moved."""

from __future__ import annotations

import os

import pytest

from bridge import fastjson
from bridge.state import private_files, runtime


def test_created_private_with_subdirs(tmp_path) -> None:
    rt = runtime.Runtime(str(tmp_path / "rt")).ensure()
    for name in (".", *runtime.SUBDIRS):
        assert os.stat(rt.path(name)).st_mode & 0o777 == 0o700


def test_refuses_symlink(tmp_path) -> None:
    (tmp_path / "real").mkdir(mode=0o700)
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.raises(runtime.UnsafeRuntimeDir, match="symlink"):
        runtime.Runtime(str(tmp_path / "link")).ensure()


def test_refuses_group_or_world_access(tmp_path) -> None:
    (tmp_path / "open").mkdir()
    os.chmod(tmp_path / "open", 0o755)
    with pytest.raises(runtime.UnsafeRuntimeDir, match="chmod 700"):
        runtime.Runtime(str(tmp_path / "open")).ensure()


def test_refuses_other_owner(tmp_path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to create a directory owned by someone else")
    (tmp_path / "theirs").mkdir(mode=0o700)
    os.chown(tmp_path / "theirs", 12345, 12345)
    with pytest.raises(runtime.UnsafeRuntimeDir, match="owned by uid 12345"):
        runtime.Runtime(str(tmp_path / "theirs")).ensure()


def test_default_location_order() -> None:
    assert runtime.runtime_dir_path({"DISCORD_BRIDGE_RUNTIME_DIR": "/x"}) == "/x"
    assert runtime.runtime_dir_path({"XDG_RUNTIME_DIR": "/run/user/1"}) == (
        "/run/user/1/discord-bridge"
    )
    assert runtime.runtime_dir_path({}) == f"/tmp/discord-bridge-{os.getuid()}"


@pytest.mark.parametrize(
    "value",
    [{"a": [1, 2.5, True, None, 'é"\n\t']}, [], {}, "x", 0, -3.25, {"nested": {"k": ["v"]}}],
)
def test_fastjson_round_trips_like_json(value) -> None:
    import json

    assert fastjson.dumps(value) == json.dumps(value)
    assert fastjson.loads(json.dumps(value)) == value


@pytest.mark.parametrize("bad", ["", "{", "[1,]", "{} x", '{"a" 1}'])
def test_fastjson_rejects_bad_input(bad: str) -> None:
    with pytest.raises(ValueError):
        fastjson.loads(bad)


def test_durable_state_lives_in_the_state_dir_and_volatile_state_in_the_runtime_dir(
    tmp_path,
) -> None:
    rt = runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()
    for name in runtime.DURABLE:
        assert rt.path(name) == str(tmp_path / "state" / name)
        assert os.stat(rt.path(name)).st_mode & 0o777 == 0o700
    for name in runtime.VOLATILE:
        assert rt.path(name) == str(tmp_path / "run" / name)
    assert rt.outbox.startswith(str(tmp_path / "state"))
    assert rt.hook_log.startswith(str(tmp_path / "state"))
    assert rt.prompts.startswith(str(tmp_path / "run"))
    assert rt.channel_dir("uploads", "123").startswith(str(tmp_path / "state"))


def test_state_dir_location_order(tmp_path) -> None:
    assert runtime.state_dir_path({"DISCORD_BRIDGE_STATE_DIR": "/s"}) == "/s"
    assert runtime.state_dir_path({"XDG_STATE_HOME": "/h/.st"}) == "/h/.st/discord-bridge"
    home = runtime.user_home()  # from the password database, as the hooks see it, not $HOME
    assert runtime.state_dir_path({"HOME": "/elsewhere"}) == (f"{home}/.local/state/discord-bridge")
    env = {"DISCORD_BRIDGE_RUNTIME_DIR": str(tmp_path / "r"), "HOME": str(tmp_path)}
    rt = runtime.Runtime.from_env(env)
    assert (rt.root, rt.state_root) == (str(tmp_path / "r"), runtime.state_dir_path(env))


def test_durable_files_of_an_older_bridge_move_from_the_runtime_dir_once(tmp_path) -> None:
    old = runtime.Runtime(str(tmp_path / "run")).ensure()  # everything in one folder, as before
    entry = os.path.join(old.outbox, "555", "0001-1-1.json")
    os.makedirs(os.path.dirname(entry), mode=0o700)
    private_files.write_atomic(entry, b'{"payload": {"content": "spooled"}}')
    private_files.write_atomic(os.path.join(old.sessions, "555.json"), b'{"session_id": "s"}')
    private_files.write_atomic(os.path.join(old.prompts, "abc.json"), b"{}")  # volatile: stays
    os.symlink("/etc/passwd", os.path.join(old.state, "evil.json"))  # never followed

    rt = runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()
    moved = rt.move_legacy_state()

    assert sorted(os.path.relpath(p, rt.state_root) for p in moved) == [
        "outbox/555/0001-1-1.json",
        "sessions/555.json",
    ]
    with open(os.path.join(rt.outbox, "555", "0001-1-1.json"), "rb") as handle:
        assert fastjson.loads(handle.read())["payload"]["content"] == "spooled"
    assert not os.path.exists(os.path.join(rt.state, "evil.json"))
    assert not os.path.exists(str(tmp_path / "run" / "outbox"))
    assert os.path.exists(os.path.join(rt.prompts, "abc.json"))
    assert rt.move_legacy_state() == []  # once: nothing left to move


def test_a_tmp_dir_another_user_created_first_is_not_used(tmp_path, monkeypatch) -> None:
    shared_tmp = tmp_path / "tmp"  # this test's own /tmp: runs where the real one has the dir
    shared_tmp.mkdir()
    shared_tmp.chmod(0o1777)
    monkeypatch.setattr(runtime, "SHARED_TMP", str(shared_tmp))
    monkeypatch.setattr(runtime, "user_home", lambda: str(tmp_path))
    shared = str(shared_tmp / f"discord-bridge-{os.getuid()}")
    env: dict[str, str] = {}
    assert runtime.runtime_dir_path(env) == shared  # free: the usual place
    os.mkdir(shared, 0o755)  # as another local user would leave it: not private
    path = runtime.runtime_dir_path(env)
    assert path == str(tmp_path / ".cache" / "discord-bridge" / "runtime")
    rt = runtime.Runtime(path, str(tmp_path / "state")).ensure()
    assert os.stat(rt.root).st_mode & 0o777 == 0o700
    assert os.stat(shared).st_mode & 0o777 == 0o755  # theirs: left as it was


def test_a_spooled_reply_with_files_still_loads_after_the_move(tmp_path) -> None:
    from bridge.discord.outbox import Outbox
    from bridge.discord.post import Post, message_payload

    old = runtime.Runtime(str(tmp_path / "run")).ensure()
    post = Post(message_payload("see file"), [("a.txt", b"A")])
    entry_path = Outbox(old.outbox).enqueue("555", "main", post)
    with open(entry_path, "rb") as handle:  # as an older bridge wrote it:
        legacy = fastjson.loads(handle.read())
    legacy["files"][0]["path"] = entry_path[: -len(".json")] + ".files/0"  # an absolute path
    private_files.write_atomic(entry_path, fastjson.dumps(legacy).encode())
    rt = runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()
    rt.move_legacy_state()
    outbox = Outbox(rt.outbox)
    (path,) = outbox.pending("555")
    _entry, post = outbox.load(path)
    assert post.payload["content"] == "see file" and post.files == [("a.txt", b"A")]
