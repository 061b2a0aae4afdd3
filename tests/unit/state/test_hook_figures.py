"""``hook-figures``: the hooks append only while a bot reads; the bot reads strictly."""

from __future__ import annotations

import os

from bridge.state import hook_figures, private_files
from bridge.state.runtime import Runtime


def note(tmp_path, kind: str, name: str, value: float) -> None:
    """What a hook does (bridge/handlers/context.py, bridge/discord/delivery.py)."""
    private_files.append_if_there(Runtime(str(tmp_path)).hook_figures, f"{kind} {name} {value}\n")


def reader_in(tmp_path) -> hook_figures.FigureReader:
    return hook_figures.FigureReader(Runtime(str(tmp_path)).hook_figures)


def test_hooks_append_nothing_while_no_bot_reads(tmp_path) -> None:
    note(tmp_path, "hook", "Stop", 0.5)
    assert not os.path.exists(Runtime(str(tmp_path)).hook_figures)


def test_the_bot_reads_what_was_appended_once_and_only_well_formed_lines(tmp_path) -> None:
    reader = reader_in(tmp_path)
    reader.start()
    assert os.stat(reader.path).st_mode & 0o777 == 0o600
    note(tmp_path, "hook", "Stop", 0.25)
    note(tmp_path, "post", "direct", 2)
    with open(reader.path, "a") as handle:  # forged or broken lines are dropped
        handle.write("post elsewhere 1\nhook a/b 1\nhook Stop nan\nhook Stop 1e9\nrm -rf / x\n")
        handle.write("hook Notification 0.1")  # not ended yet: read with its newline
    assert reader.read() == [("hook", "Stop", 0.25), ("post", "direct", 2.0)]
    assert reader.read() == []
    with open(reader.path, "a") as handle:
        handle.write("\n")
    assert reader.read() == [("hook", "Notification", 0.1)]
    reader.stop()
    assert not os.path.exists(reader.path)


def test_a_large_file_is_started_afresh_without_losing_a_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(hook_figures, "ROTATE_BYTES", 100)
    reader = reader_in(tmp_path)
    reader.start()
    for _ in range(10):
        note(tmp_path, "hook", "Stop", 1)
    assert len(reader.read()) == 10
    assert os.path.getsize(reader.path) == 0
    note(tmp_path, "hook", "Stop", 1)
    assert len(reader.read()) == 1
