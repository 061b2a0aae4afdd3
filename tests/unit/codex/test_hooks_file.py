"""``hooks install`` writes the bridge's commands into Codex's hooks.json (the same scripts as
Claude Code's, for the events Codex has), keeps the user's own entries, and uninstall takes
exactly its own out again."""

from __future__ import annotations

import json
import sys

from bridge.claude import settings
from bridge.cli import main
from bridge.codex import hooks_file

USER = {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say"}]}]}}


def test_install_writes_codex_events_beside_the_users_and_uninstall_removes_them(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    (tmp_path / "codex-home").mkdir()
    path = tmp_path / "codex-home" / "hooks.json"
    path.write_text(json.dumps(USER))
    assert main(["hooks", "install", "--settings", str(tmp_path / "claude.json")]) == 0
    written = json.loads(path.read_text())["hooks"]
    assert set(written) == set(hooks_file.EVENTS)
    assert written["Stop"][0] == USER["hooks"]["Stop"][0]  # the user's, first and unchanged
    (stop,) = [h for g in written["Stop"] for h in g["hooks"] if settings.is_ours(h)]
    assert stop["command"].startswith(f"{sys.executable} -I -S ")
    assert "/hooks/stop.py " in stop["command"] and stop["timeout"] == 60
    (ask,) = written["PermissionRequest"][0]["hooks"]
    assert "/hooks/permission_request.py " in ask["command"] and ask["timeout"] > 900
    assert hooks_file.install(str(path)) is False  # twice: nothing changes
    assert main(["hooks", "uninstall", "--settings", str(tmp_path / "claude.json")]) == 0
    assert json.loads(path.read_text()) == USER


def test_install_leaves_codex_alone_where_it_was_never_set_up(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert main(["hooks", "install", "--settings", str(tmp_path / "claude.json")]) == 0
    assert not (tmp_path / ".codex").exists()
