"""The runtime dir refuses unsafe places; files are written atomically, links never followed."""

from __future__ import annotations

import os

import pytest

from bridge import fastjson
from bridge.state import runtime


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


def test_write_atomic_replaces_a_planted_link_not_its_target(tmp_path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / "decision.json")
    runtime.write_atomic(str(tmp_path / "decision.json"), b"{}")
    assert victim.read_text() == "precious"
    assert not os.path.islink(tmp_path / "decision.json")
    assert (tmp_path / "decision.json").read_bytes() == b"{}"
    assert os.stat(tmp_path / "decision.json").st_mode & 0o777 == 0o600


def test_read_private_refuses_links(tmp_path) -> None:
    (tmp_path / "real").write_text("x")
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.raises(OSError):
        runtime.read_private(str(tmp_path / "link"))


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
