"""Which tmux sockets ``/sessions`` asks, and what it trusts of a Claude Code process: only this
user's private socket directory, only sockets of this user closed to others and answering;
a session id only from the CLI's own record of that very process."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import uuid

from bridge.sessions import machine
from bridge.state import adoptions


def listening_socket(path: str) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    return server


def test_only_live_sockets_of_this_user_closed_to_others_are_asked(tmp_path) -> None:
    directory = tmp_path / f"tmux-{os.geteuid()}"
    directory.mkdir(mode=0o700)
    live = listening_socket(str(directory / "work"))
    os.chmod(directory / "work", 0o660)  # as tmux makes them
    open_to_all = listening_socket(str(directory / "shared"))
    os.chmod(directory / "shared", 0o777)
    stale = listening_socket(str(directory / "killed"))
    stale.close()  # tmux leaves the file of a killed server behind
    (directory / "notes").write_text("not a socket")
    os.symlink(directory / "work", directory / "link")
    try:
        assert machine.user_sockets(str(directory)) == [str(directory / "work")]
        os.chmod(directory, 0o755)  # a directory others may plant sockets in: none of it
        assert machine.user_sockets(str(directory)) == []
    finally:
        live.close()
        open_to_all.close()


def test_a_session_id_is_taken_only_from_that_processs_own_record(tmp_path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        start = machine.proc_start(child.pid)
        assert start is not None and start.isdigit()
        sessions = tmp_path / "sessions"
        sessions.mkdir()
        session_id = str(uuid.uuid4())
        record = sessions / f"{child.pid}.json"
        record.write_text(json.dumps({"sessionId": session_id, "procStart": "1"}))
        assert machine.session_id_of(str(tmp_path), child.pid, start) is None  # a reused pid
        record.write_text(json.dumps({"sessionId": "../../etc/x", "procStart": start}))
        assert machine.session_id_of(str(tmp_path), child.pid, start) is None
        record.write_text(json.dumps({"sessionId": session_id, "procStart": start}))
        assert machine.session_id_of(str(tmp_path), child.pid, start) == session_id
        assert machine.running_conversation(session_id, str(tmp_path)) == child.pid
        child.kill()
        child.wait()
        assert machine.proc_start(child.pid) is None
        assert machine.running_conversation(session_id, str(tmp_path)) is None
    finally:
        child.kill()
        child.wait()


def test_claude_is_found_below_a_shell_in_the_pane(tmp_path) -> None:
    fake = tmp_path / "claude"  # a program named as the native CLI is
    shutil.copy("/bin/sleep", fake)
    shell = subprocess.Popen(["sh", "-c", f"{fake} 30; true"])
    try:
        found = None
        for _ in range(100):
            found = machine.claude_in(shell.pid)
            if found is not None:
                break
            subprocess.run(["sleep", "0.05"])
        assert found is not None and found != shell.pid
        assert machine.is_claude(found)
        os.kill(found, signal.SIGKILL)
    finally:
        shell.kill()
        shell.wait()


def test_adoption_records_take_only_session_ids_and_follow_no_link(tmp_path) -> None:
    from bridge.state import runtime

    rt = runtime.Runtime(str(tmp_path / "run"), str(tmp_path / "state")).ensure()
    assert adoptions.lookup(rt, "../state/x") is None
    assert adoptions.lookup(rt, 42) is None
    session_id = str(uuid.uuid4())
    adoptions.adopt(rt, session_id, "100000000000000003", "app", "100000000000000001")
    assert adoptions.lookup(rt, session_id)["key"] == "100000000000000003"
    adoptions.release(rt, session_id)
    assert adoptions.lookup(rt, session_id)["released"] is True
    other = str(uuid.uuid4())
    (tmp_path / "elsewhere.json").write_text('{"key": "1", "parent_id": "2"}')
    os.symlink(tmp_path / "elsewhere.json", os.path.join(rt.path("adopted"), f"{other}.json"))
    assert adoptions.lookup(rt, other) is None


def test_a_conversation_whose_record_is_being_rewritten_still_counts_as_open(tmp_path) -> None:
    """Claude Code rewrites ``sessions/<pid>.json`` in place: read in that instant it is
    empty, and **Resume in a thread** must not open a second CLI on the same conversation."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        start = machine.proc_start(child.pid)
        sessions = tmp_path / "sessions"
        sessions.mkdir()
        session_id = str(uuid.uuid4())
        record = sessions / f"{child.pid}.json"
        record.write_text("")  # truncated, its new text not written yet
        body = json.dumps({"sessionId": session_id, "procStart": start})
        writer = threading.Timer(0.05, record.write_text, (body,))
        writer.start()
        assert machine.running_conversation(session_id, str(tmp_path)) == child.pid
        writer.join()
    finally:
        child.kill()
        child.wait()
