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
