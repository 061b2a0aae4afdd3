"""Files in the private dirs are written atomically and read without following links."""

from __future__ import annotations

import os

import pytest

from bridge.state import private_files


def test_write_atomic_replaces_a_planted_link_not_its_target(tmp_path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / "decision.json")
    private_files.write_atomic(str(tmp_path / "decision.json"), b"{}")
    assert victim.read_text() == "precious"
    assert not os.path.islink(tmp_path / "decision.json")
    assert (tmp_path / "decision.json").read_bytes() == b"{}"
    assert os.stat(tmp_path / "decision.json").st_mode & 0o777 == 0o600


def test_read_private_refuses_links(tmp_path) -> None:
    (tmp_path / "real").write_text("x")
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.raises(OSError):
        private_files.read_private(str(tmp_path / "link"))


def test_a_lock_is_a_private_file_beside_the_one_it_guards(tmp_path) -> None:
    with private_files.Lock(str(tmp_path / "routes.json")) as lock:
        assert lock.path == str(tmp_path / ".routes.json.lock")
        assert os.stat(lock.path).st_mode & 0o777 == 0o600
    assert not (tmp_path / "routes.json").exists()  # the guarded file is not touched


def test_a_lock_refuses_a_planted_link_or_a_file_open_to_others(tmp_path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / ".linked.json.lock")
    with pytest.raises(OSError):
        private_files.Lock(str(tmp_path / "linked.json")).__enter__()
    os.symlink(tmp_path / "nowhere", tmp_path / ".dangling.json.lock")
    with pytest.raises(OSError):  # not created through the link either
        private_files.Lock(str(tmp_path / "dangling.json")).__enter__()
    assert victim.read_text() == "precious" and not (tmp_path / "nowhere").exists()
    (tmp_path / ".shared.json.lock").write_text("")
    (tmp_path / ".shared.json.lock").chmod(0o644)
    with pytest.raises(OSError):
        private_files.Lock(str(tmp_path / "shared.json")).__enter__()
    if os.geteuid() == 0:  # someone else's, private to them
        (tmp_path / ".theirs.json.lock").write_text("")
        os.chown(tmp_path / ".theirs.json.lock", 65534, 65534)
        with pytest.raises(OSError):
            private_files.Lock(str(tmp_path / "theirs.json")).__enter__()


def test_a_durable_write_on_the_event_loop_fsyncs_in_a_worker_thread(tmp_path, monkeypatch) -> None:
    """The bot's state modules write durably from its coroutines: the fsyncs (seconds on a
    disk busy flushing: the loop once stalled 40 s) run off the loop's thread, and the file
    is there, whole, as soon as the write returns."""
    import asyncio
    import threading

    synced_on: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced_on.append(threading.get_ident())
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = str(tmp_path / "queued.json")

    async def on_the_loop() -> int:
        private_files.write_atomic(path, b'{"queued": []}')
        with open(path, "rb") as written:
            assert written.read() == b'{"queued": []}'  # readers see it at once
        for _ in range(500):
            if len(synced_on) == 2:  # the file and its folder
                break
            await asyncio.sleep(0.01)
        return threading.get_ident()

    loop_thread = asyncio.run(on_the_loop())
    assert len(synced_on) == 2 and loop_thread not in synced_on, synced_on
    synced_on.clear()
    private_files.write_atomic(path, b"{}")  # no loop on this thread: on disk when it returns
    assert synced_on == [threading.get_ident()] * 2
