"""The rig ends what a test left running: a hook's detached job (its own session, out of
tmux's reach) must not post into the next test's channels of the shared emulator."""

from __future__ import annotations

import subprocess
import time

from bridge_testkit.rig import kill_leftovers


def test_a_process_left_working_in_the_tests_folder_is_killed(tmp_path) -> None:
    project, elsewhere = tmp_path / "project-a", tmp_path.parent
    project.mkdir()
    # detached as a hook's job is: its own session, the hook long gone
    subprocess.run(["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $! > pid"], cwd=project)
    pid = int((project / "pid").read_text())
    bystander = subprocess.Popen(["sleep", "300"], cwd=elsewhere)  # another test's, say
    try:
        assert kill_leftovers(tmp_path) == [pid]
        time.sleep(0.1)
        assert not running(pid)
        assert bystander.poll() is None  # only what works inside the test's folder
    finally:
        bystander.kill()
        bystander.wait()


def running(pid: int) -> bool:
    """Alive and not a zombie (killed, it waits for a reaper that may be slow to come)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
