"""``state/handled-<key>.json``: the last message handled per channel, private, atomic, never
read through a link or from someone else's file; a file the bot cannot trust reads as none."""

from __future__ import annotations

import os
import stat

import pytest

from bridge.state import handled_messages, runtime
from bridge.state.handled_messages import Handled, Typing

KEY = "123456789012345678"


def make_rt(tmp_path) -> runtime.Runtime:
    return runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()


def path_of(rt: runtime.Runtime) -> str:
    return os.path.join(rt.state, f"handled-{KEY}.json")


def test_the_record_comes_back_as_written_private(tmp_path) -> None:
    rt = make_rt(tmp_path)
    record = Handled(1323802873070354440, Typing(1323802873070354441, 12.5, "ab" * 32), [7, 8])
    handled_messages.save(rt, KEY, record)
    assert handled_messages.load(rt, KEY) == record
    assert stat.S_IMODE(os.stat(path_of(rt)).st_mode) == 0o600
    assert [n for n in os.listdir(rt.state) if n.endswith(".tmp")] == []


def test_a_link_planted_at_the_path_is_neither_read_nor_written_through(tmp_path) -> None:
    rt = make_rt(tmp_path)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"last": "5"}')
    os.symlink(target, path_of(rt))
    assert handled_messages.load(rt, KEY) is None
    handled_messages.save(rt, KEY, Handled(9))
    assert target.read_text() == '{"last": "5"}'  # the link was replaced, not followed
    assert not os.path.islink(path_of(rt))
    assert handled_messages.load(rt, KEY) == Handled(9)


@pytest.mark.parametrize(
    "content",
    [
        b'{"last": "12", "typing"',  # torn
        b'{"last": 12}',  # not a snowflake string
        b'{"last": "-3"}',
        b'["12"]',
        b"\xff\xfe",
        b'{"last": "1' + b"0" * 30 + b'"}',  # longer than any snowflake
    ],
)
def test_a_record_of_the_wrong_shape_reads_as_none(tmp_path, content: bytes) -> None:
    rt = make_rt(tmp_path)
    fd = os.open(path_of(rt), os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, content)
    os.close(fd)
    assert handled_messages.load(rt, KEY) is None


def test_bad_parts_of_a_record_are_left_out(tmp_path) -> None:
    rt = make_rt(tmp_path)
    fd = os.open(path_of(rt), os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b'{"last": "12", "typing": {"id": "x"}, "offers": ["3", 4, "../5"]}')
    os.close(fd)
    assert handled_messages.load(rt, KEY) == Handled(12, None, [3])


def test_a_file_others_may_read_or_write_is_not_trusted(tmp_path) -> None:
    rt = make_rt(tmp_path)
    handled_messages.save(rt, KEY, Handled(12))
    os.chmod(path_of(rt), 0o644)
    assert handled_messages.load(rt, KEY) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")
def test_someone_elses_file_is_not_trusted(tmp_path) -> None:
    rt = make_rt(tmp_path)
    handled_messages.save(rt, KEY, Handled(12))
    os.chown(path_of(rt), 65534, 65534)
    assert handled_messages.load(rt, KEY) is None


def test_a_key_that_is_not_a_channel_id_never_becomes_a_path(tmp_path) -> None:
    rt = make_rt(tmp_path)
    with pytest.raises(ValueError):
        handled_messages.save(rt, "../../etc/passwd", Handled(1))
    with pytest.raises(ValueError):
        handled_messages.load(rt, "12/../13")
